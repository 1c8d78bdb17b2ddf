"""Search of one large namespace on Postgres: HNSW recall against exact search (issue 62).

Small namespaces never reach the HNSW index: the planner reads their rows by the
``(namespace, ...)`` indexes and sorts them by exact distance. One namespace that holds
most of a table is where the index serves the search, so that is where its build
parameters can cost recall. This loads ``--rows`` turns into one namespace and
``--others`` more over 100-turn namespaces, through the store's batch call
(``add_embedded``, vectors of the static embedder given), with the HNSW index dropped
while loading. First the lexical channel alone: the first ``--hybrid-queries`` queries as
``bm25`` searches of the large namespace (the store's channel, which ranks only the rows of
the query's rare terms there) and through the exhaustive ``ts_rank`` of every row sharing a
term (the channel before issue 62), timed, and each top 10 against the exact BM25 top 10
of the namespace (overlap). Then, for each ``--variants`` ``m:ef_construction``:

1. the store's index is built again with those parameters (``CREATE INDEX``, timed);
2. ``--insert`` turns are written through ``add_embedded`` (100 a call, one writer) into a
   scratch namespace with every index in place: rows/s of the store's write path, then
   deleted again;
3. ``--queries`` dense searches (``store.search(..., mode="dense", k=10)``) of the large
   namespace at each ``hnsw.ef_search`` of ``--ef-search`` (the store sets 100): recall@10
   against the exact top 10 (cosine over every stored vector of the namespace, in numpy)
   and the latency at the app; and the first ``--hybrid-queries`` of them as hybrid
   searches (dense + full text + RRF, the store's ``ef_search``), timed at the app.
   ``EXPLAIN`` of the dense channel's query says whether the HNSW index is used.

Usage::

    .venv/bin/python benchmarks/postgres_large_namespace.py --json
        benchmarks/postgres_large_namespace.json  # (one command line)
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from psycopg import sql

sys.path.insert(0, str(Path(__file__).resolve().parent))

from postgres_bench import (  # noqa: E402
    database,
    git_commit,
    machine,
    percentiles,
    sentence,
    server_facts,
    turns,
    vocabulary,
)

from lamina.records import Granularity  # noqa: E402

RAW = Granularity.RAW
LARGE = "tenant:large"
SCRATCH = "tenant:insert-probe"
INDEX = "raw_records_embedding_idx"


def open_store(dsn: str, schema: str) -> Any:
    """The store on ``dsn`` with the static embedder."""
    from lamina.embedders.static import StaticEmbeddings
    from lamina.stores.postgres import PostgresMemoryStore

    return PostgresMemoryStore.connect(dsn, embeddings=StaticEmbeddings(), schema=schema)


def load(store: Any, namespace: str, count: int, words: Any, seed: int, batch: int) -> None:
    """``count`` turns into ``namespace`` through ``add_embedded``."""
    rng = random.Random(f"{seed}:{namespace}")
    for start in range(0, count, batch):
        records = turns(namespace, start, min(batch, count - start), rng, words)
        store.add_embedded(
            namespace, records, store.embeddings.embed_documents([r.text for r in records])
        )


def rebuild(store: Any, m: int, ef_construction: int) -> float:
    """Build the raw table's HNSW index with ``m`` and ``ef_construction``; seconds taken."""
    with store.pool.connection() as conn:
        conn.execute("SET maintenance_work_mem = '1GB'")
        conn.execute(sql.SQL("DROP INDEX IF EXISTS {}").format(store.names(INDEX)))
        t0 = time.perf_counter()
        conn.execute(
            sql.SQL(
                "CREATE INDEX {} ON {} USING hnsw (embedding vector_cosine_ops) "
                "WITH (m = {}, ef_construction = {})"
            ).format(
                sql.Identifier(INDEX),
                store.names.records(RAW),
                sql.Literal(m),
                sql.Literal(ef_construction),
            )
        )
        conn.commit()
        return time.perf_counter() - t0


