"""memstrata: long-term memory for LLM agents, built as a LangGraph workflow."""

from .errors import MemstrataError
from .stores import (
    ChromaMemoryStore,
    EpisodeRecord,
    FactRecord,
    Granularity,
    MemoryStore,
    MiniLMEmbeddings,
    RawTurn,
    SceneRecord,
    ScoredRecord,
    TimeWindow,
)

__all__ = [
    "ChromaMemoryStore",
    "EpisodeRecord",
    "FactRecord",
    "Granularity",
    "MemoryStore",
    "MemstrataError",
    "MiniLMEmbeddings",
    "RawTurn",
    "SceneRecord",
    "ScoredRecord",
    "TimeWindow",
]
__version__ = "0.1.0"
