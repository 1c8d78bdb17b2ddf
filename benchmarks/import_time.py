"""Import time of ``import lamina`` (issue 17's target: 0.5 s or less).

Runs ``python -X importtime -c "import lamina"`` ``--runs`` times, each in a fresh
interpreter (after one discarded warm-up run that writes the bytecode caches), reads the
cumulative microseconds of the ``lamina`` line from stderr, and prints the min and
median in seconds, the machine's load average, and the ``--top`` largest cumulative
imports of the last run (nested modules included, so a package and its parts both show).
``--json PATH`` also writes the figures there.

Usage::

    taskset -c 0 nice -n 10 .venv/bin/python benchmarks/import_time.py
    .venv/bin/python benchmarks/import_time.py --runs 20 --json bench-results/import_time.json
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

LINE = re.compile(r"^import time:\s+(\d+)\s+\|\s+(\d+)\s+\|(\s*)(\S+)\s*$")
"""One ``-X importtime`` line: self us, cumulative us, indentation, module name."""

TARGET_S = 0.5
"""Issue 17: ``import lamina`` takes 0.5 s or less."""


def import_times(python: str, module: str) -> list[tuple[int, str]]:
    """``(cumulative microseconds, module)`` for every import of one fresh run."""
    done = subprocess.run(
        [python, "-X", "importtime", "-c", f"import {module}"],
        capture_output=True,
        text=True,
        check=True,
    )
    rows = []
    for line in done.stderr.splitlines():
        match = LINE.match(line)
        if match:
            rows.append((int(match.group(2)), match.group(4)))
    return rows


def cumulative_s(rows: Sequence[tuple[int, str]], module: str) -> float:
    """Seconds the top-level import of ``module`` took, children included."""
    for micros, name in reversed(rows):  # the module's own line comes after its imports
        if name == module:
            return micros / 1e6
    raise SystemExit(f"no -X importtime line for {module!r}: did the import fail?")


def main(argv: Sequence[str] | None = None) -> int:
    """Measure, print the summary; return the exit status."""
    parser = argparse.ArgumentParser(description="Import time of a module, from -X importtime.")
    parser.add_argument("--runs", type=int, default=5, help="timed runs (default 5)")
    parser.add_argument("--module", default="lamina", help="module to import")
    parser.add_argument("--top", type=int, default=10, help="largest imports to list")
    parser.add_argument("--python", default=sys.executable, help="interpreter to run")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")

    import_times(args.python, args.module)  # warm-up: bytecode caches, file system cache
    runs = [import_times(args.python, args.module) for _ in range(args.runs)]
    seconds = [cumulative_s(rows, args.module) for rows in runs]
    median = statistics.median(seconds)
    top = sorted(runs[-1], reverse=True)[: args.top]
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())

    print(f"import {args.module}: {args.runs} fresh interpreters, python -X importtime")
    print(f"  min    {min(seconds):.3f} s")
    print(f"  median {median:.3f} s")
    print(f"  runs   {', '.join(f'{s:.3f}' for s in seconds)}")
    print(f"  load average (1, 5, 15 min): {load} on {os.cpu_count()} CPUs")
    if args.module == "lamina":
        verdict = "met" if median <= TARGET_S else "NOT met"
        print(f"  issue 17 target <= {TARGET_S} s (median): {verdict}")
    print(f"\nlargest cumulative imports of the last run (top {args.top}):")
    for micros, name in top:
        print(f"  {micros / 1e6:8.3f} s  {name}")
    if args.json:
        figures = {
            "module": args.module,
            "runs_s": seconds,
            "min_s": min(seconds),
            "median_s": median,
            "load_average": os.getloadavg(),
            "cpus": os.cpu_count(),
            "largest_imports": [{"module": name, "cumulative_s": us / 1e6} for us, name in top],
        }
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