def exact_top(matrix: np.ndarray, ids: list[str], query: list[float], k: int) -> list[str]:
    """The ``k`` ids nearest to ``query`` by cosine over ``matrix`` (rows normalised)."""
    q = np.asarray(query, dtype=np.float32)
    q /= np.linalg.norm(q) or 1.0
    scores = matrix @ q
    top = np.argpartition(-scores, k)[:k]
    return [ids[i] for i in top[np.argsort(-scores[top])]]


def stored_matrix(store: Any) -> tuple[np.ndarray, list[str]]:
    """Every vector of the large namespace, normalised, with its ids."""
    with store.pool.connection() as conn:
        rows = conn.execute(
            sql.SQL("SELECT id, embedding::real[] FROM {} WHERE namespace = %s").format(
                store.names.records(RAW)
            ),
            [LARGE],
        ).fetchall()
    ids = [str(r[0]) for r in rows]
    matrix = np.asarray([r[1] for r in rows], dtype=np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True).clip(1e-12)
    return matrix, ids


def uses_index(store: Any, vector: list[float]) -> bool:
    """Whether the dense channel's query on the large namespace scans the HNSW index."""
    from lamina.stores.postgres.rows import vector_literal

    with store.pool.connection() as conn:
        plan = conn.execute(
            sql.SQL(
                "EXPLAIN SELECT t.id, t.embedding <=> %s::vector AS dist FROM {} t "
                "WHERE t.namespace = %s ORDER BY dist LIMIT 60"
            ).format(store.names.records(RAW)),
            [vector_literal(vector), LARGE],
        ).fetchall()
    return INDEX in " ".join(str(r[0]) for r in plan)


def variant(store: Any, m: int, efc: int, args: argparse.Namespace) -> dict[str, Any]:
    """Build, insert and search with one set of index parameters."""
    words = vocabulary()
    build_s = rebuild(store, m, efc)
    rng = random.Random(f"{args.seed}:insert:{m}:{efc}")
    records = turns(SCRATCH, 0, args.insert, rng, words)
    vectors = store.embeddings.embed_documents([r.text for r in records])
    t0 = time.perf_counter()
    for start in range(0, args.insert, 100):
        store.add_embedded(SCRATCH, records[start : start + 100], vectors[start : start + 100])
    insert_s = time.perf_counter() - t0
    store.delete_namespace(SCRATCH)
    with store.pool.connection() as conn:
        conn.autocommit = True
        conn.execute(sql.SQL("VACUUM {}").format(store.names.records(RAW)))
    matrix, ids = stored_matrix(store)
    qrng = random.Random(args.seed)
    queries = [sentence(qrng, words) for _ in range(args.queries)]
    qvecs = store.embeddings.embed_documents(queries)
    exact = [set(exact_top(matrix, ids, v, 10)) for v in qvecs]
    by_ef: dict[str, Any] = {}
    for ef in args.ef_search:
        found, latency = [], []
        for query, truth in zip(queries, exact, strict=True):
            with store.atomic() as conn:
                conn.execute(sql.SQL("SET LOCAL hnsw.ef_search = {}").format(sql.Literal(ef)))
                t0 = time.perf_counter()
                hits = store.search(query, "raw", LARGE, k=10, mode="dense")
                latency.append((time.perf_counter() - t0) * 1000)
            found.append(len({h.record.id for h in hits} & truth) / 10)
        by_ef[str(ef)] = {
            "recall_at_10": round(float(np.mean(found)), 4),
            "min_recall_at_10": round(float(np.min(found)), 2),
            "dense_ms": percentiles(latency),
        }
        print(f"  m={m} ef_construction={efc} ef_search={ef}: {by_ef[str(ef)]}", flush=True)
    hybrid = []
    for query in queries[: args.hybrid_queries]:
        t0 = time.perf_counter()
        store.search(query, "raw", LARGE, k=10)
        hybrid.append((time.perf_counter() - t0) * 1000)
    with store.pool.connection() as conn:
        size = conn.execute(
            sql.SQL("SELECT pg_relation_size({}::regclass)").format(
                sql.Literal(f"{store.names.schema}.{INDEX}")
            )
        ).fetchone()
    return {
        "build_s": round(build_s, 1),
        "insert_rows_per_s": round(args.insert / insert_s, 1),
        "index_mb": round((size[0] if size else 0) / 2**20, 1),
        "hnsw_index_used": uses_index(store, qvecs[0]),
        "dense_by_ef_search": by_ef,
        "hybrid_ms_store_ef_search": percentiles(hybrid),
    }


