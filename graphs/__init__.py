"""The memory graphs: ingest, recall and the combined graph, with their state and context.

The graph builders are resolved lazily (removed once nothing below imports graphs).
``MemoryContext`` lives in :mod:`memstrata.core.context` and is re-exported here.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from ..core.context import MemoryContext

if TYPE_CHECKING:
    from .ingest import build_ingest_graph
    from .memory import build_memory_graph
    from .recall import build_recall_graph

_EXPORTS = {
    "build_ingest_graph": ".ingest",
    "build_memory_graph": ".memory",
    "build_recall_graph": ".recall",
}

__all__ = ["MemoryContext", "build_ingest_graph", "build_memory_graph", "build_recall_graph"]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
