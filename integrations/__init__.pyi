# Written by `python -m lamina.core.stubs` from the mapping in __init__.py: edit that, then run it.

from .langgraph_store import LaminaStore as LaminaStore
from .middleware import MemoryMiddleware as MemoryMiddleware
from .middleware import MemoryState as MemoryState
from .namespace import NamespaceSource as NamespaceSource
from .namespace import resolve_namespace as resolve_namespace
from .retriever import LaminaRetriever as LaminaRetriever
from .tools import memory_tools as memory_tools
