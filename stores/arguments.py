"""Argument checks shared by the store's public methods."""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import InvalidInputError, InvalidTypeError
from ..records.model import MemoryRecord


def dedupe(records: list[MemoryRecord]) -> list[MemoryRecord]:
    """Keep the last record per id, so a batch that repeats an id is still one upsert."""
    return list({r.id: r for r in records}.values())


def as_records(records: object) -> Sequence[MemoryRecord]:
    """Accept one record or a sequence of them; reject strings, dicts and the like."""
    if isinstance(records, MemoryRecord):
        return [records]
    if isinstance(records, str | bytes) or not isinstance(records, Sequence):
        raise InvalidTypeError(
            f"records must be a list of memory records, got {type(records).__name__}"
        )
    return records


def as_ids(ids: object) -> list[str]:
    """Accept a sequence of string ids (not a bare string); drop repeats, keep order."""
    if isinstance(ids, str) or not isinstance(ids, Sequence):
        raise InvalidTypeError(f"ids must be a list of strings, got {type(ids).__name__}")
    bad = [i for i in ids if not isinstance(i, str)]
    if bad:
        raise InvalidTypeError(f"ids must be strings, got {bad[:3]!r}")
    return list(dict.fromkeys(ids))


def require_delete_scope(ids: object, window: object, where: object) -> None:
    """Refuse a delete() that names no ids, window or filter: a namespace is wiped on purpose."""
    if ids is None and window is None and not where:
        raise InvalidInputError(
            "delete() needs ids, a window or where; to wipe a namespace use delete_namespace()"
        )