EXHAUSTIVE = (
    "WITH qc AS MATERIALIZED (SELECT c AS cfg, {at}(c::regconfig, %(q)s) AS tq "
    "FROM unnest(%(languages)s::text[]) c) SELECT t.id FROM {t} t "
    "JOIN qc ON qc.cfg = t.ts_config WHERE t.namespace = %(ns)s AND t.tsv @@ qc.tq "
    "ORDER BY ts_rank(t.tsv, qc.tq, 0) DESC, t.id LIMIT 10"
)
"""The lexical channel before issue 62's gate: ``ts_rank`` of every row sharing a term."""


def bm25_top(store: Any, conn: Any, queries: list[str]) -> list[set[str]]:
    """Exact BM25 (k1 1.5, b 0.75) top 10 of each query over the large namespace's lexemes."""
    import math
    from collections import Counter, defaultdict

    rows = conn.execute(
        sql.SQL(
            "SELECT id, (SELECT array_agg(lexeme || ':' || cardinality(positions)) "
            "FROM unnest(tsv)) FROM {} WHERE namespace = %s"
        ).format(store.names.records(RAW)),
        [LARGE],
    ).fetchall()
    tfs: dict[str, dict[str, int]] = {}
    df: Counter[str] = Counter()
    postings: dict[str, list[str]] = defaultdict(list)
    for rid, pairs in rows:
        tf = {p.rsplit(":", 1)[0]: int(p.rsplit(":", 1)[1]) for p in pairs or []}
        tfs[rid] = tf
        df.update(tf)
        for lexeme in tf:
            postings[lexeme].append(rid)
    n = len(tfs)
    lengths = {rid: sum(tf.values()) for rid, tf in tfs.items()}
    avg = sum(lengths.values()) / n
    out = []
    for query in queries:
        found = conn.execute(
            "SELECT unnest(tsvector_to_array(to_tsvector('english', %s)))", [query]
        ).fetchall()
        scores: Counter[str] = Counter()
        for (lexeme,) in found:
            idf = math.log(1 + (n - df[lexeme] + 0.5) / (df[lexeme] + 0.5))
            for rid in postings.get(lexeme, []):
                tf = tfs[rid][lexeme]
                norm = 1.5 * (0.25 + 0.75 * lengths[rid] / avg)
                scores[rid] += idf * tf * 2.5 / (tf + norm)
        out.append({rid for rid, _ in sorted(scores.items(), key=lambda x: (-x[1], x[0]))[:10]})
    return out


def lexical(store: Any, args: argparse.Namespace) -> dict[str, Any]:
    """The lexical channel of the large namespace: latency, and its top 10 against BM25's.

    The store's ``bm25`` search (the gated channel) and the exhaustive ``ts_rank`` of every
    row sharing a term (:data:`EXHAUSTIVE`) are each compared with the exact BM25 top 10
    of the namespace (computed here from the stored lexemes): the overlap of the sets.
    """
    words = vocabulary()
    qrng = random.Random(args.seed)
    queries = [sentence(qrng, words) for _ in range(args.hybrid_queries)]
    gated, exhaustive, gated_ms, exhaustive_ms = [], [], [], []
    statement = sql.SQL(EXHAUSTIVE).format(at=store.names("any_terms"), t=store.names.records(RAW))
    for query in queries:
        t0 = time.perf_counter()
        hits = store.search(query, "raw", LARGE, k=10, mode="bm25")
        gated_ms.append((time.perf_counter() - t0) * 1000)
        gated.append({h.record.id for h in hits})
        with store.pool.connection() as conn:
            t0 = time.perf_counter()
            rows = conn.execute(
                statement, {"q": query, "languages": store.languages, "ns": LARGE}
            ).fetchall()
            exhaustive_ms.append((time.perf_counter() - t0) * 1000)
        exhaustive.append({str(r[0]) for r in rows})
    with store.pool.connection() as conn:
        reference = bm25_top(store, conn, queries)

    def overlap(found: list[set[str]]) -> float:
        return round(
            float(np.mean([len(f & r) / 10 for f, r in zip(found, reference, strict=True)])), 3
        )

    result = {
        "queries": len(queries),
        "bm25_ms_store": percentiles(gated_ms),
        "exhaustive_ts_rank_ms": percentiles(exhaustive_ms),
        "top10_overlap_with_exact_bm25": {
            "store": overlap(gated),
            "exhaustive_ts_rank": overlap(exhaustive),
        },
    }
    print(f"lexical: {json.dumps(result)}", flush=True)
    return result


