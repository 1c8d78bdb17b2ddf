"""Find a memory by id inside one namespace, whatever its granularity."""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import RecordNotFoundError
from ..records.model import MemoryRecord
from ..stores.base import MemoryStore
from .hits import ALL_GRANULARITIES


def known_ids(store: MemoryStore, namespace: str, ids: Sequence[str]) -> set[str]:
    """Which of ``ids`` name a stored record of ``namespace`` (any granularity)."""
    found: set[str] = set()
    for gran in ALL_GRANULARITIES:
        missing = [i for i in ids if i not in found]
        if not missing:
            break
        found.update(r.id for r in store.get(gran, namespace, missing))
    return found


def find_record(store: MemoryStore, namespace: str, memory_id: str) -> MemoryRecord:
    """The record ``memory_id`` names in ``namespace``.

    Raises:
        RecordNotFoundError: No granularity of ``namespace`` holds it.
    """
    for gran in ALL_GRANULARITIES:
        found = store.get(gran, namespace, [memory_id])
        if found:
            return found[0]
    raise not_found(namespace, [memory_id])


def not_found(namespace: str, ids: Sequence[str]) -> RecordNotFoundError:
    """The error for ids that name no memory of ``namespace``."""
    listed = ", ".join(repr(i) for i in ids)
    return RecordNotFoundError(
        f"no memory {listed} in namespace {namespace!r}; ids come from search(), get_all(), "
        "answer().citations, inspect() or AddResult.new_raw_ids of the same namespace",
        ids=tuple(ids),
        namespace=namespace,
    )
