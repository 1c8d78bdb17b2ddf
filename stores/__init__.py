"""Chroma-backed memory stores, BM25 mirror, hybrid fusion and the offline embedder."""

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
