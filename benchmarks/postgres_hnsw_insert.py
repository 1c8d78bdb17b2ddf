"""What an HNSW index costs a Postgres write, by index parameters (issue 62, Scale: ingest).

The scale benchmark's writers spend nearly all their time inside ``add_embedded``, and
there the server spends it adding each vector to the HNSW index. This measures that part
alone, in SQL: ``--rows`` vectors of the static embedder (256 dimensions, from the same
made-up turns as ``postgres_scale.py``) are loaded into a table per variant, its index is
built (``CREATE INDEX``, timed), then ``--insert`` more rows are inserted 100 per
statement, as the store's batches do, and timed: rows/s of incremental inserts. Variants:
no index, pgvector's defaults (m=16, ef_construction=64, the store's index), m=16 with
ef_construction=32, m=8 with ef_construction=32, and ``halfvec`` with the defaults.

Usage::

    .venv/bin/python benchmarks/postgres_hnsw_insert.py --json postgres_hnsw_insert.json
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent))

from postgres_bench import (  # noqa: E402
    database,
    git_commit,
    machine,
    sentence,
    server_facts,
    vocabulary,
    wait_for_model_lock,
)

VARIANTS: dict[str, tuple[str, str | None]] = {
    "no vector index": ("vector(256)", None),
    "hnsw m=16 ef_construction=64 (pgvector default, the store's)": (
        "vector(256)",
        "USING hnsw (embedding vector_cosine_ops)",
    ),
    "hnsw m=16 ef_construction=32": (
        "vector(256)",
        "USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 32)",
    ),
    "hnsw m=8 ef_construction=32": (
        "vector(256)",
        "USING hnsw (embedding vector_cosine_ops) WITH (m = 8, ef_construction = 32)",
    ),
    "halfvec hnsw m=16 ef_construction=64": (
        "halfvec(256)",
        "USING hnsw (embedding halfvec_cosine_ops)",
    ),
}


def vectors(count: int) -> list[str]:
    """Static-embedder vectors of made-up turns, in pgvector's text form."""
    from lamina.embedders.static import StaticEmbeddings
    from lamina.stores.postgres.rows import vector_literal

    embedder, words, rng = StaticEmbeddings(), vocabulary(), random.Random(62)
    out: list[str] = []
    for start in range(0, count, 1000):
        texts = [sentence(rng, words) for _ in range(min(1000, count - start))]
        out += [vector_literal(v) for v in embedder.embed_documents(texts)]
    return out


def run(dsn: str, rows: int, insert: int) -> dict[str, Any]:
    """Each variant: build on ``rows`` vectors, then time ``insert`` more."""
    data = vectors(rows + insert)
    out: dict[str, Any] = {}
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SET maintenance_work_mem = '512MB'")
        conn.execute("DROP SCHEMA IF EXISTS hnsw_probe CASCADE")
        conn.execute("CREATE SCHEMA hnsw_probe")
        for n, (name, (kind, index)) in enumerate(VARIANTS.items()):
            table = f"hnsw_probe.t{n}"
            conn.execute(f"CREATE TABLE {table} (id bigint, embedding {kind})")
            with conn.cursor().copy(f"COPY {table} (id, embedding) FROM STDIN") as copy:
                for i, v in enumerate(data[:rows]):
                    copy.write_row((i, v))
            t0 = time.perf_counter()
            if index is not None:
                conn.execute(f"CREATE INDEX ON {table} {index}")
            built = time.perf_counter() - t0
            t0 = time.perf_counter()
            for start in range(rows, rows + insert, 100):
                chunk = data[start : start + 100]
                conn.execute(
                    f"INSERT INTO {table} SELECT g, v::{kind} FROM unnest(%s::bigint[], "
                    "%s::text[]) AS u(g, v)",
                    [list(range(start, start + len(chunk))), chunk],
                )
            took = time.perf_counter() - t0
            size = conn.execute("SELECT pg_indexes_size(%s::regclass)", [table]).fetchone()
            out[name] = {
                "build_s": round(built, 1),
                "insert_rows_per_s": round(insert / took, 1),
                "index_mb": round((size[0] if size else 0) / 2**20, 1),
            }
            print(name, out[name], flush=True)
        conn.execute("DROP SCHEMA hnsw_probe CASCADE")
    return out


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, run every variant, write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--insert", type=int, default=5_000)
    parser.add_argument("--dsn", help="a server to use instead of the embedded one")
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    wait_for_model_lock()
    folder = Path(tempfile.mkdtemp(prefix="lamina-pgh-"))
    settings = {"shared_buffers": "2GB", "max_wal_size": "4GB"}
    try:
        with database(args.dsn, folder / "data", settings) as (dsn, _server):
            load = [machine()["load_1min"]]
            variants = run(dsn, args.rows, args.insert)
            load.append(machine()["load_1min"])
            result = {
                "benchmark": "benchmarks/postgres_hnsw_insert.py",
                "command": "python " + " ".join(sys.argv),
                "commit": git_commit(),
                "machine": machine(),
                "server": server_facts(dsn),
                "rows": args.rows,
                "insert": args.insert,
                "load_1min": load,
                "variants": variants,
            }
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
