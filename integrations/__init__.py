"""memstrata inside LangChain agents: memory tools and an agent middleware.

``memory_tools(memory)`` gives ``search_memory``, ``remember`` and ``forget``;
``MemoryMiddleware(memory)`` recalls before the model call and remembers after the turn.
Both read the namespace from the agent's runtime context, never from model output.
``MemstrataStore(store)`` is a LangGraph ``BaseStore`` (``graph.compile(store=...)``,
LangMem's tools); ``MemstrataRetriever(memory=..., namespace=...)`` is a LangChain retriever.
:mod:`~memstrata.integrations.studio` is the graph factory ``langgraph dev`` and LangGraph
Studio load (``langgraph.json``); it is not imported here.
"""

from .langgraph_store import MemstrataStore
from .middleware import MemoryMiddleware, MemoryState
from .namespace import NamespaceSource, resolve_namespace
from .retriever import MemstrataRetriever
from .tools import memory_tools

__all__ = [
    "MemoryMiddleware",
    "MemoryState",
    "MemstrataRetriever",
    "MemstrataStore",
    "NamespaceSource",
    "memory_tools",
    "resolve_namespace",
]
