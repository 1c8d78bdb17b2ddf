"""Namespace searches: both channels over the namespace's mirror, fused with RRF.

:func:`answer_request` answers a whole :class:`~lamina.stores.base.SearchRequest`:
every query text embedded once, the mirrors of its granularities brought up to date
together, then each ranking as :func:`search_mirror` ranks one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from ..errors import InvalidInputError
from ..records.model import Granularity, MemoryRecord, require_encodable
from .base import ScoredRecord, Search, SearchAnswer, SearchMode, SearchRequest
from .filters import SearchFilter
from .fusion import FusionConfig, reciprocal_rank_fusion
from .keyword import RankedIndex

MODES = ("hybrid", "dense", "bm25")

DenseFallback = Callable[
    [RankedIndex, list[float], SearchFilter, np.ndarray, int], list[tuple[MemoryRecord, float]]
]
"""Dense search for a mirror that keeps no vectors: ``(mirror, vector, filter, mask, depth)``."""
Mirrors = Callable[[Sequence[Granularity], str], Mapping[Granularity, RankedIndex]]
"""The mirrors of some granularities of a namespace, up to date: ``(granularities, namespace)``."""


def check_query(query: object, k: object, mode: object) -> None:
    """Reject a bad query, ``k`` or mode with a fix-it message."""
    if not isinstance(query, str) or not query.strip():
        raise InvalidInputError("query must be a non-empty string")
    require_encodable("query", query)
    if mode not in MODES:
        raise InvalidInputError(f"unknown search mode {mode!r}; use one of {MODES}")
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise InvalidInputError(f"k must be a positive int, got {k!r}")


def checked_searches(request: SearchRequest) -> tuple[list[Search], list[SearchFilter]]:
    """The rankings of ``request`` and their filters, every query and filter checked."""
    searches = request.searches()
    filters = [SearchFilter(request.namespace, s.window, s.where or {}) for s in searches]
    for s, flt in zip(searches, filters, strict=True):
        check_query(s.query, s.k, request.mode)
        flt.metadata_conditions(s.granularity)  # unknown filter fields fail before any work
    return searches, filters


def search_mirror(
    mirror: RankedIndex,
    query: str,
    vector: list[float] | None,
    flt: SearchFilter,
    *,
    k: int,
    mode: SearchMode,
    fusion: FusionConfig,
    hnsw: DenseFallback,
) -> list[ScoredRecord]:
    """Rank the mirror's records for ``query``: ``dense``, ``bm25`` or ``hybrid`` (RRF)."""
    depth = max(k, fusion.candidates) if mode == "hybrid" else k
    rankings: dict[str, list[str]] = {}
    channel_scores: dict[str, dict[str, float]] = {}
    records: dict[str, MemoryRecord] = {}
    with mirror.lock:
        allowed = mirror.allowed(flt)
        if mode in ("hybrid", "dense"):
            assert vector is not None
            if mirror.has_vectors:
                dense = mirror.dense(vector, depth, allowed)
            else:
                found = hnsw(mirror, vector, flt, allowed, depth)
                records.update((r.id, r) for r, _ in found)
                dense = [(r.id, s) for r, s in found]
            rankings["dense"] = [rid for rid, _ in dense]
            channel_scores["dense"] = dict(dense)
        if mode in ("hybrid", "bm25"):
            lexical = mirror.search(query, depth, allowed=allowed)
            rankings["bm25"] = [h.record_id for h in lexical]
            channel_scores["bm25"] = {h.record_id: h.score for h in lexical}
        fused = reciprocal_rank_fusion(rankings, fusion)[:k]
        for hit in fused:
            if hit.record_id not in records:
                record = mirror.record(hit.record_id)
                if record is not None:
                    records[hit.record_id] = record
    return [
        ScoredRecord(
            record=records[h.record_id],
            score=h.score,
            ranks=h.ranks,
            channel_scores={
                ch: s[h.record_id] for ch, s in channel_scores.items() if h.record_id in s
            },
        )
        for h in fused
        if h.record_id in records
    ]


def answer_request(
    request: SearchRequest,
    *,
    embed: Callable[[str], list[float]],
    mirrors: Mirrors,
    hnsw: Mapping[Granularity, DenseFallback],
    fusion: FusionConfig,
) -> SearchAnswer:
    """Every ranking of ``request``, each as :func:`search_mirror` ranks it.

    Every query and filter is checked before any work; each distinct query text is
    embedded once, and the granularities' mirrors are brought up to date together.
    """
    searches, filters = checked_searches(request)
    queries = dict.fromkeys(s.query for s in searches)
    vectors = {} if request.mode == "bm25" else {q: list(embed(q)) for q in queries}
    found = mirrors(list(dict.fromkeys(s.granularity for s in searches)), request.namespace)
    answer: SearchAnswer = {}
    for s, flt in zip(searches, filters, strict=True):
        hits = search_mirror(
            found[s.granularity],
            s.query,
            vectors.get(s.query),
            flt,
            k=s.k,
            mode=request.mode,
            fusion=fusion,
            hnsw=hnsw[s.granularity],
        )
        answer.setdefault(s.granularity.value, {})[s.channel] = hits
    return answer
