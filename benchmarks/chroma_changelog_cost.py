"""What the Chroma store's change log costs a single process (issue 62, item 4).

The change log (``stores/changelog.py``) keeps the BM25 mirrors of several processes
coherent: each write claims a slot in a Chroma collection, each search first reads the
slots it has not seen. With Postgres serving the many-process case, this measures what
that costs a process that is alone on its data folder: the share of a warm hybrid search
and of a write spent in the change log's functions (cProfile, cumulative time of the
calls into ``changelog.py`` from outside it), on a persistent Chroma store with
``FakeEmbeddings`` (no model) and one namespace of ``--turns`` raw turns.

The profiler slows every call by about the same factor, so the shares are the figure;
the milliseconds are given for scale and depend on the machine's load.

Usage (``PYTHONPATH`` may point at an export of another commit, ``git archive``)::

    .venv/bin/python benchmarks/chroma_changelog_cost.py --json chroma_changelog_cost.json
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import platform
import pstats
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

NS = "user:alone"
T0 = datetime(2024, 1, 1, tzinfo=UTC)


def batch(start: int, count: int) -> list[Any]:
    """Raw turns ``start .. start+count-1`` of the namespace."""
    from lamina.records import RawTurn

    return [
        RawTurn(
            namespace=NS,
            text=f"turn {i} about greyhounds and the beach, number {i % 97}",
            speaker="Ana",
            session_id=f"s{i // 50}",
            turn_index=i % 50,
            occurred_at=T0 + timedelta(minutes=i),
        )
        for i in range(start, start + count)
    ]


def profiled(call: Callable[[int], object], times: int) -> dict[str, float]:
    """Milliseconds per call, and the part of it spent in the change log."""
    profile = cProfile.Profile()
    t0 = time.perf_counter()
    profile.enable()
    for i in range(times):
        call(i)
    profile.disable()
    total = time.perf_counter() - t0
    in_log = 0.0
    stats: dict[Any, Any] = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    for (path, _line, _name), (_cc, _nc, _tt, cumulative, callers) in stats.items():
        if path.endswith("changelog.py") and not any(
            c[0].endswith("changelog.py") for c in callers
        ):
            in_log += cumulative
    return {
        "calls": times,
        "ms_per_call": round(total / times * 1000, 2),
        "change_log_ms_per_call": round(in_log / times * 1000, 2),
        "change_log_share": round(in_log / total, 3),
    }


def run(turns: int, searches: int) -> dict[str, Any]:
    """Fill one namespace, warm its mirror, then profile searches and writes."""
    from lamina.stores import ChromaMemoryStore
    from lamina.testing import FakeEmbeddings

    root = tempfile.mkdtemp(prefix="lamina-changelog-")
    try:
        store = ChromaMemoryStore.persistent(root, embeddings=FakeEmbeddings())
        for start in range(0, turns, 500):
            store.add(NS, batch(start, min(500, turns - start)))
        store.search("greyhound beach", "raw", NS)  # the mirror is loaded: a warm search
        out = {
            "warm_hybrid_search": profiled(
                lambda i: store.search(f"greyhound beach {i}", "raw", NS), searches
            ),
            "add_1_turn_per_call": profiled(lambda i: store.add(NS, batch(turns + i, 1)), 100),
            "add_100_turns_per_call": profiled(
                lambda i: store.add(NS, batch(turns + 1000 + 100 * i, 100)), 10
            ),
        }
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return out


def main(argv: list[str] | None = None) -> int:
    """Run, print and write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=2000)
    parser.add_argument("--searches", type=int, default=200)
    parser.add_argument("--json")
    parser.add_argument("--commit", help="the commit of the lamina measured, if not a checkout")
    args = parser.parse_args(argv)
    import lamina

    root = Path(lamina.__file__).resolve().parent
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True
    ).stdout.strip()
    load = [round(os.getloadavg()[0], 2)]
    measured = run(args.turns, args.searches)
    load.append(round(os.getloadavg()[0], 2))
    for name, figures in measured.items():
        print(
            f"{name}: {figures['ms_per_call']} ms per call, change log "
            f"{figures['change_log_ms_per_call']} ms ({figures['change_log_share']:.0%})"
        )
    result = {
        "benchmark": "benchmarks/chroma_changelog_cost.py",
        "command": "python " + " ".join(sys.argv),
        "lamina": str(root),
        "commit": args.commit or commit or "not a git checkout",
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count()},
        "load_1min": load,
        "turns": args.turns,
        **measured,
    }
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
