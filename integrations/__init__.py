"""memstrata inside LangChain agents: memory tools and an agent middleware.

``memory_tools(memory)`` gives ``search_memory``, ``remember`` and ``forget``;
``MemoryMiddleware(memory)`` recalls before the model call and remembers after the turn.
Both read the namespace from the agent's runtime context, never from model output.
"""

from .middleware import MemoryMiddleware, MemoryState
from .namespace import NamespaceSource, resolve_namespace
from .tools import memory_tools

__all__ = [
    "MemoryMiddleware",
    "MemoryState",
    "NamespaceSource",
    "memory_tools",
    "resolve_namespace",
]
