"""Embedding speed of each selectable offline embedder on LoCoMo turns (no store, no LLM).

For each embedder in :data:`lamina.embedders.choice.EMBEDDERS` (or those named):
the model's load time, then turns per second embedding the first ``--turns`` LoCoMo turns
(``speaker: text``, the raw index text without date or context) in batches of
``--batch``, best of ``--repeat`` passes. Threads are capped at ``--threads`` (MiniLM's
onnxruntime session and numpy's BLAS), so ``taskset -c 0`` plus ``--threads 1`` measures
one core. The texts are read from the data file at run time, never stored here.

Usage::

    taskset -c 0 nice -n 10 .venv/bin/python benchmarks/embedder_speed.py --threads 1
    .venv/bin/python benchmarks/embedder_speed.py --embedders static --turns 2000 --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

DEFAULT_DATA = Path(__file__).resolve().parent.parent.parent / "shared/data/locomo/locomo10.json"


def turn_texts(data: Path, limit: int) -> list[str]:
    """The first ``limit`` turns of the file as ``speaker: text``."""
    from lamina_bench.datasets.locomo import load_locomo

    out: list[str] = []
    for conv in load_locomo(data):
        out.extend(f"{t.speaker}: {t.text}" for t in conv.turns)
        if len(out) >= limit:
            break
    return out[:limit]


def build(name: str, threads: int) -> Any:
    """The embedder ``name`` with its threads capped."""
    from lamina.embedders.choice import make_embeddings
    from lamina.embedders.minilm import MiniLMEmbeddings, OnnxMiniLM

    if name == "minilm":
        return MiniLMEmbeddings(OnnxMiniLM(threads=threads))
    return make_embeddings(name)


def measure(
    name: str, texts: Sequence[str], batch: int, repeat: int, threads: int
) -> dict[str, Any]:
    """Load time, then the best turns/s over ``repeat`` passes."""
    started = time.perf_counter()
    embeddings = build(name, threads)
    dims = len(embeddings.embed_query("warm-up"))  # loads the model
    load_s = time.perf_counter() - started
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        for i in range(0, len(texts), batch):
            embeddings.embed_documents(list(texts[i : i + batch]))
        best = min(best, time.perf_counter() - started)
    started = time.perf_counter()
    for text in texts[:50]:
        embeddings.embed_query(text)
    query_ms = 1000 * (time.perf_counter() - started) / min(50, len(texts))
    return {
        "embedder": name,
        "dims": dims,
        "load_s": round(load_s, 2),
        "turns": len(texts),
        "seconds": round(best, 2),
        "turns_per_s": round(len(texts) / best, 1),
        "query_ms": round(query_ms, 2),
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Measure and print one line per embedder."""
    from lamina.embedders.choice import EMBEDDERS

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, default=DEFAULT_DATA)
    p.add_argument("--embedders", nargs="*", default=list(EMBEDDERS), choices=list(EMBEDDERS))
    p.add_argument("--turns", type=int, default=500)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--threads", type=int, default=1, help="cap on compute threads")
    p.add_argument("--json", type=Path)
    args = p.parse_args(argv)
    texts = turn_texts(args.data, args.turns)
    rows = []
    print(f"{len(texts)} LoCoMo turns, batch {args.batch}, best of {args.repeat}, "
          f"threads {args.threads}, load average {os.getloadavg()[0]:.1f}")  # fmt: skip
    for name in args.embedders:
        row = measure(name, texts, args.batch, args.repeat, args.threads)
        rows.append(row)
        print(
            f"{name:>8}: {row['dims']} dims, load {row['load_s']} s, "
            f"{row['turns_per_s']} turns/s, one query {row['query_ms']} ms",
            flush=True,
        )
    if args.json:
        args.json.write_text(json.dumps({"load_average": os.getloadavg(), "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    threads = next((a.split("=")[1] for a in sys.argv if a.startswith("--threads=")), None)
    if threads is None and "--threads" in sys.argv:
        threads = sys.argv[sys.argv.index("--threads") + 1]
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, threads or "1")  # before numpy is imported
    sys.exit(main())
