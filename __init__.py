"""lamina: long-term memory for LLM agents, built as a LangGraph workflow.

The names most users need: the :class:`Memory` facade, its :class:`MemoryConfig` and what
``search`` and ``answer`` return; :func:`build_memory_graph` and its run context, for a
LangGraph application of your own; the Chroma store and the protocol every store meets;
the time window a search can take; the error every lamina error derives from. Each layer
has a face of its own for the rest: :mod:`lamina.memory`, :mod:`lamina.graphs`,
:mod:`lamina.stores`, :mod:`lamina.integrations`, and the homes of the records
(:mod:`lamina.records`) and embedders (:mod:`lamina.embedders`).

``import lamina`` loads neither Chroma nor LangChain nor LangGraph: each name below is
declared once and imported on first use (:mod:`lamina.core.lazy`, which also writes the
type stub ``__init__.pyi`` from this mapping).
"""

from __future__ import annotations

# Absolute imports on purpose: the repository root is this package, and pytest imports
# this file on its own (as the root package of the tests) when the checkout's folder name
# is not a Python identifier (e.g. ``lamina-main``); relative imports fail there.
from lamina.core.lazy import lazy_exports

__version__ = "0.1.0"

__all__, __getattr__, __dir__ = lazy_exports(
    globals(),
    {
        "AnswerResult": "lamina.memory.results",
        "ChromaMemoryStore": "lamina.stores.chroma",
        "LaminaError": "lamina.errors",
        "Memory": "lamina.memory.facade",
        "MemoryConfig": "lamina.config",
        "MemoryContext": "lamina.core.context",
        "MemoryHit": "lamina.memory.results",
        "MemoryStore": "lamina.stores.base",
        "TimeWindow": "lamina.stores.filters",
        "build_memory_graph": "lamina.graphs.memory",
    },
)
