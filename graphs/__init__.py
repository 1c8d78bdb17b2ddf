"""The memory graphs: ingest, recall and the combined graph, with their state and context.

Exports are resolved lazily: the agents import ``graphs.context`` and ``graphs.state``,
and loading the graph builders here eagerly would import the agents back.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .context import MemoryContext
    from .ingest import build_ingest_graph
    from .memory import build_memory_graph
    from .recall import build_recall_graph

_EXPORTS = {
    "MemoryContext": ".context",
    "build_ingest_graph": ".ingest",
    "build_memory_graph": ".memory",
    "build_recall_graph": ".recall",
}

__all__ = ["MemoryContext", "build_ingest_graph", "build_memory_graph", "build_recall_graph"]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
