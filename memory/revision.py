"""``Memory.update``: give a memory new text without losing the old one.

* A fact is superseded: a new fact with the new text (a new id) replaces it, and the
  old fact stays stored with ``superseded_by`` and a closed validity, so ``as_of``
  searches and :meth:`~lamina.Memory.history` still see it. The change takes effect at
  an event time, never at the clock time of the call when anything else is known: the
  time the caller gives, else the newest turn of the conversation said after the fact
  (the application learned of the change by then), else the newest of the fact's own
  source turns. Only a namespace with none of these falls back to the clock, and the
  audit entry says so.
* A raw turn, an episode or a scene is revised in place; the audit entry keeps the old
  text (``before``). A raw turn that facts or episodes were derived from is refused:
  update those, or forget the turn and add the corrected text.

Each update appends one audit entry. A failure part way restores what was there; on a
store with transactions (Postgres) a superseding update commits whole or not at all,
even if the process dies part way.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Literal
from zoneinfo import ZoneInfo

from pydantic import BaseModel, ConfigDict, Field

from ..agents.common.timeparse import reference_day, resolve_times
from ..errors import InvalidInputError
from ..records.audit import AuditEntry
from ..records.model import FactRecord, Granularity, MemoryRecord, RawTurn
from ..stores.atomic import all_or_nothing
from ..stores.chroma import ChromaMemoryStore
from ..stores.filters import TimeWindow

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
    record: MemoryRecord,
    action: Literal["update", "supersede"],
    after: str,
    at: datetime,
    reason: str = "updated by the application",
) -> AuditEntry:
    return AuditEntry(
        namespace=record.namespace,
        at=at,
        actor=ACTOR,
        action=action,
        granularity=record.granularity.value,
        target_id=record.id,
        reason=reason,
        before=record.text,
        after=after,
        source_ids=list(record.source_ids) or [record.id],
    )


def effective_time(
    store: ChromaMemoryStore, fact: FactRecord, at: datetime | None, now: datetime
) -> tuple[datetime, str]:
    """When an update of ``fact`` takes effect, and where that time comes from.

    ``at`` when the caller gives it; else the newest turn of the namespace, when the
    fact's source turns were not the last; else the newest of the fact's source turns;
    else ``now`` (the clock).
    """
    if at is not None:
        TimeWindow(before=at)  # validates awareness
        return at, "the time the caller gave"
    sources = store.get(Granularity.RAW, fact.namespace, fact.source_ids)
    said = max((t.occurred_at for t in sources), default=fact.occurred_at)
    later = store.get(Granularity.RAW, fact.namespace, window=TimeWindow(after=said))
    if later:
        return max(t.occurred_at for t in later), "the newest turn of the conversation"
    if sources:
        return said, "the newest source turn of the fact"
    return now, "the clock time: no time was given and the namespace holds no turn"


def supersede_fact(
    store: ChromaMemoryStore,
    fact: FactRecord,
    text: str,
    now: datetime,
    at: datetime | None = None,
) -> UpdateResult:
    """Replace ``fact`` by a new fact holding ``text``; the old one stays, superseded.

    The old fact is valid until the update's event time (see :func:`effective_time`),
    and the new one from then; ``now`` is when memory learned it.
    """
    if fact.superseded_by is not None:
        raise InvalidInputError(
            f"fact {fact.id!r} was already superseded by {fact.superseded_by!r}; "
            "update the current version"
        )
    ns = fact.namespace
    when, origin = effective_time(store, fact, at, now)
    start = max(when, fact.valid_from) if fact.valid_from is not None else when
    fresh = FactRecord.model_validate(
        {
            **fact.model_dump(),
            "id": uuid.uuid4().hex,
            "text": text,
            "recorded_at": now,
            "valid_from": start,
            "valid_to": None,
        }
    )
    reason = f"updated by the application; valid until {when.isoformat()}, {origin}"
    entry = _audit(fact, "supersede", text, now, reason)
    with all_or_nothing(store):  # Postgres: the new fact, the closed old one and the audit
        store.add(ns, [fresh])  # entry commit together, so a crash between leaves neither
        try:
            store.mark_superseded(ns, fact.id, superseded_by=fresh.id, at=when, audit=entry)
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
    store: ChromaMemoryStore,
    record: MemoryRecord,
    text: str,
    now: datetime,
    tz: ZoneInfo,
    at: datetime | None = None,
) -> UpdateResult:
    """Supersede a fact or revise any other record; the same text changes nothing.

    ``at``: when a fact's change took effect (see :func:`effective_time`).
    """
    if text == record.text:
        gran = record.granularity.value
        return UpdateResult(
            id=record.id, previous_id=record.id, granularity=gran, action="unchanged"
        )
    if isinstance(record, FactRecord):
        return supersede_fact(store, record, text, now, at)
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
