"""memstrata: long-term memory for LLM agents, built as a LangGraph workflow.

``import memstrata`` loads neither Chroma nor LangChain nor LangGraph: every public name
but :class:`MemstrataError` is imported on first use (:mod:`memstrata.core.lazy`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

# Absolute imports on purpose: the repository root is this package, and pytest imports
# this file on its own (as the root package of the tests) when the checkout's folder name
# is not a Python identifier (e.g. ``memstrata-main``); relative imports fail there.
from memstrata.core import moved
from memstrata.core.lazy import lazy_exports
from memstrata.errors import MemstrataError

if TYPE_CHECKING:
    from memstrata.config import MemoryConfig
    from memstrata.memory import Memory, UpdateResult
    from memstrata.memory.results import AddResult, AnswerResult, ForgetResult, MemoryHit
    from memstrata.stores.base import MemoryStore, ScoredRecord
    from memstrata.stores.chroma import ChromaMemoryStore
    from memstrata.stores.embeddings import MiniLMEmbeddings
    from memstrata.stores.filters import TimeWindow
    from memstrata.stores.records import (
        EpisodeRecord,
        FactRecord,
        Granularity,
        RawTurn,
        SceneRecord,
    )

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

__getattr__, __dir__ = lazy_exports(
    globals(),
    {
        "AddResult": "memstrata.memory.results",
        "AnswerResult": "memstrata.memory.results",
        "ChromaMemoryStore": "memstrata.stores.chroma",
        "EpisodeRecord": "memstrata.stores.records",
        "FactRecord": "memstrata.stores.records",
        "ForgetResult": "memstrata.memory.results",
        "Granularity": "memstrata.stores.records",
        "Memory": "memstrata.memory",
        "MemoryConfig": "memstrata.config",
        "MemoryHit": "memstrata.memory.results",
        "MemoryStore": "memstrata.stores.base",
        "MiniLMEmbeddings": "memstrata.stores.embeddings",
        "RawTurn": "memstrata.stores.records",
        "SceneRecord": "memstrata.stores.records",
        "ScoredRecord": "memstrata.stores.base",
        "TimeWindow": "memstrata.stores.filters",
        "UpdateResult": "memstrata.memory",
    },
)
