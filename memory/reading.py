"""The read side of :class:`~lamina.Memory`: search, get_all, history, profile, inspect.

None of these calls an LLM. Every one reads a single namespace.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Unpack

from ..config import MemoryConfig
from ..records.audit import AuditEntry
from ..records.model import MemoryRecord, ProfileRecord, parse_granularity
from ..stores.base import ScoredRecord
from ..stores.chroma import ChromaMemoryStore
from ..stores.expiry import unexpired
from ..stores.filters import TimeWindow
from ..stores.namespaces import namespace_counts, pending_namespaces
from .async_reads import AsyncReads, search_async, with_similarity, with_speakers, without_dense
from .history import memory_history
from .hits import ALL_GRANULARITIES, merge_hits, visible_at
from .inputs import require_namespace, require_positive_int, require_query, require_text
from .results import MemoryHit
from .search_plan import SearchArgs, in_time_order, listing_plan, search_plan
from .twins import in_thread


class ReadMethods:
    """Search, get_all, history, profile and inspect, mixed into :class:`~lamina.Memory`."""

    store: ChromaMemoryStore
    config: MemoryConfig

    def search(
        self,
        query: str,
        *,
        namespace: str,
        k: int | None = None,
        granularities: Sequence[str] | None = None,
        window: TimeWindow | None = None,
        as_of: datetime | None = None,
        filters: Mapping[str, object] | None = None,
        top_k: int | None = None,
        threshold: float | None = None,
    ) -> list[MemoryHit]:
        """Hybrid search over the granularities (default all four); no LLM is used.

        Facts are current ones only, unless ``as_of`` asks for what held at that time.
        A namespace with no memories gives an empty list. A speaker the query names by a
        nickname, short form or other spelling ("Kate", "Max", "Jose") is also searched
        for by their label ("Katherine", "Maxine", "José").

        Args:
            query: What to look for.
            namespace: The scope searched.
            k: How many hits at most (default 10).
            granularities: Any of raw, fact, episode, scene (default all).
            window: Only memories that happened in this time window.
            as_of: What memory held at that time (superseded facts included).
            filters: Metadata conditions and an ``occurred_at`` time range; see
                :mod:`lamina.memory.filters`. Only memories carrying the metadata
                match, which are the raw turns it was added with.
            top_k: mem0's name for ``k``; give one of the two.
            threshold: Minimum cosine similarity (0-1) of query and memory.
        """
        plan = search_plan(
            query, namespace, k, granularities, window, as_of, filters, top_k, threshold
        )
        query = with_speakers(query, self.store.lexical_index("raw", namespace).distinct("speaker"))
        found: dict[str, list[ScoredRecord]] = {}
        for gran, where in plan.wheres:
            hits = self.store.search(
                query, gran, namespace, k=plan.k, window=plan.window, where=where
            )
            hits = [h for h in unexpired(hits) if visible_at(h, as_of)]
            if plan.minimum is not None and (missing := without_dense(hits)):
                vectors = self.store.vectors(gran, namespace, missing)
                hits = with_similarity(hits, vectors, self.store.embeddings.embed_query(query))
            found[gran] = plan.similar_enough(hits)
        return merge_hits(found, plan.k)

    async def asearch(
        self, query: str, *, namespace: str, **options: Unpack[SearchArgs]
    ) -> list[MemoryHit]:
        """Async :meth:`search`, with the same arguments and results.

        On a store with async calls (Postgres) it awaits them, every granularity at
        once; on another store it runs :meth:`search` in a worker thread.
        """
        plan = search_plan(query, namespace, **options)
        if not isinstance(self.store, AsyncReads):
            return await asyncio.to_thread(self.search, query, namespace=namespace, **options)
        return await search_async(self.store, plan, query, namespace, options.get("as_of"))

    def get_all(
        self,
        *,
        namespace: str,
        filters: Mapping[str, object] | None = None,
        granularities: Sequence[str] | None = None,
        limit: int | None = None,
    ) -> list[MemoryRecord]:
        """Every current memory of ``namespace`` that passes ``filters``, oldest first.

        Superseded facts are left out (:meth:`history` shows them). No LLM is used.

        Args:
            namespace: The scope listed.
            filters: Metadata conditions and an ``occurred_at`` time range, as in
                :meth:`search`.
            granularities: Any of raw, fact, episode, scene (default all).
            limit: Keep only the ``limit`` most recent.
        """
        window, wheres = listing_plan(namespace, filters, granularities, limit)
        found = [unexpired(self.store.get(g, namespace, window=window, where=w)) for g, w in wheres]
        return in_time_order(found, limit)

    async def aget_all(
        self,
        *,
        namespace: str,
        filters: Mapping[str, object] | None = None,
        granularities: Sequence[str] | None = None,
        limit: int | None = None,
    ) -> list[MemoryRecord]:
        """Async :meth:`get_all`: awaited on a store with async calls (Postgres)."""
        window, wheres = listing_plan(namespace, filters, granularities, limit)
        store = self.store
        if not isinstance(store, AsyncReads):
            return await asyncio.to_thread(
                self.get_all,
                namespace=namespace,
                filters=filters,
                granularities=granularities,
                limit=limit,
            )
        found = await asyncio.gather(
            *(store.aget(g, namespace, window=window, where=w) for g, w in wheres)
        )
        return in_time_order([unexpired(f) for f in found], limit)

    def namespaces(self) -> dict[str, dict[str, int]]:
        """Every namespace the store holds, with its records per granularity; no LLM.

        ``{"user:alice": {"raw": 12, "fact": 5, "episode": 2, "scene": 1}}``, sorted by
        namespace; a granularity with no record is left out, and ``pending`` counts the
        raw turns still awaiting background consolidation.
        """
        counts = namespace_counts(self.store)
        for ns, n in pending_namespaces(self.store).items():
            counts.setdefault(ns, {})["pending"] = n
        return dict(sorted(counts.items()))

    anamespaces = in_thread(namespaces)
    """Async :meth:`namespaces` (run in a worker thread)."""

    def history(self, memory_id: str, *, namespace: str) -> list[AuditEntry]:
        """The versions of a memory and what changed them, oldest first (mem0's history).

        An ``add`` entry for each record of the memory still stored (with the facts of
        its supersession chain: every version of a fact), holding the text it was stored
        with, then the audit entries that changed it: ``update``, ``supersede``,
        ``delete``. A memory that never changed has its ``add`` entry; a forgotten one
        keeps only its tombstone (``forget``), which holds no content.

        Raises:
            RecordNotFoundError: ``memory_id`` names no memory of ``namespace``, stored
                or forgotten.
        """
        require_query("memory_id", memory_id)
        require_namespace(namespace)
        return memory_history(self.store, namespace, memory_id)

    ahistory = in_thread(history)
    """Async :meth:`history`, with the same arguments (run in a worker thread)."""

    def profile(self, *, namespace: str) -> ProfileRecord | None:
        """The namespace's profile (distilled from scene summaries), or None."""
        return self.store.get_profile(require_namespace(namespace))

    async def aprofile(self, *, namespace: str) -> ProfileRecord | None:
        """Async :meth:`profile`: awaited on a store with async calls (Postgres)."""
        if not isinstance(self.store, AsyncReads):
            return await asyncio.to_thread(self.profile, namespace=namespace)
        return await self.store.aget_profile(require_namespace(namespace))

    def inspect(
        self, *, namespace: str, granularity: str | None = None, limit: int = 50
    ) -> dict[str, list[MemoryRecord]]:
        """The most recent ``limit`` records per granularity (or of one), oldest first."""
        require_namespace(namespace)
        require_positive_int("limit", limit)
        if granularity is not None:
            require_text("granularity", granularity)
        grans = [parse_granularity(granularity).value] if granularity else ALL_GRANULARITIES
        return {g: unexpired(self.store.get(g, namespace))[-limit:] for g in grans}

    ainspect = in_thread(inspect)
    """Async :meth:`inspect`, with the same arguments (run in a worker thread)."""
