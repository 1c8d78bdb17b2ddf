"""``Memory.update``: give a memory new text without losing the old one.

* A fact is superseded: a new fact with the new text (a new id) replaces it, and the
  old fact stays stored with ``superseded_by`` and a closed validity, so ``as_of``
  searches and :meth:`~lamina.Memory.history` still see it.
* A raw turn, an episode or a scene is revised in place; the audit entry keeps the old
  text (``before``). A raw turn that facts or episodes were derived from is refused:
  update those, or forget the turn and add the corrected text.

Each update appends one audit entry. A failure part way restores what was there.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Literal
from zoneinfo import ZoneInfo

from pydantic import BaseModel, ConfigDict, Field

from ..agents.timeparse import reference_day, resolve_times
from ..errors import InvalidInputError
from ..stores.audit import AuditEntry
from ..stores.chroma import ChromaMemoryStore
from ..stores.records import FactRecord, Granularity, MemoryRecord, RawTurn

ACTOR = "Memory.update"
"""The actor of the audit entries an update writes."""


class UpdateResult(BaseModel):
    """What :meth:`~lamina.Memory.update` did."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(description="The memory's current id (a superseding fact has a new one).")
    previous_id: str = Field(description="The id that was updated.")
    granularity: str
    action: Literal["superseded", "revised", "unchanged"]
    audit_id: str | None = Field(default=None, description="The audit entry; None if unchanged.")


def _audit(
    record: MemoryRecord, action: Literal["update", "supersede"], after: str, at: datetime
) -> AuditEntry:
    return AuditEntry(
        namespace=record.namespace,
        at=at,
        actor=ACTOR,
        action=action,
        granularity=record.granularity.value,
        target_id=record.id,
        reason="updated by the application",
        before=record.text,
        after=after,
        source_ids=list(record.source_ids) or [record.id],
    )


def supersede_fact(
    store: ChromaMemoryStore, fact: FactRecord, text: str, now: datetime
) -> UpdateResult:
    """Replace ``fact`` by a new fact holding ``text``; the old one stays, superseded."""
    if fact.superseded_by is not None:
        raise InvalidInputError(
            f"fact {fact.id!r} was already superseded by {fact.superseded_by!r}; "
            "update the current version"
        )
    ns = fact.namespace
    fresh = FactRecord.model_validate(
        {
            **fact.model_dump(),
            "id": uuid.uuid4().hex,
            "text": text,
            "recorded_at": now,
            "valid_from": now,
            "valid_to": None,
        }
    )
    store.add(ns, [fresh])
    try:
        entry = _audit(fact, "supersede", text, now)
        store.mark_superseded(ns, fact.id, superseded_by=fresh.id, at=now, audit=entry)
    except BaseException:
        store.update(ns, fact)
        store.delete(Granularity.FACT, ns, [fresh.id])
        raise
    return UpdateResult(
        id=fresh.id,
        previous_id=fact.id,
        granularity="fact",
        action="superseded",
        audit_id=entry.id,
    )


def derived_from(store: ChromaMemoryStore, turn: RawTurn) -> list[str]:
    """Ids of the facts, episodes and scenes built from ``turn``."""
    found = list(turn.consolidated_into)
    for gran in (Granularity.FACT, Granularity.EPISODE, Granularity.SCENE):
        found += [r.id for r in store.get(gran, turn.namespace) if turn.id in r.source_ids]
    return list(dict.fromkeys(found))


def revise(
    store: ChromaMemoryStore, record: MemoryRecord, text: str, now: datetime, tz: ZoneInfo
) -> UpdateResult:
    """Give a raw turn, an episode or a scene new text in place, auditing the old text."""
    changes: dict[str, object] = {"text": text, "recorded_at": now}
    if isinstance(record, RawTurn):
        derived = derived_from(store, record)
        if derived:
            raise InvalidInputError(
                f"raw turn {record.id!r} is what was said, and memories were derived from "
                f"it ({', '.join(derived[:5])}); update those, or forget the turn and add "
                "the corrected text"
            )
        changes["time_refs"] = resolve_times(text, reference_day(record.occurred_at, tz))
    revised = type(record).model_validate({**record.model_dump(), **changes})
    store.update(record.namespace, revised)
    try:
        entry = store.append_audit(_audit(record, "update", text, now))
    except BaseException:
        store.update(record.namespace, record)
        raise
    return UpdateResult(
        id=record.id,
        previous_id=record.id,
        granularity=record.granularity.value,
        action="revised",
        audit_id=entry.id,
    )


def update_record(
    store: ChromaMemoryStore, record: MemoryRecord, text: str, now: datetime, tz: ZoneInfo
) -> UpdateResult:
    """Supersede a fact or revise any other record; the same text changes nothing."""
    if text == record.text:
        gran = record.granularity.value
        return UpdateResult(
            id=record.id, previous_id=record.id, granularity=gran, action="unchanged"
        )
    if isinstance(record, FactRecord):
        return supersede_fact(store, record, text, now)
    return revise(store, record, text, now, tz)


def version_ids(store: ChromaMemoryStore, namespace: str, memory_id: str) -> list[str]:
    """``memory_id`` and every earlier version of it (facts it superseded, transitively)."""
    replaced_by = {
        f.id: f.superseded_by
        for f in store.get(Granularity.FACT, namespace, where={"superseded": True})
        if isinstance(f, FactRecord) and f.superseded_by is not None
    }
    chain, changed = [memory_id], True
    while changed:
        changed = False
        for old, new in replaced_by.items():
            if new in chain and old not in chain:
                chain.append(old)
                changed = True
    return chain
