"""The Chroma-backed memory store, its search options, and what it stores and returns.

``ChromaMemoryStore`` (the store), ``MemoryStore`` (the protocol every node talks to),
the search options (``TimeWindow``, ``FusionConfig``, ``BM25Params``, ``Analyzer``,
``IndexTextPolicy``, ``MirrorConfig``), the results (``ScoredRecord``, ``BM25Index``), the
keyword-engine seam a backend with its own sparse or hybrid search implements
(``KeywordIndex``, ``KeywordIndexFactory``, ``KeywordSources``, ``RankedIndex``), and,
for convenience, the record types (home: :mod:`lamina.records`) and the default embedder
(home: :mod:`lamina.embedders`). The search engine's internals stay in their modules.

The names below are imported on first use (:mod:`lamina.core.lazy`), so that importing
one light module of this package (``filters``) does not load chromadb, numpy and
rank_bm25.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.lazy import lazy_exports

if TYPE_CHECKING:
    from ..embedders.minilm import MiniLMEmbeddingFunction, MiniLMEmbeddings
    from ..records.audit import AuditEntry
    from ..records.model import (
        EpisodeRecord,
        FactRecord,
        Granularity,
        MemoryRecord,
        ProfileRecord,
        RawTurn,
        SceneRecord,
    )
    from .base import MemoryStore, ScoredRecord, SearchMode
    from .bm25 import BM25Index
    from .chroma import ChromaMemoryStore
    from .filters import TimeWindow
    from .fusion import FusionConfig
    from .indexing import IndexTextPolicy
    from .keyword import KeywordIndex, KeywordIndexFactory, KeywordSources, RankedIndex
    from .lexical import Analyzer
    from .mirror import MirrorConfig
    from .okapi import BM25Params

__all__ = [
    "Analyzer",
    "AuditEntry",
    "BM25Index",
    "BM25Params",
    "ChromaMemoryStore",
    "EpisodeRecord",
    "FactRecord",
    "FusionConfig",
    "Granularity",
    "IndexTextPolicy",
    "KeywordIndex",
    "KeywordIndexFactory",
    "KeywordSources",
    "MemoryRecord",
    "MemoryStore",
    "MiniLMEmbeddingFunction",
    "MiniLMEmbeddings",
    "MirrorConfig",
    "ProfileRecord",
    "RankedIndex",
    "RawTurn",
    "SceneRecord",
    "ScoredRecord",
    "SearchMode",
    "TimeWindow",
]

__getattr__, __dir__ = lazy_exports(
    globals(),
    {
        "Analyzer": f"{__name__}.lexical",
        "AuditEntry": "lamina.records.audit",
        "BM25Index": f"{__name__}.bm25",
        "BM25Params": f"{__name__}.okapi",
        "ChromaMemoryStore": f"{__name__}.chroma",
        "EpisodeRecord": "lamina.records.model",
        "FactRecord": "lamina.records.model",
        "FusionConfig": f"{__name__}.fusion",
        "Granularity": "lamina.records.model",
        "IndexTextPolicy": f"{__name__}.indexing",
        "KeywordIndex": f"{__name__}.keyword",
        "KeywordIndexFactory": f"{__name__}.keyword",
        "KeywordSources": f"{__name__}.keyword",
        "RankedIndex": f"{__name__}.keyword",
        "MemoryRecord": "lamina.records.model",
        "MemoryStore": f"{__name__}.base",
        "MiniLMEmbeddingFunction": "lamina.embedders.minilm",
        "MiniLMEmbeddings": "lamina.embedders.minilm",
        "MirrorConfig": f"{__name__}.mirror",
        "ProfileRecord": "lamina.records.model",
        "RawTurn": "lamina.records.model",
        "SceneRecord": "lamina.records.model",
        "ScoredRecord": f"{__name__}.base",
        "SearchMode": f"{__name__}.base",
        "TimeWindow": f"{__name__}.filters",
    },
)
