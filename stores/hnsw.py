"""Dense search through Chroma's HNSW index, for namespaces too large to mirror vectors.

Chroma evaluates a ``where`` clause row by row before its vector search, which costs
O(rows) per query. So the HNSW index is queried without one, the namespace and filters
are checked on the returned rows, and the query is repeated with a larger
``n_results`` while too few pass; only when a filter is very selective (fewer than 1 in
~``OVERSAMPLE_CAP / depth`` rows) does Chroma filter instead. A time window or filter
that the mirror resolves to at most :data:`EXACT_CAP` records is ranked exactly by
Chroma over just those ids.
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np
from chromadb.api.models.Collection import Collection

from ..records.model import MemoryRecord
from .chroma_calls import ChromaCalls
from .codec import from_metadata, row_id
from .filters import SearchFilter
from .keyword import RankedIndex

OVERSAMPLE_CAP = 4096
"""Largest unfiltered ``n_results`` tried before Chroma's own filtering takes over."""
EXACT_CAP = 2000
"""A filtered set of at most this many records is ranked exactly, by id."""

Hits = list[tuple[MemoryRecord, float]]


def hnsw_dense(
    calls: ChromaCalls,
    collection: Collection,
    mirror: RankedIndex,
    vector: list[float],
    flt: SearchFilter,
    allowed: np.ndarray,
    depth: int,
) -> Hits:
    """Nearest neighbours of ``vector`` among the records ``flt`` lets through."""
    gran = mirror.granularity
    test = flt.predicate(gran)
    query = cast(Any, [vector])
    if flt.window is not None or flt.where:
        count = int(allowed.sum())
        if count == 0:
            return []
        if count <= EXACT_CAP:
            ids = mirror.window_ids(allowed)
            result = calls.read(
                collection.query,
                query_embeddings=query,
                n_results=min(depth, len(ids)),
                ids=[row_id(flt.namespace, x) for x in ids],
                include=["metadatas", "distances"],
            )
            return _hits(gran, result, test)
    n = depth
    while True:
        result = calls.read(
            collection.query,
            query_embeddings=query,
            n_results=n,
            include=["metadatas", "distances"],
        )
        metas = (result["metadatas"] or [[]])[0]
        passing = sum(1 for m in metas if test(m))
        if passing >= depth or len(metas) < n:  # enough, or all rows seen
            return _hits(gran, result, test)[:depth]
        if n >= OVERSAMPLE_CAP:
            result = calls.read(
                collection.query,
                query_embeddings=query,
                n_results=depth,
                where=flt.to_chroma_where(gran),
                include=["metadatas", "distances"],
            )
            return _hits(gran, result, test)
        rate = max(passing, 1) / max(len(metas), 1)
        n = min(OVERSAMPLE_CAP, max(2 * n, int(1.5 * depth / rate)))


def _hits(gran: Any, result: Any, test: Any) -> Hits:
    metas = (result["metadatas"] or [[]])[0]
    dists = (result["distances"] or [[]])[0]
    hits = [
        (from_metadata(gran, dict(m)), 1.0 - float(d))
        for m, d in zip(metas, dists, strict=True)
        if test(m)  # the namespace and every filter are checked again on Chroma's rows
    ]
    hits.sort(key=lambda h: (-h[1], h[0].id))
    return hits
