"""memstrata: long-term memory for LLM agents, built as a LangGraph workflow."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
    from .config import MemoryConfig
    from .memory import Memory
    from .results import AddResult, AnswerResult, ForgetResult, MemoryHit

# the facade pulls in LangGraph and the agents; load it on first use
_LAZY = {
    "Memory": ".memory",
    "MemoryConfig": ".config",
    "AddResult": ".results",
    "AnswerResult": ".results",
    "ForgetResult": ".results",
    "MemoryHit": ".results",
}

__all__ = [
    "AddResult",
    "AnswerResult",
    "ForgetResult",
    "Memory",
    "MemoryConfig",
    "MemoryHit",
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


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
