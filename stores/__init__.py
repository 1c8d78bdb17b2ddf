"""Chroma-backed memory stores, BM25 mirror, hybrid fusion and the offline embedder.

The names below are imported on first use (:mod:`lamina.core.lazy`), so that importing
one light module of this package (``records``, ``filters``) does not load chromadb, numpy
and rank_bm25.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.lazy import lazy_exports

if TYPE_CHECKING:
    from ..embedders.minilm import MiniLMEmbeddingFunction, MiniLMEmbeddings, OnnxMiniLM
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
    from .filters import SearchFilter, TimeWindow
    from .fusion import FusionConfig, reciprocal_rank_fusion
    from .indexing import IndexTextPolicy
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
        "AuditEntry": "lamina.records.audit",
        "BM25Index": f"{__name__}.bm25",
        "BM25Params": f"{__name__}.okapi",
        "ChromaMemoryStore": f"{__name__}.chroma",
        "EpisodeRecord": "lamina.records.model",
        "FactRecord": "lamina.records.model",
        "FusionConfig": f"{__name__}.fusion",
        "Granularity": "lamina.records.model",
        "IndexTextPolicy": f"{__name__}.indexing",
        "MemoryRecord": "lamina.records.model",
        "MemoryStore": f"{__name__}.base",
        "MiniLMEmbeddingFunction": "lamina.embedders.minilm",
        "MiniLMEmbeddings": "lamina.embedders.minilm",
        "MirrorConfig": f"{__name__}.mirror",
        "OnnxMiniLM": "lamina.embedders.minilm",
        "ProfileRecord": "lamina.records.model",
        "RawTurn": "lamina.records.model",
        "SceneRecord": "lamina.records.model",
        "ScoredRecord": f"{__name__}.base",
        "SearchFilter": f"{__name__}.filters",
        "SearchMode": f"{__name__}.base",
        "TimeWindow": f"{__name__}.filters",
        "reciprocal_rank_fusion": f"{__name__}.fusion",
    },
)
