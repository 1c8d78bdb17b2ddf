r"""Paired LoCoMo F1 difference between any two systems of one ``lamina-bench eval`` run.

The report pairs lamina with each baseline; this pairs any two systems the run answered
(``derived-oracle`` against ``lamina-retrieval``, a peer against flat...), over the
category 1-4 questions both answered, overall and per category, with the same bootstrap
interval as the report (:func:`lamina_bench.evaluation.summary.paired_difference`). It reads the
run's ``results.json`` (written by every step, ``--interim`` included) and asks no model.

Usage::

    python benchmarks/paired_systems.py eval-results/locomo-long-2 derived-oracle \\
        lamina-retrieval
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from lamina_bench.evaluation.records import QuestionResult
from lamina_bench.evaluation.summary import paired_difference


def _line(label: str, results: list[QuestionResult], ours: str, theirs: str) -> str:
    found = paired_difference(results, ours, theirs)
    if found is None:
        return f"{label}: no question both answered"
    return (
        f"{label}: {found['mean']:+.3f} [{found['ci95_low']:+.3f}, {found['ci95_high']:+.3f}] "
        f"over {found['n']} questions"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Print ``ours - theirs``, overall (c1-4) and per category."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("run", type=Path, help="a lamina-bench eval output folder")
    p.add_argument("ours")
    p.add_argument("theirs")
    args = p.parse_args(argv)
    path = args.run / "results.json"
    if not path.is_file():
        p.error(f"no results.json in {args.run}")
    rows = json.loads(path.read_text(encoding="utf-8"))["questions"]
    results = [QuestionResult.model_validate(r) for r in rows if r.get("kind") == "answer"]
    answered = {r.system for r in results}
    missing = [s for s in (args.ours, args.theirs) if s not in answered]
    if missing:
        p.error(f"{', '.join(missing)} answered nothing in {args.run}")
    print(f"{args.ours} - {args.theirs}, LoCoMo F1, paired 95% bootstrap interval")
    print(_line("c1-4", results, args.ours, args.theirs))
    for category in (1, 2, 3, 4):
        subset = [r for r in results if r.category == category]
        print(_line(f"c{category}", subset, args.ours, args.theirs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
