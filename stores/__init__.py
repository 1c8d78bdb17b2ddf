"""Chroma-backed memory stores, BM25 mirror, hybrid fusion and the offline embedder.

The names below are imported on first use (:mod:`lamina.core.lazy`), so that importing
one light module of this package (``records``, ``filters``) does not load chromadb, numpy
and rank_bm25.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.lazy import lazy_exports

if TYPE_CHECKING:
    from .audit import AuditEntry
    from .base import MemoryStore, ScoredRecord, SearchMode
    from .bm25 import BM25Index, BM25Params
    from .chroma import ChromaMemoryStore
    from .embeddings import MiniLMEmbeddingFunction, MiniLMEmbeddings, OnnxMiniLM
    from .filters import SearchFilter, TimeWindow
    from .fusion import FusionConfig, reciprocal_rank_fusion
    from .indexing import IndexTextPolicy
    from .lexical import Analyzer
    from .mirror import MirrorConfig
    from .records import (
        EpisodeRecord,
        FactRecord,
        Granularity,
        MemoryRecord,
        ProfileRecord,
        RawTurn,
        SceneRecord,
    )

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
    "MemoryRecord",
    "MemoryStore",
    "MiniLMEmbeddingFunction",
    "MiniLMEmbeddings",
    "MirrorConfig",
    "OnnxMiniLM",
    "ProfileRecord",
    "RawTurn",
    "SceneRecord",
    "ScoredRecord",
    "SearchFilter",
    "SearchMode",
    "TimeWindow",
    "reciprocal_rank_fusion",
]

__getattr__, __dir__ = lazy_exports(
    globals(),
    {
        "Analyzer": f"{__name__}.lexical",
        "AuditEntry": f"{__name__}.audit",
        "BM25Index": f"{__name__}.bm25",
        "BM25Params": f"{__name__}.bm25",
        "ChromaMemoryStore": f"{__name__}.chroma",
        "EpisodeRecord": f"{__name__}.records",
        "FactRecord": f"{__name__}.records",
        "FusionConfig": f"{__name__}.fusion",
        "Granularity": f"{__name__}.records",
        "IndexTextPolicy": f"{__name__}.indexing",
        "MemoryRecord": f"{__name__}.records",
        "MemoryStore": f"{__name__}.base",
        "MiniLMEmbeddingFunction": f"{__name__}.embeddings",
        "MiniLMEmbeddings": f"{__name__}.embeddings",
        "MirrorConfig": f"{__name__}.mirror",
        "OnnxMiniLM": f"{__name__}.embeddings",
        "ProfileRecord": f"{__name__}.records",
        "RawTurn": f"{__name__}.records",
        "SceneRecord": f"{__name__}.records",
        "ScoredRecord": f"{__name__}.base",
        "SearchFilter": f"{__name__}.filters",
        "SearchMode": f"{__name__}.base",
        "TimeWindow": f"{__name__}.filters",
        "reciprocal_rank_fusion": f"{__name__}.fusion",
    },
)
