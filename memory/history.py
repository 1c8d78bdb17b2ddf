"""A memory's history: its versions as stored, and the audit entries that changed it.

``history_of`` reads the audit log (a fact's whole supersession chain, and the forget
tombstones that name the id); ``stored_versions`` writes an ``add`` entry per record
still stored, the version it was stored as, as mem0's history starts with its ADD.
"""

from __future__ import annotations

from ..errors import InvalidInputError
from ..records.audit import AuditEntry
from ..records.model import FactRecord, Granularity, validate_namespace
from ..stores.chroma import ChromaMemoryStore

__all__ = ["fact_chain", "history_of", "stored_versions"]


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


def history_of(store: ChromaMemoryStore, namespace: str, memory_id: str) -> list[AuditEntry]:
    """Audit entries of ``memory_id`` and of the facts in its supersession chain.

    Forget tombstones that list the id are included. Oldest first.
    """
    ns = validate_namespace(namespace)
    if not isinstance(memory_id, str) or not memory_id.strip():
        raise InvalidInputError("memory_id must be a non-empty string")
    chain = fact_chain(store, ns, memory_id)
    entries = [
        e
        for e in store.list_audit(ns)
        if e.target_id in chain or (e.action == "forget" and memory_id in e.source_ids)
    ]
    entries.sort(key=lambda e: (e.at, e.id))
    return entries


def stored_versions(
    store: ChromaMemoryStore, namespace: str, memory_id: str, entries: list[AuditEntry]
) -> list[AuditEntry]:
    """An ``add`` entry per stored record of ``memory_id``'s history, as it was stored.

    The records are ``memory_id``, the facts of its supersession chain and the targets
    of ``entries``. Each entry holds the record's first text: the ``before`` of its first
    ``update``, else its text now. Built from the records, never stored.
    """
    chain = sorted(fact_chain(store, namespace, memory_id) - {memory_id})
    ids = list(dict.fromkeys([memory_id, *chain, *(e.target_id for e in entries)]))
    out = []
    for gran in Granularity:
        for record in store.get(gran, namespace, ids):
            first = next(
                (e.before for e in entries if e.target_id == record.id and e.action == "update"),
                None,
            )
            out.append(
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
    return out
