"""lamina inside LangChain agents: memory tools and an agent middleware.

``memory_tools(memory)`` gives ``search_memory``, ``remember`` and ``forget``;
``MemoryMiddleware(memory)`` recalls before the model call and remembers after the turn.
Both read the namespace from the agent's runtime context, never from model output.
``LaminaStore(store)`` is a LangGraph ``BaseStore`` (``graph.compile(store=...)``,
LangMem's tools); ``LaminaRetriever(memory=..., namespace=...)`` is a LangChain retriever.
:mod:`~lamina.integrations.studio` is the graph factory ``langgraph dev`` and LangGraph
Studio load (``langgraph.json``). The names are imported on first use
(:mod:`lamina.core.lazy`), so loading the Studio graph does not import LangChain's agents.
"""

from typing import TYPE_CHECKING

from ..core.lazy import lazy_exports

if TYPE_CHECKING:
    from .langgraph_store import LaminaStore
    from .middleware import MemoryMiddleware, MemoryState
    from .namespace import NamespaceSource, resolve_namespace
    from .retriever import LaminaRetriever
    from .tools import memory_tools

__all__ = [
    "MemoryMiddleware",
    "MemoryState",
    "LaminaRetriever",
    "LaminaStore",
    "NamespaceSource",
    "memory_tools",
    "resolve_namespace",
]

__getattr__, __dir__ = lazy_exports(
    globals(),
    {
        "LaminaStore": f"{__name__}.langgraph_store",
        "MemoryMiddleware": f"{__name__}.middleware",
        "MemoryState": f"{__name__}.middleware",
        "NamespaceSource": f"{__name__}.namespace",
        "resolve_namespace": f"{__name__}.namespace",
        "LaminaRetriever": f"{__name__}.retriever",
        "memory_tools": f"{__name__}.tools",
    },
)
