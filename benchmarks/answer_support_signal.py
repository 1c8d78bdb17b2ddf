r"""Can the local model tell whether the lines an answer cites support it? A logit probe.

For each question of a generalization run's answer section that was answered (not
refused), the model is shown only the memory lines the answer cites, the question and
the answer, and asked one question: do these lines say that this is the answer? The
probability it gives to "yes" (the server's top log-probabilities of the first answer
token, "yes" and "no" renormalised) is the answer's support score. If the model could
check support, right answers would score above wrong ones (an answer to a question memory
cannot answer, or a wrong answer to one it can): the figure is the ROC AUC of that split
(0.5 = no signal), and what a threshold would keep and refuse.

Three wordings are probed: ``says_answer`` (is this the answer, per the lines), its
opposite ``not_said`` (is the answer missing from the lines), and ``on_topic`` (do the
lines speak of what the question asks about, no answer shown); ``says_answer - not_said``
keeps an answer when the first P(yes) is higher than the second, with no threshold.

Usage::

    python benchmarks/answer_support_signal.py --base-url http://127.0.0.1:8091/v1 \
        --run benchmarks/generalization-run/answers-grounded/journal.jsonl \
        --json benchmarks/answer_support_signal.json
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from yes_no import auc, p_yes  # noqa: E402

PROMPTS = {
    "says_answer": (
        "Memory lines:\n{lines}\n\nQuestion: {question}\nProposed answer: {answer}\n\n"
        "Do the memory lines themselves say that the proposed answer answers this exact "
        "question? Answer yes or no."
    ),
    "not_said": (
        "Memory lines:\n{lines}\n\nQuestion: {question}\nProposed answer: {answer}\n\n"
        "Is the proposed answer missing from the memory lines, or not an answer to this "
        "exact question? Answer yes or no."
    ),
    "on_topic": (
        "Memory lines:\n{lines}\n\nQuestion: {question}\n\n"
        "Do the memory lines speak about exactly what the question asks? Answer yes or no."
    ),
}


def answered(run: Path) -> list[dict[str, Any]]:
    """The run's answered questions: id, language, question, answer, cited lines, right."""
    out = []
    for line in run.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        for q in row.get("questions", []):
            if q["refused"]:
                continue
            out.append(
                {
                    "id": row["id"],
                    "lang": row["lang"],
                    "q": q["q"],
                    "answer": q["answer"],
                    "cited": q.get("cited", []),
                    "right": bool(q["answerable"] and q["correct"]),
                }
            )
    return out


def summarise(rows: Sequence[dict[str, Any]], wording: str) -> dict[str, Any]:
    """AUC of right against wrong answers, and what thresholds keep and refuse."""
    right = [r[wording] for r in rows if r["right"]]
    wrong = [r[wording] for r in rows if not r["right"]]
    out: dict[str, Any] = {"right": len(right), "wrong": len(wrong), "auc": auc(right, wrong)}
    for th in (0.4, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75):
        out[f"at_{th}"] = {
            "right_kept": sum(s >= th for s in right),
            "wrong_refused": sum(s < th for s in wrong),
        }
    return out


def summarise_difference(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """says_answer against its opposite (not_said): kept when the first P(yes) is higher.

    A model that leans to "yes" leans in both questions, so the comparison needs no
    threshold (the rule check's decision, ``agents/ingest/extraction/withholding.py``).
    """
    diff = [(r["says_answer"] - r["not_said"], r["right"]) for r in rows]
    right = [d for d, ok in diff if ok]
    wrong = [d for d, ok in diff if not ok]
    return {
        "right": len(right),
        "wrong": len(wrong),
        "auc": auc(right, wrong),
        "kept_when_higher": {
            "right_kept": sum(d > 0 for d in right),
            "wrong_refused": sum(d <= 0 for d in wrong),
        },
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Score every answered question in each wording; print and optionally save."""
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--base-url", required=True, help="a llama.cpp server (OpenAI API, logprobs)")
    p.add_argument("--run", type=Path, nargs="+", required=True, help="answer-section journals")
    p.add_argument("--json", type=Path, help="also write the figures here")
    args = p.parse_args(argv)
    rows = [r for run in args.run for r in answered(run)]
    for r in rows:
        lines = "\n".join(f"- {c}" for c in r["cited"]) or "(none)"
        for wording, template in PROMPTS.items():
            r[wording] = round(
                p_yes(
                    args.base_url,
                    template.format(lines=lines, question=r["q"], answer=r["answer"]),
                ),
                4,
            )
        print(json.dumps(r, ensure_ascii=False), file=sys.stderr, flush=True)
    result = {
        "command": "python benchmarks/answer_support_signal.py --base-url URL --run "
        + " ".join(str(r) for r in args.run),
        "prompts": PROMPTS,
        "figures": {
            **{w: summarise(rows, w) for w in PROMPTS},
            "says_answer - not_said": summarise_difference(rows),
        },
        "rows": rows,
    }
    print(json.dumps(result["figures"], indent=1))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
