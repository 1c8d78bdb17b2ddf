"""memstrata: long-term memory for LLM agents, built as a LangGraph workflow."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

# Absolute imports on purpose: the repository root is this package, and pytest imports
# this file on its own (as the root package of the tests) when the checkout's folder name
# is not a Python identifier (e.g. ``memstrata-main``); relative imports fail there.
from memstrata.core import moved
from memstrata.errors import MemstrataError
from memstrata.stores import (
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
    from memstrata.config import MemoryConfig
    from memstrata.memory import Memory, UpdateResult
    from memstrata.memory.results import AddResult, AnswerResult, ForgetResult, MemoryHit

# the facade pulls in LangGraph and the agents; load it on first use
_LAZY = {
    "Memory": "memstrata.memory",
    "MemoryConfig": "memstrata.config",
    "AddResult": "memstrata.memory.results",
    "AnswerResult": "memstrata.memory.results",
    "ForgetResult": "memstrata.memory.results",
    "MemoryHit": "memstrata.memory.results",
    "UpdateResult": "memstrata.memory",
}

__all__ = [
    "AddResult",
    "AnswerResult",
    "ForgetResult",
    "Memory",
    "MemoryConfig",
    "MemoryHit",
    "UpdateResult",
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

moved.install()  # old module paths still import, with a DeprecationWarning, until 0.2


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
