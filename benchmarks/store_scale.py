"""Multi-tenant scale benchmark of ``ChromaMemoryStore`` (issue 14).

The same number of raw turns (default 100,000) is spread over 1, 10, 100, 1,000 and
10,000 namespaces. Each layout runs in a fresh child process (this script re-invoked with
an internal flag), so its peak RSS is its own. A child:

1. opens ``ChromaMemoryStore.persistent(<temporary dir>)`` with random unit vectors
   (a deterministic hash of the text seeds each one; no model, as in the issue's table),
   and removes the directory at the end;
2. ingests every namespace's turns with ``store.add`` in batches of ``--batch`` and
   reports turns/s (validation, Chroma upserts and change-log claims; no embedding model);
3. opens a second store on the same client, so no namespace mirror is loaded, and times
   the first hybrid query of ``--cold`` namespaces (the mirror is loaded from Chroma);
4. warms the namespaces it will query, then times ``--queries`` queries per scenario:
   hybrid, dense, time-windowed hybrid (a 90-day window) and speaker-filtered hybrid,
   each on a random namespace of the layout, and reports p50 / p95 / max;
5. searches every namespace once more, so every mirror is loaded at the same time (the
   worst case for memory; ``--no-touch-all`` skips it), and reports peak RSS
   (``ru_maxrss``, before and after that step) and the mirrors' estimated size.

The parent prints one table, the multi-tenant p95 / single-tenant p95 ratio of every
scenario against the 1-namespace layout of the same run, and writes everything as JSON.
Figures from a machine that runs anything else are not comparable; the JSON records the
1-minute load average at the start and end of every layout.

Usage::

    .venv/bin/python benchmarks/store_scale.py --json benchmarks/store_scale.json
    .venv/bin/python benchmarks/store_scale.py --memories 2000 --layouts 1 10 100 --queries 30
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

LAYOUTS = (1, 10, 100, 1_000, 10_000)
SCENARIOS = ("hybrid", "dense", "windowed", "speaker")
WORKER_FLAG = "--_layout"
EPOCH = datetime(2023, 1, 2, 8, 0, tzinfo=UTC)
SPAN_DAYS = 730
WINDOW_DAYS = 90
K = 10


class RandomEmbeddings(Embeddings):
    """A random unit vector per distinct text (seeded by its hash): no model, no download."""

    def __init__(self, dim: int = 384) -> None:
        self.dim = dim
        self.model = f"random-{dim}"

    def _one(self, text: str) -> list[float]:
        seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")
        v = np.random.default_rng(seed).standard_normal(self.dim).astype(np.float32)
        return (v / np.linalg.norm(v)).tolist()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """One random vector per text."""
        return [self._one(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        """One random vector."""
        return self._one(text)


def vocabulary(rng: random.Random, size: int = 6000) -> tuple[list[str], list[float]]:
    """Made-up words with Zipf weights, so queries meet common and rare terms."""
    syllables = "ba ko ri su te mi na lo pe da vu zi go ha ne ta mo ki ru sa".split()
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))))
    ordered = sorted(words)
    rng.shuffle(ordered)
    return ordered, [1.0 / (rank + 1) for rank in range(len(ordered))]


def turns_of(namespace: str, n: int, rng: random.Random, words: Any) -> list[Any]:
    """``n`` raw turns of one namespace: four speakers, sessions of 20, two years."""
    from lamina.records import RawTurn

    vocab, weights = words
    speakers = [f"{namespace.split(':')[-1]}-{s}" for s in ("ana", "ben", "cy", "dee")]
    out = []
    for i in range(n):
        text = " ".join(rng.choices(vocab, weights, k=rng.randint(10, 20)))
        out.append(
            RawTurn(
                namespace=namespace,
                text=text,
                speaker=speakers[i % 4],
                session_id=f"s{i // 20}",
                turn_index=i % 20,
                occurred_at=EPOCH + timedelta(days=SPAN_DAYS * i / max(n, 1), minutes=i % 20),
            )
        )
    return out


def percentiles(ms: list[float]) -> dict[str, float]:
    """p50 / p95 / max of latencies in milliseconds."""
    a = np.asarray(ms, dtype=float)
    if not len(a):
        return {"n": 0}
    return {
        "n": len(a),
        "p50": round(float(np.percentile(a, 50)), 2),
        "p95": round(float(np.percentile(a, 95)), 2),
        "max": round(float(a.max()), 2),
    }


def run_layout(args: argparse.Namespace, namespaces: int) -> dict[str, Any]:
    """One layout, in this (child) process."""
    from lamina.stores import ChromaMemoryStore, TimeWindow

    rng = random.Random(args.seed)
    words = vocabulary(rng)
    load = [round(os.getloadavg()[0], 2)]
    root = tempfile.mkdtemp(prefix="lamina-scale-")
    try:
        store = ChromaMemoryStore.persistent(root, embeddings=RandomEmbeddings(args.dim))
        spaces = [f"tenant:{n:05d}" for n in range(namespaces)]
        per = [args.memories // namespaces + (1 if n < args.memories % namespaces else 0)
               for n in range(namespaces)]  # fmt: skip
        samples: dict[str, list[Any]] = {}
        ingest_s, done = 0.0, 0
        for ns, count in zip(spaces, per, strict=True):
            turns = turns_of(ns, count, rng, words)
            samples[ns] = rng.sample(turns, min(5, len(turns)))
            for i in range(0, len(turns), args.batch):
                start = time.perf_counter()
                store.add(ns, turns[i : i + args.batch])
                ingest_s += time.perf_counter() - start
            done += count
            if args.progress and namespaces >= 100 and spaces.index(ns) % (namespaces // 10) == 0:
                print(f"  [{namespaces}] ingested {done} turns", file=sys.stderr, flush=True)

        fresh = ChromaMemoryStore(
            store.client, embeddings=RandomEmbeddings(args.dim), collection_prefix="lamina"
        )

        def query_for(ns: str) -> str:
            return " ".join(rng.sample(rng.choice(samples[ns]).text.split(), 3))

        warm = turns_of("warmup:0", 20, rng, words)  # one-time costs stay out of the figures
        store.add("warmup:0", warm)
        fresh.search(" ".join(warm[0].text.split()[:3]), "raw", "warmup:0", k=K)

        cold_ms = []
        for ns in rng.sample(spaces, min(args.cold, namespaces)):
            start = time.perf_counter()
            fresh.search(query_for(ns), "raw", ns, k=K)
            cold_ms.append(1000 * (time.perf_counter() - start))

        chosen = [rng.choice(spaces) for _ in range(args.queries)]
        for ns in set(chosen):  # warm every namespace the timed queries will touch
            fresh.search(query_for(ns), "raw", ns, k=K)
        scenarios: dict[str, list[float]] = {s: [] for s in SCENARIOS}
        for ns in chosen:
            sample = rng.choice(samples[ns])
            text = query_for(ns)
            lo = EPOCH + timedelta(days=rng.uniform(0, SPAN_DAYS - WINDOW_DAYS))
            calls = {
                "hybrid": {},
                "dense": {"mode": "dense"},
                "windowed": {"window": TimeWindow.between(lo, lo + timedelta(days=WINDOW_DAYS))},
                "speaker": {"where": {"speaker": sample.speaker}},
            }
            for name, extra in calls.items():
                start = time.perf_counter()
                fresh.search(text, "raw", ns, k=K, **extra)  # type: ignore[arg-type]
                scenarios[name].append(1000 * (time.perf_counter() - start))
        rss_queries = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        touch_s = None
        if args.touch_all:  # the worst case for memory: every namespace mirrored at once
            start = time.perf_counter()
            for ns in spaces:
                fresh.search(query_for(ns), "raw", ns, k=K)
            touch_s = round(time.perf_counter() - start, 1)
        load.append(round(os.getloadavg()[0], 2))
        return {
            "namespaces": namespaces,
            "memories": args.memories,
            "ingest_turns_per_s": round(args.memories / ingest_s, 1),
            "ingest_s": round(ingest_s, 1),
            "cold_first_query_ms": percentiles(cold_ms),
            "latency_ms": {name: percentiles(ms) for name, ms in scenarios.items()},
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "peak_rss_mb_before_touch_all": round(rss_queries, 1),
            "touch_all_s": touch_s,
            "mirrors": len(fresh._mirrors),
            "mirror_estimate_mb": round(fresh._mirrors.nbytes() / 2**20, 1),
            "load_avg_1m": load,
        }
    finally:
        shutil.rmtree(root, ignore_errors=True)


def table(results: list[dict[str, Any]]) -> str:
    """The report as a fixed-width table, with the p95 ratios against 1 namespace."""
    head = f"{'ns':>6} {'turns/s':>8} {'cold p50/p95':>14} "
    head += " ".join(f"{s + ' p50/p95':>17}" for s in SCENARIOS) + f" {'RSS MB':>7}"
    lines = [head]
    for r in results:
        cold = r["cold_first_query_ms"]
        cells = " ".join(
            f"{r['latency_ms'][s]['p50']:>8.1f}/{r['latency_ms'][s]['p95']:<8.1f}"
            for s in SCENARIOS
        )
        lines.append(
            f"{r['namespaces']:>6} {r['ingest_turns_per_s']:>8.1f} "
            f"{cold['p50']:>6.1f}/{cold['p95']:<7.1f} {cells} {r['peak_rss_mb']:>7.1f}"
        )
    single = next((r for r in results if r["namespaces"] == 1), None)
    if single is not None:
        lines.append("multi-tenant p95 / single-tenant p95:")
        for r in results:
            if r is not single:
                ratios = ", ".join(f"{s} {r['ratio_p95'][s]:.2f}" for s in SCENARIOS)
                lines.append(f"  {r['namespaces']:>6} namespaces: {ratios}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run every layout in its own process, print the table, write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--layouts", type=int, nargs="+", default=list(LAYOUTS))
    parser.add_argument("--queries", type=int, default=200, help="timed queries per scenario")
    parser.add_argument("--cold", type=int, default=50, help="cold namespaces timed")
    parser.add_argument("--batch", type=int, default=1024, help="turns per store.add call")
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--seed", type=int, default=20240501)
    parser.add_argument("--json", default=None, help="write the results here")
    parser.add_argument("--progress", action="store_true", help="print ingest progress")
    parser.add_argument(
        "--no-touch-all",
        dest="touch_all",
        action="store_false",
        help="skip searching every namespace once at the end (peak RSS with all mirrors)",
    )
    parser.add_argument(WORKER_FLAG, type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args._layout is not None:
        print(json.dumps(run_layout(args, args._layout)))
        return 0
    results = []
    for namespaces in args.layouts:
        if namespaces > args.memories:
            print(f"skip {namespaces} namespaces: more than --memories", file=sys.stderr)
            continue
        cmd = [sys.executable, __file__, *(argv or sys.argv[1:]), WORKER_FLAG, str(namespaces)]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            print(done.stderr[-4000:], file=sys.stderr)
            return done.returncode
        sys.stderr.write(done.stderr)
        results.append(json.loads(done.stdout.strip().splitlines()[-1]))
    single = next((r for r in results if r["namespaces"] == 1), None)
    for r in results:
        if single is not None:
            r["ratio_p95"] = {
                s: round(r["latency_ms"][s]["p95"] / single["latency_ms"][s]["p95"], 2)
                for s in SCENARIOS
            }
    print(table(results))
    report = {
        "benchmark": "benchmarks/store_scale.py",
        "command": " ".join([os.path.relpath(sys.executable), *sys.argv]),
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform()},
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "results": results,
    }
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=2)
            f.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
