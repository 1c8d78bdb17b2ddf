"""The Refresher node on the write path: supersede what the Judge found outdated.

A contradicted fact gets ``valid_to`` and ``superseded_by`` and is kept, so history can
be queried as of an earlier date. Raw turns are verbatim and never edited or deleted
here. Every change is appended to the audit log with who, what, why, before and after,
the source turns, the model and the time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langgraph.runtime import Runtime

from ...core.context import MemoryContext, context_of
from ...core.nodes import REFRESHER
from ...core.state import Conflict, IngestState, Written
from ...records.audit import AuditEntry
from ...records.model import FactRecord
from ..common.deps import NodeDeps, StepLog
from .updates import event_time


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
