"""Aggregate per-question results into per-system, per-category figures.

Following mem0, the judge score J, token F1 and BLEU-1 cover categories 1-4 ("overall");
LoCoMo's F1 is also given over all five categories, and category 5 has its refusal
accuracy. Results are keyed by the numeric category; both label sets are printed by the
report.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from typing import Any

from .bootstrap import bootstrap_mean
from .records import IngestStep, NodeCost, QuestionResult, merge_costs, total

CATEGORY_NAMES: dict[int, tuple[str, str]] = {
    1: ("multi-hop", "single-hop"),
    2: ("temporal", "temporal"),
    3: ("open-domain", "multi-hop"),
    4: ("single-hop", "open-domain"),
    5: ("adversarial", "adversarial"),
}
"""Category -> (LoCoMo code's name, mem0 paper's name)."""


def _mean(values: Iterable[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return round(statistics.fmean(kept), 4) if kept else None


def metrics(rows: Sequence[QuestionResult]) -> dict[str, Any]:
    """The figures of a group of results (one system, one category or all)."""
    judged = [r for r in rows if r.judge_label is not None]
    answering = [total(r.answering) for r in rows]
    adversarial = [r for r in rows if r.refusal_correct is not None]
    return {
        "questions": len(rows),
        "j": _mean(1.0 if r.judge_label == "CORRECT" else 0.0 for r in judged),
        "judged": len(judged),
        "judge_errors": sum(r.judge_label == "ERROR" for r in judged),
        "mem0_f1": _mean(r.mem0_f1 for r in rows),
        "bleu1": _mean(r.bleu1 for r in rows),
        "locomo_f1": _mean(r.locomo_f1 for r in rows),
        "refusal_accuracy": _mean(1.0 if r.refusal_correct else 0.0 for r in adversarial),
        "refusals": sum(r.refused for r in rows),
        "turn_recall": _mean(r.turn_recall for r in rows),
        "session_recall": _mean(r.session_recall for r in rows),
        "cited_turn_recall": _mean(r.cited_turn_recall for r in rows),
        "tokens_per_question": _mean(float(c.tokens) for c in answering),
        "prompt_tokens_per_question": _mean(float(c.prompt_tokens) for c in answering),
        "calls_per_question": _mean(float(c.calls) for c in answering),
        "context_tokens_per_question": _mean(float(r.context_tokens) for r in rows),
        "latency_s_per_question": _mean(r.latency_s for r in rows),
        "estimated_token_calls": sum(c.estimated_calls for c in answering),
        "unknown_token_calls": sum(c.unknown_calls for c in answering),
        "failures": sum(r.failures for r in rows),
        "fallbacks": sum(r.fallbacks for r in rows),
    }


def _cost_dict(costs: dict[str, NodeCost]) -> dict[str, dict[str, Any]]:
    return {
        node: {**cost.model_dump(), "tokens": cost.tokens, "latency_s": round(cost.latency_s, 3)}
        for node, cost in costs.items()
    }


def construction(ingests: Sequence[IngestStep]) -> dict[str, Any]:
    """Ingest cost per stage: turns, batches, LLM calls and tokens per node."""
    out: dict[str, Any] = {}
    for stage in dict.fromkeys(i.stage for i in ingests):
        steps = [i for i in ingests if i.stage == stage]
        costs = merge_costs(*(i.construction for i in steps))
        whole = total(costs)
        out[stage] = {
            "turns": sum(i.turns for i in steps),
            "batches": len(steps),
            "conversations": len({i.conversation for i in steps}),
            "written": sum(i.written for i in steps),
            "failures": sum(i.failures for i in steps),
            "seconds": round(sum(i.seconds for i in steps), 2),
            "llm_calls": whole.calls,
            "kept_replies": sum(i.kept_replies for i in steps),
            "prompt_tokens": whole.prompt_tokens,
            "completion_tokens": whole.completion_tokens,
            "tokens": whole.tokens,
            "by_node": _cost_dict(costs),
        }
    return out


def paired_difference(
    results: Sequence[QuestionResult], ours: str, theirs: str
) -> dict[str, float | int] | None:
    """LoCoMo F1 of ``ours`` minus ``theirs`` on the category 1-4 questions both answered.

    The mean per-question difference and its 95% bootstrap interval (questions resampled
    in pairs), so a lead of a few hundredths is not read as a win.
    """
    scores: dict[str, dict[str, float]] = {ours: {}, theirs: {}}
    for r in results:
        if r.system in scores and r.category != 5:
            scores[r.system][f"{r.conversation}/{r.qid}"] = r.locomo_f1
    both = sorted(set(scores[ours]) & set(scores[theirs]))
    if not both:
        return None
    diffs = [scores[ours][q] - scores[theirs][q] for q in both]
    return bootstrap_mean(diffs).as_dict()


def summarize(
    results: Sequence[QuestionResult],
    ingests: Sequence[IngestStep],
    systems: Sequence[str],
    paired: Sequence[str] = (),
) -> dict[str, Any]:
    """Per system: overall (categories 1-4), all five, per category, and per-node costs.

    For each system in ``paired``, also its paired LoCoMo F1 difference to every other one.
    """
    out: dict[str, Any] = {"systems": {}, "construction": construction(ingests)}
    for system in systems:
        rows = [r for r in results if r.system == system]
        categories = sorted({r.category for r in rows})
        by_category = {str(c): metrics([r for r in rows if r.category == c]) for c in categories}
        out["systems"][system] = {
            "overall": metrics([r for r in rows if r.category != 5]),
            "all": metrics(rows),
            "by_category": by_category,
            "answering_by_node": _cost_dict(merge_costs(*(r.answering for r in rows))),
            "judging": _cost_dict(merge_costs(*(r.judging for r in rows))),
        }
    out["paired_f1"] = {
        ours: {
            theirs: diff
            for theirs in systems
            if theirs != ours and (diff := paired_difference(results, ours, theirs)) is not None
        }
        for ours in paired
        if ours in systems
    }
    return out
