"""lamina as an MCP server: add_memory, search_memory, ask_memory, forget, list_memories.

Needs the ``mcp`` extra (``pip install 'lamina[mcp]'``); ``import lamina`` never
imports it. Run it with ``lamina mcp`` (stdio) or ``lamina mcp --transport http``.
"""

from ...errors import MissingDependencyError

try:
    import mcp  # noqa: F401
except ImportError as e:  # pragma: no cover - exercised by a test that hides the package
    raise MissingDependencyError(
        "the MCP server needs the mcp package: pip install 'lamina[mcp]'"
    ) from e

from .policy import NamespacePolicy
from .server import build_server, call_tool, tool_definitions
from .transports import http_app, run_http, run_stdio

__all__ = [
    "NamespacePolicy",
    "build_server",
    "call_tool",
    "http_app",
    "run_http",
    "run_stdio",
    "tool_definitions",
]
