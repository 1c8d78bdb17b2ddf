"""The read side of :class:`~memstrata.Memory`: search, history, profile and inspect.

None of these calls an LLM. Every one reads a single namespace.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import datetime

from ..config import MemoryConfig
from ..errors import InvalidInputError, InvalidTypeError
from ..results import MemoryHit
from ..stores.audit import AuditEntry
from ..stores.base import ScoredRecord
from ..stores.chroma import ChromaMemoryStore
from ..stores.filters import TimeWindow
from ..stores.forgetting import history_of
from ..stores.records import MemoryRecord, ProfileRecord, parse_granularity
from .hits import ALL_GRANULARITIES, merge_hits, visible_at
from .inputs import (
    require_aware,
    require_namespace,
    require_positive_int,
    require_text,
    require_window,
    type_name,
)
from .lookup import known_ids, not_found


def granularities_of(granularities: object) -> list[str]:
    """The granularities asked for (default all four), validated, without repeats."""
    if isinstance(granularities, str):
        granularities = [granularities]
    if granularities is not None and not isinstance(granularities, Sequence):
        raise InvalidTypeError(
            "granularities must be a list of 'raw', 'fact', 'episode', 'scene' or None, "
            f"got {type_name(granularities)}"
        )
    grans = [parse_granularity(g).value for g in (granularities or ALL_GRANULARITIES)]
    if not grans:
        raise InvalidInputError("granularities must name at least one granularity")
    return list(dict.fromkeys(grans))


class ReadMethods:
    """Search, history, profile and inspect, mixed into :class:`~memstrata.Memory`."""

    store: ChromaMemoryStore
    config: MemoryConfig

    def search(
        self,
        query: str,
        *,
        namespace: str,
        k: int = 10,
        granularities: Sequence[str] | None = None,
        window: TimeWindow | None = None,
        as_of: datetime | None = None,
    ) -> list[MemoryHit]:
        """Hybrid search over the granularities (default all four); no LLM is used.

        Facts are current ones only, unless ``as_of`` asks for what held at that time.
        A namespace with no memories gives an empty list.
        """
        require_text("query", query)
        require_namespace(namespace)
        require_positive_int("k", k)
        require_window(window)
        require_aware("as_of", as_of)
        found: dict[str, list[ScoredRecord]] = {}
        for gran in granularities_of(granularities):
            where = {"superseded": False} if gran == "fact" and as_of is None else None
            hits = self.store.search(query, gran, namespace, k=k, window=window, where=where)
            found[gran] = [h for h in hits if visible_at(h, as_of)]
        return merge_hits(found, k)

    async def asearch(
        self,
        query: str,
        *,
        namespace: str,
        k: int = 10,
        granularities: Sequence[str] | None = None,
        window: TimeWindow | None = None,
        as_of: datetime | None = None,
    ) -> list[MemoryHit]:
        """Async :meth:`search`."""
        return await asyncio.to_thread(
            self.search,
            query,
            namespace=namespace,
            k=k,
            granularities=granularities,
            window=window,
            as_of=as_of,
        )

    def history(self, memory_id: str, *, namespace: str) -> list[AuditEntry]:
        """The audit entries of a memory, with its facts' supersession chain, oldest first.

        A stored memory that never changed has an empty history; a forgotten one keeps
        its tombstone.

        Raises:
            RecordNotFoundError: ``memory_id`` names no memory of ``namespace``, stored
                or forgotten.
        """
        require_text("memory_id", memory_id)
        require_namespace(namespace)
        entries = history_of(self.store, namespace, memory_id)
        if not entries and not known_ids(self.store, namespace, [memory_id]):
            raise not_found(namespace, [memory_id])
        return entries

    async def ahistory(self, memory_id: str, *, namespace: str) -> list[AuditEntry]:
        """Async :meth:`history`."""
        return await asyncio.to_thread(self.history, memory_id, namespace=namespace)

    def profile(self, *, namespace: str) -> ProfileRecord | None:
        """The namespace's profile (distilled from scene summaries), or None."""
        return self.store.get_profile(require_namespace(namespace))

    async def aprofile(self, *, namespace: str) -> ProfileRecord | None:
        """Async :meth:`profile`."""
        return await asyncio.to_thread(self.profile, namespace=namespace)

    def inspect(
        self, *, namespace: str, granularity: str | None = None, limit: int = 50
    ) -> dict[str, list[MemoryRecord]]:
        """The most recent ``limit`` records per granularity (or of one), oldest first."""
        require_namespace(namespace)
        require_positive_int("limit", limit)
        if granularity is not None:
            require_text("granularity", granularity)
        grans = [parse_granularity(granularity).value] if granularity else ALL_GRANULARITIES
        return {g: self.store.get(g, namespace)[-limit:] for g in grans}
