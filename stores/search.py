"""One namespace search: both channels over the namespace's mirror, fused with RRF."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..errors import InvalidInputError
from .base import ScoredRecord, SearchMode
from .filters import SearchFilter
from .fusion import FusionConfig, reciprocal_rank_fusion
from .mirror import NamespaceMirror
from .records import MemoryRecord, require_encodable

MODES = ("hybrid", "dense", "bm25")

DenseFallback = Callable[
    [NamespaceMirror, list[float], SearchFilter, np.ndarray, int], list[tuple[MemoryRecord, float]]
]
"""Dense search for a mirror that keeps no vectors: ``(mirror, vector, filter, mask, depth)``."""


def check_query(query: object, k: object, mode: object) -> None:
    """Reject a bad query, ``k`` or mode with a fix-it message."""
    if not isinstance(query, str) or not query.strip():
        raise InvalidInputError("query must be a non-empty string")
    require_encodable("query", query)
    if mode not in MODES:
        raise InvalidInputError(f"unknown search mode {mode!r}; use one of {MODES}")
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise InvalidInputError(f"k must be a positive int, got {k!r}")


def search_mirror(
    mirror: NamespaceMirror,
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
    with mirror._lock:
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
