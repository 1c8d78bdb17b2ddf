"""The memory graphs: ingest, recall and the combined graph, built from the agents' nodes.

Each builder returns an uncompiled ``StateGraph`` over the state and context of
:mod:`lamina.core`; ``MemoryContext`` is re-exported here for callers that compile
and run a graph themselves.
"""

from ..core.context import MemoryContext
from .ingest import build_ingest_graph
from .memory import build_memory_graph
from .recall import build_recall_graph

__all__ = ["MemoryContext", "build_ingest_graph", "build_memory_graph", "build_recall_graph"]
