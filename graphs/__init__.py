"""The memory graphs: ingest, recall and the combined graph, with their state and context."""

from .context import MemoryContext
from .ingest import build_ingest_graph
from .memory import build_memory_graph
from .recall import build_recall_graph

__all__ = ["MemoryContext", "build_ingest_graph", "build_memory_graph", "build_recall_graph"]
