"""A memory's history: its versions as stored, and the audit entries that changed it.

:func:`memory_history` reads the audit log (a fact's whole supersession chain, and the
forget tombstones that name the id) and adds an ``add`` entry per record still stored,
the version it was stored as, as mem0's history starts with its ADD.
"""

from __future__ import annotations

from ..records.audit import AuditEntry
from ..records.model import FactRecord, Granularity
from ..stores.chroma import ChromaMemoryStore
from .lookup import not_found

__all__ = ["fact_chain", "memory_history"]


def fact_chain(store: ChromaMemoryStore, namespace: str, memory_id: str) -> set[str]:
    """``memory_id`` and the facts of its supersession chain, both ways, transitively."""
    chain = {memory_id}
    facts = {
        f.id: f
        for f in store.get(Granularity.FACT, namespace, where={"superseded": True})
        if isinstance(f, FactRecord)
    }
    facts.update(
        (f.id, f)
        for f in store.get(Granularity.FACT, namespace, [memory_id])
        if isinstance(f, FactRecord)
    )
    changed = True
    while changed:  # successors (superseded_by) and predecessors, transitively
        changed = False
        for fid, fact in facts.items():
            linked = fid in chain or (fact.superseded_by in chain)
            for x in (fid, fact.superseded_by):
                if linked and x is not None and x not in chain:
                    chain.add(x)
                    changed = True
    return chain


def memory_history(store: ChromaMemoryStore, namespace: str, memory_id: str) -> list[AuditEntry]:
    """The versions of ``memory_id`` and the audit entries that changed them, oldest first.

    The audit entries are those of ``memory_id`` and of the facts of its supersession
    chain, and the forget tombstones that list the id. Each record of that history still
    stored gets an ``add`` entry holding its first text: the ``before`` of its first
    ``update``, else its text now (built from the record, never stored).

    Raises:
        RecordNotFoundError: Neither an audit entry nor a stored record names the id.
    """
    chain = fact_chain(store, namespace, memory_id)
    entries = [
        e
        for e in store.list_audit(namespace)
        if e.target_id in chain or (e.action == "forget" and memory_id in e.source_ids)
    ]
    entries.sort(key=lambda e: (e.at, e.id))
    ids = sorted(chain | {e.target_id for e in entries})
    added = []
    for gran in Granularity:
        for record in store.get(gran, namespace, ids):
            first = next(
                (e.before for e in entries if e.target_id == record.id and e.action == "update"),
                None,
            )
            added.append(
                AuditEntry(
                    id=f"add-{record.id}",
                    namespace=namespace,
                    at=record.recorded_at,
                    actor="lamina",
                    action="add",
                    granularity=gran.value,
                    target_id=record.id,
                    reason="stored",
                    after=first if first is not None else record.text,
                    source_ids=list(record.source_ids),
                )
            )
    if not entries and not added:
        raise not_found(namespace, [memory_id])
    return sorted([*added, *entries], key=lambda e: (e.at, e.action != "add", e.id))
