"""The Refresher node on the read path: resolve memories the Judge found contradicting.

The model chooses Update, Delete or No-op for the conflicting memories of any
granularity. An updated fact is superseded by its replacement (valid until the newest
evidence's time, never the clock) and kept; an updated episode or scene keeps its old
text in the audit log. Raw turns are verbatim and never edited or deleted here: deletion
of a raw turn happens only when the user explicitly asks to forget.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from langgraph.runtime import Runtime

from ...core.context import MemoryContext, context_of
from ...core.nodes import REFRESHER
from ...core.state import RecallState, Written
from ...prompts.recall import REFRESH
from ...records.audit import AuditEntry
from ...records.model import FactRecord, MemoryRecord, RawTurn
from ..common.deps import NodeDeps, StepLog
from ..common.formatting import as_data
from ..common.refinement import fact_id
from ..common.token_caps import capped_log
from .context import render_for
from .schemas import RefreshPlan

REFRESH_MAX_TOKENS = 256
"""Output cap of the Refresher's plan: an action and the corrected memory's text."""


def _apply_edit(
    log: StepLog,
    ctx: MemoryContext,
    record: MemoryRecord,
    action: str,
    content: str,
    why: str,
    at: datetime,
) -> Written | None:
    """Update (keeping history) or delete one record, and audit the change.

    ``at`` is the event time of the evidence the edit rests on (the newest of the
    conflicting memories): a superseded fact is valid until then and its replacement
    from then, whatever the clock says.
    """
    store, ns = log.deps.store, ctx.namespace
    gran = record.granularity.value
    if isinstance(record, RawTurn):  # verbatim: only an explicit forget() removes one
        log.fail("refresh", f"raw turn {record.id} is verbatim memory; it is never edited")
        return None
    now = log.deps.clock()
    entry = AuditEntry(
        namespace=ns,
        at=now,
        actor=REFRESHER,
        action="update",
        granularity=gran,
        target_id=record.id,
        reason=why,
        before=record.text,
        source_ids=list(record.source_ids),
        model=log.deps.model_name,
    )
    if action == "delete":
        store.delete(gran, ns, [record.id])
        store.append_audit(entry.model_copy(update={"action": "delete"}))
        return Written(granularity=gran, id=record.id, action="deleted")
    content = content.strip()
    if not content or content == record.text:
        return None
    if isinstance(record, FactRecord):
        replacement = FactRecord.model_validate(
            {
                **record.model_dump(),
                "id": fact_id(ns, content),
                "text": content,
                "valid_from": max(at, record.valid_from) if record.valid_from else at,
                "valid_to": None,
                "superseded_by": None,
                "recorded_at": now,
                "occurred_at": at,
            }
        )
        store.add(ns, [replacement])
        after = f"valid until {at.isoformat()}; superseded by {replacement.id}: {content}"
        audit = entry.model_copy(update={"action": "supersede", "after": after})
        store.mark_superseded(ns, record.id, superseded_by=replacement.id, at=at, audit=audit)
        return Written(granularity=gran, id=record.id, action="superseded")
    updated = type(record).model_validate(
        {**record.model_dump(), "text": content, "recorded_at": now}
    )
    store.update(ns, updated)
    store.append_audit(entry.model_copy(update={"after": content}))
    return Written(granularity=gran, id=record.id, action="updated")


def make_recall_refresher(deps: NodeDeps) -> Callable[..., dict[str, Any]]:
    """Build the recall ``refresher`` node: Update, Delete or No-op on any granularity."""

    def refresher(state: RecallState, runtime: Runtime[MemoryContext]) -> dict[str, Any]:
        """Resolve the memories the Judge found contradicting each other."""
        ctx = context_of(runtime)
        log = capped_log(REFRESHER, deps, REFRESH_MAX_TOKENS)
        ids = set((state.get("verdict") or {}).get("conflicting_ids", []))
        conflicting = [c for c in state.get("candidates", []) if c.id in ids]
        memories, labels = render_for(conflicting, ctx)
        question = as_data(state.get("question", ""))
        plan = log.ask(
            RefreshPlan, REFRESH.format_messages(question=question, memories=memories), "refresh"
        )
        written: list[Written] = []
        if plan is not None and plan.action != "noop" and conflicting:
            by_id = {c.id: c for c in conflicting}
            evidence_at = max(c.occurred_at for c in conflicting)
            for edit in plan.edits:
                cid = labels.get(edit.label)
                if cid is None:
                    continue
                found = deps.store.get(by_id[cid].granularity, ctx.namespace, [cid])
                if not found:
                    continue
                try:
                    done = _apply_edit(
                        log, ctx, found[0], plan.action, edit.new_content, plan.reason, evidence_at
                    )
                except Exception as e:  # never crash the graph on a store failure
                    log.fail("refresh", e)
                    continue
                if done is not None:
                    written.append(done)
        changed = {w.id for w in written}
        kept = [c for c in state.get("candidates", []) if c.id not in changed]
        return {"written": written, "candidates": kept, **log.update()}

    return refresher
