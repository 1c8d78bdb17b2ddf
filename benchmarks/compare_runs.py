"""Paired comparison of two ``locomo_retrieval.py --json`` runs over the same questions.

For each search mode both runs have, and each headline metric (S@5, T@10): the mean
difference B - A over all questions and per category, with a percentile-bootstrap 95%
interval of that paired difference. An interval that contains 0 means the runs are not
told apart by these questions. Both runs must have been made on the same conversations
(the script checks the question count and categories).

Usage::

    python benchmarks/compare_runs.py minilm.json static.json
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lamina_bench.datasets.locomo import CATEGORIES
from lamina_bench.evaluation.bootstrap import bootstrap_mean


def paired(a: dict[str, Any], b: dict[str, Any], metric: str) -> dict[str, str]:
    """``B - A`` of ``metric`` with its interval, over all questions and per category."""
    qa, qb = a["per_question"], b["per_question"]
    if qa["category"] != qb["category"]:
        raise SystemExit("the two runs are not over the same questions (categories differ)")
    diffs = [y - x for x, y in zip(qa[metric], qb[metric], strict=True)]
    out = {"all": bootstrap_mean(diffs).format()}
    for category in sorted(set(qa["category"])):
        subset = [d for d, c in zip(diffs, qa["category"], strict=True) if c == category]
        out[f"{category} {CATEGORIES[category]}"] = bootstrap_mean(subset).format()
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Print one table per mode present in both runs."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("a", type=Path, help="baseline run (--json of locomo_retrieval.py)")
    p.add_argument("b", type=Path, help="candidate run")
    args = p.parse_args(argv)
    a, b = (json.loads(f.read_text(encoding="utf-8")) for f in (args.a, args.b))
    print(
        f"B - A, B = {args.b.name} ({b.get('embedder', '?')}), A = {args.a.name} "
        f"({a.get('embedder', '?')}); bootstrap 95% interval of the paired difference"
    )
    for mode in [m for m in a["modes"] if m in b["modes"]]:
        ra, rb = a["modes"][mode], b["modes"][mode]
        if "per_question" not in ra or "per_question" not in rb:
            raise SystemExit("rerun locomo_retrieval.py: these runs lack per_question scores")
        for metric, label in (("session_recall@5", "S@5"), ("turn_recall@10", "T@10")):
            row = paired(ra, rb, metric)
            cells = " | ".join(f"{k}: {v}" for k, v in row.items())
            print(f"{mode:<7} {label:<5} {cells}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
