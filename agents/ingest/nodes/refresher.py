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

from ....core.context import MemoryContext, context_of
from ....core.nodes import REFRESHER
from ....core.state import Conflict, IngestState, Written
from ....records.audit import AuditEntry
from ....records.model import FactRecord
from ....stores.atomic import all_or_nothing
from ...common.deps import NodeDeps, StepLog
from .conflicts import PENDING_KEY


def supersede(log: StepLog, ctx: MemoryContext, conflict: Conflict) -> Written | None:
    """Close the old fact in favour of the new one and audit it; None if either is gone."""
    store, ns = log.deps.store, ctx.namespace
    found = {f.id: f for f in store.get("fact", ns, [conflict.old_id, conflict.new_id])}
    old, new = found.get(conflict.old_id), found.get(conflict.new_id)
    if not isinstance(old, FactRecord) or not isinstance(new, FactRecord):
        log.fail("supersede", f"fact {conflict.old_id} or {conflict.new_id} no longer exists")
        return None
    at = new.event_time()  # when the new state began, never the clock
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


def settle(
    log: StepLog, ctx: MemoryContext, conflicts: list[Conflict], settled: list[str]
) -> list[Written]:
    """Supersede every conflict and clear the pending flag of the ``settled`` facts.

    The Constructor writes its facts flagged (:data:`~.conflicts.PENDING_KEY`), so until
    this commits a construction batch's facts are known to be unjudged. On a store with
    transactions (Postgres) the supersessions, their audit entries and the cleared flags
    commit in one, so a failure or a kill in between leaves the facts flagged and nothing
    superseded, and the next run's Judge checks them again. On Chroma each call lands on
    its own: a failure stops the rest and leaves the flags, so the next run redoes them
    (a fact already superseded is no longer a candidate). A failure is recorded in ``log``.
    """
    store, ns = log.deps.store, ctx.namespace
    written: list[Written] = []
    try:
        with all_or_nothing(store):
            for conflict in conflicts:
                done = supersede(log, ctx, conflict)
                if done is not None:
                    written.append(done)
            facts = [f for f in store.get("fact", ns, settled) if isinstance(f, FactRecord)]
            cleared = [
                f.model_copy(
                    update={"metadata": {k: v for k, v in f.metadata.items() if k != PENDING_KEY}}
                )
                for f in facts
                if PENDING_KEY in f.metadata
            ]
            if cleared:
                store.add(ns, cleared)
    except Exception as e:  # never crash the graph on a store failure
        log.fail("supersede", e)
        return [] if callable(getattr(store, "atomic", None)) else written  # rolled back
    return written


def make_refresher(deps: NodeDeps) -> Callable[..., dict[str, Any]]:
    """Build the ``refresher`` node."""

    def refresher(state: IngestState, runtime: Runtime[MemoryContext]) -> dict[str, Any]:
        """Supersede what the Judge found contradicted, in one transaction (:func:`settle`)."""
        log = StepLog(REFRESHER, deps)
        conflicts = list(state.get("conflicts", []))
        written = settle(log, context_of(runtime), conflicts, state.get("settled_fact_ids", []))
        return {"written": written, **log.update()}

    return refresher
