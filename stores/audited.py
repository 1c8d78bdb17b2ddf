"""A supersede and its audit entry land together, or neither does.

Chroma has no transaction across two collections. So the audit entry of a supersede is
first written *inside* the superseded fact's own row (one atomic upsert of one row),
under :data:`PENDING`; then it is copied to the audit collection and the fact row is
cleared. If the process or the server dies in between, the entry still sits in the fact
row, and :func:`land_pending` (run by ``list_audit``) finishes the copy. An entry that
already reached the audit collection is never overwritten from the fact row, so a later
redaction (``replace_audit``) stays in force.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from chromadb.api.models.Collection import Collection

from ..errors import InvalidInputError, RecordNotFoundError
from ..records.audit import AuditEntry
from ..records.model import FactRecord, Granularity, MemoryRecord, utc_now, validate_namespace
from .base import SupersedeOptions
from .chroma_calls import ChromaCalls
from .filters import TimeWindow
from .keyed import KeyedDocuments

PENDING = "audit_pending"
"""Metadata key on a fact row: True while the row carries an audit entry not yet copied."""
PENDING_ENTRY = "audit_pending_entry"
"""Metadata key on a fact row: the pending audit entry as JSON."""


@dataclass(frozen=True)
class Supersede:
    """One ``mark_superseded`` call of either store, its arguments checked before any read."""

    namespace: str
    fact_id: str
    superseded_by: str
    at: datetime | None
    entry: AuditEntry | None

    @classmethod
    def checked(
        cls, namespace: str, fact_id: str, superseded_by: str, options: SupersedeOptions
    ) -> Supersede:
        """The call's arguments, each checked; the audit entry too."""
        if not isinstance(superseded_by, str) or not superseded_by.strip():
            raise InvalidInputError("superseded_by must be the id of the replacing fact")
        if superseded_by == fact_id:
            raise InvalidInputError("a fact cannot supersede itself")
        validate_namespace(namespace)
        audit, at = options.get("audit"), options.get("at")
        entry = None if audit is None else check_entry(audit, namespace, fact_id)
        if at is not None:
            TimeWindow(before=at)  # validates awareness
        return cls(namespace, fact_id, superseded_by, at, entry)

    def close(
        self,
        found: Sequence[MemoryRecord],
        get: Callable[[Granularity, str, list[str]], Sequence[MemoryRecord]],
    ) -> tuple[FactRecord, AuditEntry | None]:
        """The stored fact ``found`` closed, and the audit entry that lands with it.

        ``valid_to`` is ``at``, else the event time of the replacing fact (read with
        ``get``) when it is stored; only when neither exists is it the clock time, and
        the entry then says so.
        """
        if not found:
            raise RecordNotFoundError(f"no fact {self.fact_id!r} in namespace {self.namespace!r}")
        assert isinstance(found[0], FactRecord)
        when, entry = self.at, self.entry
        if when is None:
            new = get(Granularity.FACT, self.namespace, [self.superseded_by])
            when = new[0].event_time() if new and isinstance(new[0], FactRecord) else None
        if when is None:
            when = utc_now()
            entry = None if entry is None else clock_noted(entry, when)
        return closed(found[0], self.superseded_by, when), entry


def check_entry(entry: AuditEntry, namespace: str, fact_id: str) -> AuditEntry:
    """Validate the audit entry of a supersede of ``fact_id`` in ``namespace``."""
    checked = (
        AuditEntry.model_validate(entry.model_dump()) if isinstance(entry, AuditEntry) else None
    )
    if checked is None:
        raise InvalidInputError(f"audit must be an AuditEntry, got {type(entry).__name__}")
    if checked.namespace != namespace or checked.target_id != fact_id:
        raise InvalidInputError(
            f"the audit entry is about {checked.target_id!r} in {checked.namespace!r}; a "
            f"supersede of {fact_id!r} in {namespace!r} needs an entry about that fact"
        )
    return checked


def closed(fact: FactRecord, superseded_by: str, when: datetime) -> FactRecord:
    """``fact`` pointing at its replacement, valid until ``when`` (or earlier, if it was)."""
    valid_to = fact.valid_to if fact.valid_to is not None and fact.valid_to < when else when
    if fact.valid_from is not None and valid_to < fact.valid_from:
        valid_to = fact.valid_from
    updated = fact.model_copy(update={"superseded_by": superseded_by, "valid_to": valid_to})
    return FactRecord.model_validate(updated.model_dump())


def clock_noted(entry: AuditEntry, when: datetime) -> AuditEntry:
    """``entry`` saying that the supersede's ``valid_to`` is the clock time ``when``.

    That happens only when the caller gave no time and the replacing fact, whose event
    time would be used, is not stored.
    """
    note = (
        f"valid_to is the clock time {when.isoformat()}: no event time was given and the "
        "replacing fact is not stored"
    )
    reason = f"{entry.reason}; {note}" if entry.reason else note
    return entry.model_copy(update={"reason": reason})


def with_pending(metadata: dict[str, Any], entry: AuditEntry) -> dict[str, Any]:
    """Fact row metadata carrying ``entry`` until it reaches the audit collection."""
    return {**metadata, PENDING: True, PENDING_ENTRY: entry.model_dump_json()}


def land_pending(
    calls: ChromaCalls, facts: Collection, audit: KeyedDocuments, namespace: str
) -> int:
    """Copy every audit entry still pending in a fact row of ``namespace``; return how many."""
    where = {"$and": [{"namespace": {"$eq": namespace}}, {PENDING: {"$eq": True}}]}
    rows = calls.read(facts.get, where=cast(Any, where), include=["metadatas"])
    landed = 0
    for rid, meta in zip(rows["ids"], rows["metadatas"] or [], strict=True):
        entry = AuditEntry.model_validate_json(str(meta[PENDING_ENTRY]))
        if audit.get(namespace, entry.id, AuditEntry) is None:
            audit.put(namespace, entry.id, entry, sort_key=entry.at.timestamp())
            landed += 1
        clear_pending(calls, facts, rid)
    return landed


def clear_pending(calls: ChromaCalls, facts: Collection, row: str) -> None:
    """Remove the pending audit entry from one fact row (its vector and text stay)."""
    calls.write(
        facts.update, ids=[row], metadatas=cast(Any, [{PENDING: None, PENDING_ENTRY: None}])
    )
