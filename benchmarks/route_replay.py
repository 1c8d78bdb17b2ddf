r"""What a per-question choice between two answered arms would score, with no model call.

``budget_answers.py`` answers every question with every arm. A setting meant for some
questions only is then read from two arms already answered: the questions the rule picks
take the routed arm's answer, the rest keep the base arm's. Rules (by
:mod:`lamina.agents.common.query_analysis`):

* ``aggregation``: an aggregation question that is not about time (issue 31's
  ``aggregation_kinds``: such a question shows facts only);
* ``untimed``: any question not about time (tried first; it did not hold on conv-44).

The routed answers are paired with the base arm's, overall, per conversation and per
category, with the report's bootstrap interval. Each ``--run`` names a journal and the
conversations its run was given, in the same order (its question ids number the
questions of those conversations). A question is analysed against the last turn of its
conversation; the retriever uses the latest stored turn, which only moves where a bare
year lies more than 30 years from it.

Usage::

    python benchmarks/route_replay.py --sessions 10 --rule aggregation --base base --routed facts \
        --run eval-results/budget-answers-42737d6/journal.jsonl conv-41 conv-42 \
        --run eval-results/budget-answers-42737d6/journal-c43-44.jsonl conv-43
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from context_answer_recall import _questions

from lamina.agents.common.query_analysis import analyze_question
from lamina_bench.datasets.locomo import default_locomo_path, load_locomo
from lamina_bench.evaluation.bootstrap import bootstrap_mean

UTC = ZoneInfo("UTC")
RULES = ("aggregation", "untimed")


def _asked(data: Path, conversations: list[str], sessions: int | None) -> dict[str, tuple]:
    """``{qid: (category, question, last session time)}`` as budget_answers numbers them."""
    spec = argparse.Namespace(data=data, conversations=conversations, sessions=sessions)
    last: dict[str, datetime] = {
        c.sample_id: max(t.occurred_at for t in c.turns)
        for c in load_locomo(data, sample_ids=conversations)
    }
    return {
        f"{sample}:{n}": (category, text, last[sample])
        for n, (sample, category, text, _) in enumerate(_questions(spec))
    }


def _interval(values: list[float]) -> dict[str, float | int]:
    return bootstrap_mean(values).as_dict(3)


def picks(rule: str, question: str, reference: datetime) -> bool:
    """Whether ``rule`` routes ``question`` to the routed arm."""
    analysis = analyze_question(question, reference=reference, tz=UTC)
    if rule == "untimed":
        return not analysis.about_time()
    if rule == "aggregation":
        return analysis.gathers()
    raise ValueError(f"unknown rule {rule!r}; use one of {RULES}")


def replay(
    runs: Sequence[tuple[Path, list[str]]],
    *,
    data: Path,
    sessions: int | None,
    base: str,
    routed: str,
    rule: str = "aggregation",
) -> dict[str, object]:
    """The routed choice against the base arm, over the questions both arms answered."""
    rows: list[tuple[str, int, bool, float, float]] = []  # qid, category, picked, base, choice
    for journal, conversations in runs:
        asked = _asked(data, conversations, sessions)
        by_arm: dict[str, dict[str, float]] = defaultdict(dict)
        for line in journal.read_text(encoding="utf-8").splitlines():
            r = json.loads(line)
            if r["qid"] not in asked or asked[r["qid"]][0] != r["category"]:
                raise ValueError(f"{journal} holds {r['qid']}, not a question of {conversations}")
            by_arm[r["arm"]][r["qid"]] = float(r["f1"])
        for qid in sorted(set(by_arm[base]) & set(by_arm[routed])):
            category, text, reference = asked[qid]
            picked = picks(rule, text, reference)
            choice = by_arm[routed][qid] if picked else by_arm[base][qid]
            rows.append((qid, category, picked, by_arm[base][qid], choice))
    if not rows:
        raise ValueError(f"no question was answered by both {base!r} and {routed!r}")
    groups: dict[str, list[float]] = defaultdict(list)
    for qid, category, _, b, c in rows:
        for key in ("all", qid.split(":")[0], f"c{category}"):
            groups[key].append(c - b)
    return {
        "questions": len(rows),
        "routed": sum(picked for _, _, picked, _, _ in rows),
        "base_f1": round(sum(r[3] for r in rows) / len(rows), 3),
        "routed_f1": round(sum(r[4] for r in rows) / len(rows), 3),
        "difference": {key: _interval(values) for key, values in sorted(groups.items())},
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Print the replay as JSON."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, default=default_locomo_path())
    p.add_argument("--sessions", type=int, help="the --sessions the runs were given")
    p.add_argument("--rule", choices=RULES, default="aggregation")
    p.add_argument("--base", required=True, help="the arm kept where the rule does not route")
    p.add_argument("--routed", required=True, help="the arm taken where the rule routes")
    p.add_argument("--run", nargs="+", action="append", required=True, metavar="JOURNAL CONV")
    args = p.parse_args(argv)
    runs = []
    for run in args.run:
        if len(run) < 2:
            p.error("--run takes a journal and the conversations its run was given")
        runs.append((Path(run[0]), run[1:]))
    found = replay(
        runs,
        data=args.data,
        sessions=args.sessions,
        base=args.base,
        routed=args.routed,
        rule=args.rule,
    )
    print(json.dumps(found, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
