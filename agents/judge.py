"""The Judge node, on both paths.

Write path: flags contradictions between new facts and the facts already stored (AMA's
conflict detection); the Refresher supersedes them. Read path: decides Pass, Retry (with
2-3 complementary queries for what is missing) or Refresh (memories contradict each
other), combining AMA's judge with EverMemOS's sufficiency check.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langgraph.runtime import Runtime

from ..graphs.context import MemoryContext
from ..graphs.state import Conflict, IngestState, RecallState
from ..prompts.construction import CONFLICT
from ..prompts.recall import JUDGE
from ..stores.records import FactRecord
from .deps import NodeDeps, StepLog, context_of
from .formatting import as_data, format_candidates, format_facts
from .recall_schemas import Verdict
from .schemas import ConflictReport

NODE = "judge"


def check_conflicts(log: StepLog, ctx: MemoryContext, new_ids: list[str]) -> list[Conflict]:
    """Compare new facts with similar current facts; return the contradictions found.

    No LLM call is made when no stored fact is similar to any new fact.
    """
    store, ns = log.deps.store, ctx.namespace
    new = [f for f in store.get("fact", ns, new_ids) if isinstance(f, FactRecord)]
    fresh = set(new_ids)
    old: dict[str, FactRecord] = {}
    for fact in new:
        for hit in store.search(
            fact.text, "fact", ns, k=ctx.conflict_k, where={"superseded": False}
        ):
            if hit.record.id not in fresh and isinstance(hit.record, FactRecord):
                old.setdefault(hit.record.id, hit.record)
    if not new or not old:
        return []
    new_text, new_labels = format_facts(new, ctx.tz, prefix="n")
    old_text, old_labels = format_facts(list(old.values()), ctx.tz, prefix="o")
    report = log.ask(
        ConflictReport,
        CONFLICT.format_messages(new_facts=new_text, old_facts=old_text),
        "conflicts",
    )
    if report is None:
        return []
    conflicts, seen = [], set()
    for pair in report.conflicts:
        new_id, old_id = new_labels.get(pair.new), old_labels.get(pair.old)
        if new_id and old_id and old_id not in seen:
            seen.add(old_id)
            conflicts.append(Conflict(old_id=old_id, new_id=new_id, reason=pair.reason))
    return conflicts


def make_judge(deps: NodeDeps) -> Callable[..., dict[str, Any]]:
    """Build the ``judge`` node."""

    def judge(state: IngestState, runtime: Runtime[MemoryContext]) -> dict[str, Any]:
        """Flag stored facts that the facts written in this run contradict."""
        log = StepLog(NODE, deps)
        ctx = context_of(runtime)
        try:
            conflicts = check_conflicts(log, ctx, list(state.get("new_fact_ids", [])))
        except Exception as e:  # never crash the graph on a store or model failure
            log.fail("conflicts", e)
            conflicts = []
        return {"conflicts": conflicts, **log.update()}

    return judge


def make_recall_judge(deps: NodeDeps) -> Callable[..., dict[str, Any]]:
    """Build the recall ``judge`` node: Pass, Retry or Refresh, with what is missing."""

    def judge(state: RecallState, runtime: Runtime[MemoryContext]) -> dict[str, Any]:
        """Decide whether the candidates answer the question (AMA + EverMemOS check)."""
        ctx = context_of(runtime)
        log = StepLog(NODE, deps)
        candidates = state.get("candidates", [])
        memories, labels = format_candidates(candidates, ctx.tz)
        question = as_data(state.get("question", ""))
        messages = JUDGE.format_messages(question=question, memories=memories)
        verdict = log.ask(Verdict, messages, "verdict")
        if verdict is None:  # a failing judge degrades to answering with what was found
            verdict = Verdict(action="pass", reason="judge unavailable; using retrieved memories")
        if verdict.action == "refresh":
            ids = [labels[x] for x in verdict.conflicting if x in labels]
            if len(ids) < 2:  # nothing concrete to reconcile
                verdict = verdict.model_copy(update={"action": "pass"})
        decided = verdict.model_dump()
        decided["conflicting_ids"] = [labels[x] for x in verdict.conflicting if x in labels]
        decided["round"] = state.get("rounds", 0)
        return {"verdict": decided, "verdicts": [decided], **log.update()}

    return judge
