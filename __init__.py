"""lamina: long-term memory for LLM agents, built as a LangGraph workflow.

``import lamina`` loads neither Chroma nor LangChain nor LangGraph: every public name
but :class:`LaminaError` is imported on first use (:mod:`lamina.core.lazy`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

# Absolute imports on purpose: the repository root is this package, and pytest imports
# this file on its own (as the root package of the tests) when the checkout's folder name
# is not a Python identifier (e.g. ``lamina-main``); relative imports fail there.
from lamina.core.lazy import lazy_exports
from lamina.errors import LaminaError

if TYPE_CHECKING:
    from lamina.config import MemoryConfig
    from lamina.embedders.minilm import MiniLMEmbeddings
    from lamina.memory import Memory, UpdateResult
    from lamina.memory.results import AddResult, AnswerResult, ForgetResult, MemoryHit
    from lamina.records.model import (
        EpisodeRecord,
        FactRecord,
        Granularity,
        RawTurn,
        SceneRecord,
    )
    from lamina.stores.base import MemoryStore, ScoredRecord
    from lamina.stores.chroma import ChromaMemoryStore
    from lamina.stores.filters import TimeWindow

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
    "LaminaError",
    "MiniLMEmbeddings",
    "RawTurn",
    "SceneRecord",
    "ScoredRecord",
    "TimeWindow",
]
__version__ = "0.1.0"

__getattr__, __dir__ = lazy_exports(
    globals(),
    {
        "AddResult": "lamina.memory.results",
        "AnswerResult": "lamina.memory.results",
        "ChromaMemoryStore": "lamina.stores.chroma",
        "EpisodeRecord": "lamina.records.model",
        "FactRecord": "lamina.records.model",
        "ForgetResult": "lamina.memory.results",
        "Granularity": "lamina.records.model",
        "Memory": "lamina.memory",
        "MemoryConfig": "lamina.config",
        "MemoryHit": "lamina.memory.results",
        "MemoryStore": "lamina.stores.base",
        "MiniLMEmbeddings": "lamina.embedders.minilm",
        "RawTurn": "lamina.records.model",
        "SceneRecord": "lamina.records.model",
        "ScoredRecord": "lamina.stores.base",
        "TimeWindow": "lamina.stores.filters",
        "UpdateResult": "lamina.memory",
    },
)
