r"""Re-score a run's answers with their ISO dates written as memories write them, no LLM.

The recall graph's answers pass through
:func:`~lamina.agents.common.formatting.natural_dates` (``2023-07-10`` -> ``10 July
2023``). This script applies it to the answers a ``lamina-bench eval`` journal already holds
for one system (those that count: a redo drops a system's earlier answers) and
prints the LoCoMo F1 of categories 1-4 before and after, beside flat's on the same
questions, with the answers it changes. It re-scores; it answers nothing again.

Usage::

    python benchmarks/natural_dates_rescore.py eval-results/locomo-long-2
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from lamina.agents.common.formatting import natural_dates
from lamina_bench.datasets.locomo import default_locomo_path, load_locomo
from lamina_bench.evaluation.records import Journal, QuestionResult, answers_of
from lamina_bench.evaluation.scoring import locomo_f1


def answers(journal: Path, system: str) -> dict[str, QuestionResult]:
    """The system's answers that count (a redo drops the ones before it), by qid."""
    return {r.qid: r for r in answers_of(Journal(journal).read()) if r.system == system}


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("run", type=Path, help="a lamina-bench eval output folder (its journal.jsonl)")
    p.add_argument("--system", default="lamina")
    p.add_argument("--data", type=Path, default=default_locomo_path())
    args = p.parse_args(argv)
    mine = answers(args.run / "journal.jsonl", args.system)
    flat = answers(args.run / "journal.jsonl", "flat")
    samples = sorted({q.split(":")[0] for q in mine})
    gold = {
        f"{conv.sample_id}:q{n}": q
        for conv in load_locomo(args.data, sample_ids=samples, categories=(1, 2, 3, 4, 5))
        for n, q in enumerate(conv.questions)
    }
    qids = [q for q in mine if q in flat and mine[q].category != 5]
    if not qids:
        raise SystemExit("no category 1-4 question answered by both the system and flat")
    before = after = base = 0.0
    for qid in qids:
        g, said = gold[qid], mine[qid].answer
        old, new = locomo_f1(said, g.answer, g.category), None
        if natural_dates(said) != said:
            new = locomo_f1(natural_dates(said), g.answer, g.category)
            print(
                f"  {qid}: {said!r} -> {natural_dates(said)!r} | gold {g.answer!r} "
                f"| F1 {old:.2f} -> {new:.2f}"
            )
        before += old
        after += old if new is None else new
        base += flat[qid].locomo_f1
    n = len(qids)
    print(f"{args.system}, {n} questions of categories 1-4 also answered by flat:")
    print(f"  as answered {before / n:.3f}, dates rewritten {after / n:.3f}, flat {base / n:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
