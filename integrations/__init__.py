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

from __future__ import annotations

from ..core.lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    globals(),
    {
        "LaminaRetriever": ".retriever",
        "LaminaStore": ".langgraph_store",
        "MemoryMiddleware": ".middleware",
        "MemoryState": ".middleware",
        "NamespaceSource": ".namespace",
        "memory_tools": ".tools",
        "resolve_namespace": ".namespace",
    },
)
