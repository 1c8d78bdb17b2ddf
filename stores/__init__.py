"""The Chroma-backed memory store and its search engine.

``ChromaMemoryStore`` (the store), ``MemoryStore`` (the protocol every node talks to) and
what a search takes and returns (``SearchMode``, ``ScoredRecord``); the search options
(``TimeWindow``, ``FusionConfig``, ``BM25Params``, ``Analyzer``, ``IndexTextPolicy``,
``MirrorConfig``) and the BM25 index a store keeps (``BM25Index``); and the keyword-engine
seam a backend with its own sparse or hybrid search implements (``KeywordIndex``,
``KeywordIndexFactory``, ``KeywordSources``, ``RankedIndex``). The records the store
keeps are exported by :mod:`lamina.records`, its embedders by :mod:`lamina.embedders`,
and the Postgres store by :mod:`lamina.stores.postgres`.

The names are imported on first use (:mod:`lamina.core.lazy`), so that importing one
light module of this package (``filters``) does not load chromadb, numpy and rank_bm25.
"""

from __future__ import annotations

from ..core.lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    globals(),
    {
        "Analyzer": ".lexical",
        "BM25Index": ".bm25",
        "BM25Params": ".okapi",
        "ChromaMemoryStore": ".chroma",
        "FusionConfig": ".fusion",
        "IndexTextPolicy": ".indexing",
        "KeywordIndex": ".keyword",
        "KeywordIndexFactory": ".keyword",
        "KeywordSources": ".keyword",
        "MemoryStore": ".base",
        "MirrorConfig": ".mirror",
        "RankedIndex": ".keyword",
        "ScoredRecord": ".base",
        "SearchMode": ".base",
        "TimeWindow": ".filters",
    },
)
