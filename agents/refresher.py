"""The Refresher node: keeps memory consistent without losing history.

A contradicted fact gets ``valid_to`` and ``superseded_by`` and is kept, so history can
be queried as of an earlier date; an updated episode or scene keeps its old text in the
audit log. Raw turns are verbatim and never edited or deleted here. Deletion happens
only when the user explicitly asked to forget.
Every change is appended to the audit log with who, what, why, before and after, the
source turns, the model and the time.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from langgraph.runtime import Runtime

from ..core.context import MemoryContext, context_of
from ..core.nodes import REFRESHER
from ..core.state import Conflict, IngestState, RecallState, Written
from ..prompts.recall import REFRESH
from ..stores.audit import AuditEntry
from ..stores.records import FactRecord, MemoryRecord, RawTurn
from .deps import NodeDeps, StepLog
from .formatting import as_data
from .recall_context import render_for
from .recall_schemas import RefreshPlan
from .refinement import fact_id
from .slots import event_time
from .token_caps import capped_log


def supersede(log: StepLog, ctx: MemoryContext, conflict: Conflict) -> Written | None:
    """Close the old fact in favour of the new one and audit it; None if either is gone."""
    store, ns = log.deps.store, ctx.namespace
    found = {f.id: f for f in store.get("fact", ns, [conflict.old_id, conflict.new_id])}
    old, new = found.get(conflict.old_id), found.get(conflict.new_id)
    if not isinstance(old, FactRecord) or not isinstance(new, FactRecord):
        log.fail("supersede", f"fact {conflict.old_id} or {conflict.new_id} no longer exists")
        return None
    at = event_time(new)  # when the new state began, never the clock
    entry = AuditEntry(
        namespace=ns,
        at=log.deps.clock(),
        actor=REFRESHER,
        action="supersede",
        granularity="fact",
        target_id=old.id,
        reason=conflict.reason or "contradicted by a newer fact",
        before=old.text,
        after=f"valid until {at.isoformat()}; superseded by {new.id}: {new.text}",
        source_ids=list(new.source_ids),
        model=log.deps.model_name,
    )
    store.mark_superseded(ns, old.id, superseded_by=new.id, at=at, audit=entry)
    return Written(granularity="fact", id=old.id, action="superseded")


def make_refresher(deps: NodeDeps) -> Callable[..., dict[str, Any]]:
    """Build the ``refresher`` node."""

    def refresher(state: IngestState, runtime: Runtime[MemoryContext]) -> dict[str, Any]:
        """Supersede every fact the Judge found contradicted."""
        log = StepLog(REFRESHER, deps)
        ctx = context_of(runtime)
        written = []
        for conflict in state.get("conflicts", []):
            try:
                done = supersede(log, ctx, conflict)
            except Exception as e:  # never crash the graph on a store failure
                log.fail("supersede", e)
                continue
            if done is not None:
                written.append(done)
        return {"written": written, **log.update()}

    return refresher


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
        log = capped_log(REFRESHER, deps, ctx.refresh_max_tokens)
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
