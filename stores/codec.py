"""Map records to Chroma rows (id, document, metadata) and back.

A Chroma row id is ``"<namespace>|<record id>"`` so two tenants can use the same record
id without ever overwriting each other. The full record is kept as JSON in the
``record`` metadata key; scalar fields are duplicated as metadata keys for filtering.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from ..errors import InvalidInputError
from ..records.model import (
    RECORD_TYPES,
    FactRecord,
    Granularity,
    MemoryRecord,
    RawTurn,
)
from .filters import OCCURRED_TS, USER_META_PREFIX

RECORD_KEY = "record"
EXPIRES_TS = "expires_ts"
"""Metadata key holding ``expires_at`` as POSIX seconds, for the sweeper's query."""
NEVER = 1e18
"""``expires_ts`` of a record that never expires (some 30 billion years away)."""


def row_id(namespace: str, record_id: str) -> str:
    """Return the Chroma row id of a record."""
    return f"{namespace}|{record_id}"


def to_metadata(record: MemoryRecord) -> dict[str, Any]:
    """Return the Chroma metadata of ``record``."""
    meta: dict[str, Any] = {
        "namespace": record.namespace,
        "record_id": record.id,
        "granularity": record.granularity.value,
        OCCURRED_TS: record.occurred_at.timestamp(),
        "recorded_ts": record.recorded_at.timestamp(),
        RECORD_KEY: record.model_dump_json(),
    }
    if record.source_ids:
        meta["source_ids"] = list(record.source_ids)
    # always written: an upsert keeps the metadata keys it does not name (Chroma)
    meta[EXPIRES_TS] = NEVER if record.expires_at is None else record.expires_at.timestamp()
    for key, value in record.metadata.items():
        meta[USER_META_PREFIX + key] = value
    if isinstance(record, RawTurn):
        meta.update(
            speaker=record.speaker,
            session_id=record.session_id,
            turn_index=record.turn_index,
            consolidated=bool(record.consolidated_into) or record.trivial,
            pending=record.pending is not None,
        )
    elif isinstance(record, FactRecord):
        meta.update(kind=record.kind, superseded=record.superseded_by is not None)
        if record.subject is not None:
            meta["subject"] = record.subject
        if record.valid_from is not None:
            meta["valid_from_ts"] = record.valid_from.timestamp()
        if record.valid_to is not None:
            meta["valid_to_ts"] = record.valid_to.timestamp()
    return meta


def from_metadata(granularity: Granularity, metadata: dict[str, Any]) -> MemoryRecord:
    """Rebuild a record from its Chroma metadata."""
    cls = RECORD_TYPES[granularity]
    try:
        return cls.model_validate_json(metadata[RECORD_KEY])
    except (KeyError, TypeError, ValidationError) as e:
        raise InvalidInputError(
            f"stored {granularity.value} row {metadata.get('record_id')!r} is not a lamina "
            "record; was the collection written by another program?"
        ) from e
