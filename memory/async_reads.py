"""The facade's async reads on a store with async calls: awaited, never a worker thread.

A store that has the async twins of its reads (Postgres, :mod:`lamina.stores.postgres.aio`)
is an :class:`AsyncReads`. ``Memory.asearch`` then awaits its searches (every granularity
at once) instead of running the sync search in a thread, and gives the same hits.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any, Protocol, Unpack, runtime_checkable

import numpy as np
from langchain_core.embeddings import Embeddings

from ..agents.common.names import with_speaker_names
from ..records.model import Granularity, MemoryRecord, ProfileRecord
from ..stores.base import GetOptions, ScoredRecord, SearchOptions, Where
from ..stores.expiry import unexpired
from .hits import merge_hits, visible_at
from .inputs import ROLE_SPEAKERS
from .results import MemoryHit
from .search_plan import SearchPlan


@runtime_checkable
class AsyncReads(Protocol):
    """The async reads the facade awaits (``PostgresMemoryStore`` has them)."""

    embeddings: Embeddings

    async def asearch(
        self,
        query: str,
        granularity: Granularity | str,
        namespace: str,
        **options: Unpack[SearchOptions],
    ) -> list[ScoredRecord]:
        """Async ``search``."""
        ...

    async def aget(
        self,
        granularity: Granularity | str,
        namespace: str,
        ids: Sequence[str] | None = None,
        **options: Unpack[GetOptions],
    ) -> list[MemoryRecord]:
        """Async ``get``."""
        ...

    async def adistinct(
        self, granularity: Granularity | str, namespace: str, key: str, limit: int = 64
    ) -> list[Any]:
        """Async ``lexical_index(granularity, namespace).distinct(key, limit)``."""
        ...

    async def avectors(
        self, granularity: Granularity | str, namespace: str, ids: Sequence[str]
    ) -> dict[str, list[float]]:
        """Async ``vectors``."""
        ...

    async def aget_profile(self, namespace: str) -> ProfileRecord | None:
        """Async ``get_profile``."""
        ...


async def search_async(
    store: AsyncReads, plan: SearchPlan, query: str, namespace: str, as_of: datetime | None
) -> list[MemoryHit]:
    """``Memory.search``'s hits for a checked ``plan``, every granularity searched at once."""
    query = with_speakers(query, await store.adistinct("raw", namespace, "speaker"))

    async def one(gran: str, where: Where | None) -> list[ScoredRecord]:
        hits = await store.asearch(
            query, gran, namespace, k=plan.k, window=plan.window, where=where
        )
        hits = [h for h in unexpired(hits) if visible_at(h, as_of)]
        if plan.minimum is not None and (missing := without_dense(hits)):
            vectors = await store.avectors(gran, namespace, missing)
            hits = with_similarity(hits, vectors, await store.embeddings.aembed_query(query))
        return plan.similar_enough(hits)

    found = await asyncio.gather(*(one(gran, where) for gran, where in plan.wheres))
    return merge_hits(
        {gran: hits for (gran, _), hits in zip(plan.wheres, found, strict=True)}, plan.k
    )


def with_speakers(query: str, speakers: Sequence[object]) -> str:
    """The query with the speakers it names by a nickname or short form spelled out.

    "Where did Kate go hiking?" also searches for the speaker "Katherine", as her turns
    and the memories about her write it.
    """
    names = [s for s in speakers if isinstance(s, str) and s not in ROLE_SPEAKERS]
    return with_speaker_names(query, names)


def without_dense(hits: list[ScoredRecord]) -> list[str]:
    """The ids of the hits the search gave no cosine similarity (dense score)."""
    return [h.record.id for h in hits if "dense" not in h.channel_scores]


def with_similarity(
    hits: list[ScoredRecord], vectors: dict[str, list[float]], query_vector: list[float]
) -> list[ScoredRecord]:
    """``hits``, each without a dense score given its cosine similarity to the query."""
    q = np.asarray(query_vector, dtype=float)
    out = []
    for hit in hits:
        vector = vectors.get(hit.record.id)
        if "dense" not in hit.channel_scores and vector is not None:
            v = np.asarray(vector, dtype=float)
            cos = float(q @ v / ((np.linalg.norm(q) * np.linalg.norm(v)) or 1.0))
            hit = replace(hit, channel_scores={**hit.channel_scores, "dense": cos})
        out.append(hit)
    return out


__all__ = ["AsyncReads", "search_async", "with_similarity", "with_speakers", "without_dense"]