def run(dsn: str, args: argparse.Namespace) -> dict[str, Any]:
    """Load once, then measure every variant."""
    store = open_store(dsn, args.schema)
    words = vocabulary()
    with store.pool.connection() as conn:
        conn.execute(sql.SQL("DROP INDEX IF EXISTS {}").format(store.names(INDEX)))
    t0 = time.perf_counter()
    load(store, LARGE, args.rows, words, args.seed, 500)
    for n in range(args.others // 100):
        load(store, f"tenant:{n:05d}", 100, words, args.seed, 100)
    loaded_s = time.perf_counter() - t0
    with store.pool.connection() as conn:
        conn.autocommit = True
        conn.execute(sql.SQL("ANALYZE {}").format(store.names.records(RAW)))
    print(f"loaded {args.rows:,} + {args.others:,} rows in {loaded_s:.0f} s", flush=True)
    lexical_channel = lexical(store, args)
    out: dict[str, Any] = {}
    for spec in args.variants:
        m, efc = (int(x) for x in spec.split(":"))
        load1 = machine()["load_1min"]
        result = variant(store, m, efc, args)
        result["load_1min"] = [load1, machine()["load_1min"]]
        out[f"m={m} ef_construction={efc}"] = result
        print(f"m={m} ef_construction={efc}: {json.dumps(result)}", flush=True)
    store.close()
    return {
        "load_s_without_hnsw": round(loaded_s, 1),
        "lexical_channel": lexical_channel,
        "variants": out,
    }


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, run, write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--others", type=int, default=20_000)
    parser.add_argument("--insert", type=int, default=3_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--hybrid-queries", type=int, default=50)
    parser.add_argument("--variants", nargs="+", default=["16:64", "16:32", "8:64", "8:32"])
    parser.add_argument("--ef-search", type=int, nargs="+", default=[40, 100, 200, 400, 800])
    parser.add_argument("--seed", type=int, default=62)
    parser.add_argument("--dsn", help="a server to use instead of the embedded one")
    parser.add_argument("--schema", default="lamina_large")
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop the server as on Ctrl-C
    folder = Path(tempfile.mkdtemp(prefix="lamina-pgl-"))
    settings = {"shared_buffers": "2GB", "max_wal_size": "4GB"}
    try:
        with database(args.dsn, folder / "data", settings) as (dsn, _server):
            load1 = machine()["load_1min"]
            measured = run(dsn, args)
            result = {
                "benchmark": "benchmarks/postgres_large_namespace.py",
                "command": "python " + " ".join(sys.argv),
                "commit": git_commit(),
                "machine": machine(),
                "load_1min_at_start": load1,
                "server": server_facts(dsn),
                "embedder": "static (wordllama-l2-supercat-256), vectors given to add_embedded",
                "large_namespace_rows": args.rows,
                "other_rows": args.others,
                "queries": args.queries,
                "hybrid_queries": args.hybrid_queries,
                **measured,
            }
            if args.dsn:
                import psycopg

                with psycopg.connect(dsn, autocommit=True) as conn:
                    conn.execute(f"DROP SCHEMA IF EXISTS {args.schema} CASCADE")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(json.dumps({k: v for k, v in result.items() if k != "variants"}, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
