r"""Search cost of the LangGraph store (``LaminaStore``) as a namespace grows, no LLM.

One namespace gets N items (a LangMem-style memory each: ``{"text": ...}``), then the
script times ``search`` with a query (limit 10), with a query and a filter, and without
a query, and counts the records each search reads from the lamina store. Embeddings
are lamina's deterministic test embeddings (:class:`~lamina.testing.FakeEmbeddings`,
a bag of hashed words), so the figures are the store's own cost, not the model's.

Usage:
    python benchmarks/langgraph_store_search.py [--sizes 200 2000 10000] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langgraph.store.base import PutOp

from lamina.integrations.langgraph_store import LaminaStore
from lamina.stores import ChromaMemoryStore
from lamina.testing import CountingStore, FakeEmbeddings

WORDS = (
    "apple banana cherry garden house island jungle kite lemon mountain night ocean "
    "piano queen river sun tree violin water yoga"
).split()
DIMS = 64


def measure(size: int, repeats: int) -> dict[str, Any]:
    """Median milliseconds and records read per search kind, for one namespace size."""
    embeddings = FakeEmbeddings(DIMS)
    counting = CountingStore(ChromaMemoryStore.ephemeral(embeddings=embeddings))
    store = LaminaStore(counting, index={"dims": DIMS, "embed": embeddings})  # type: ignore[arg-type]
    ns = ("users", "u1", "memories")
    for start in range(0, size, 500):
        store.batch(
            [
                PutOp(
                    ns,
                    f"k{i}",
                    {"text": f"{WORDS[i % 20]} {WORDS[i * 7 % 20]} note {i}", "n": i % 3},
                )
                for i in range(start, min(size, start + 500))
            ]
        )
    kinds = {
        "query": lambda q: store.search(ns, query=q, limit=10),
        "query+filter": lambda q: store.search(ns, query=q, filter={"n": 1}, limit=10),
        "no query": lambda q: store.search(ns, limit=10),
    }
    out: dict[str, Any] = {"items": size}
    for name, run in kinds.items():
        times, reads = [], []
        for r in range(repeats):
            counting.read = 0
            started = time.perf_counter()
            run(f"{WORDS[r % 20]} river")
            times.append((time.perf_counter() - started) * 1000)
            reads.append(counting.read)
        out[name] = {"p50_ms": round(statistics.median(times), 1), "records_read": max(reads)}
    return out


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--sizes", type=int, nargs="+", default=[200, 2000, 10000])
    p.add_argument("--repeats", type=int, default=15)
    p.add_argument("--json", type=Path)
    args = p.parse_args(argv)
    rows = []
    for size in args.sizes:
        row = measure(size, args.repeats)
        rows.append(row)
        cells = "  ".join(
            f"{k}: {v['p50_ms']} ms, {v['records_read']} read"
            for k, v in row.items()
            if k != "items"
        )
        print(f"{size:>7} items  {cells}", flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
