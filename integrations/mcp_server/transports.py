"""Serve an MCP server over stdio (desktop and IDE clients) or streamable HTTP.

The HTTP app has no authentication: whoever reaches the port can use the memory of
the namespaces the server allows. It listens on 127.0.0.1 by default and then checks
the Host and Origin headers against DNS rebinding, as the MCP SDK does for local servers.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

LOOPBACK = ("127.0.0.1", "localhost", "::1")
DEFAULT_PATH = "/mcp"


async def run_stdio(server: Server[Any, Any]) -> None:
    """Serve on stdin/stdout until the client closes them."""
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def _security(host: str) -> TransportSecuritySettings | None:
    if host not in LOOPBACK:
        return None
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
        allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
    )


class _Endpoint:
    """The ASGI endpoint (a class, so Starlette passes scope, receive and send through)."""

    def __init__(self, manager: StreamableHTTPSessionManager) -> None:
        self.manager = manager

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.manager.handle_request(scope, receive, send)


def http_app(
    server: Server[Any, Any],
    *,
    host: str = "127.0.0.1",
    path: str = DEFAULT_PATH,
    stateless: bool = False,
    json_response: bool = False,
) -> Starlette:
    """A Starlette app serving ``server`` over streamable HTTP at ``path``."""
    manager = StreamableHTTPSessionManager(
        app=server,
        stateless=stateless,
        json_response=json_response,
        security_settings=_security(host),
    )

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with manager.run():
            yield

    return Starlette(routes=[Route(path, endpoint=_Endpoint(manager))], lifespan=lifespan)


async def run_http(
    server: Server[Any, Any],
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    path: str = DEFAULT_PATH,
    stateless: bool = False,
    log_level: str = "warning",
) -> None:
    """Serve over streamable HTTP at ``http://host:port/path`` until stopped."""
    import uvicorn

    app = http_app(server, host=host, path=path, stateless=stateless)
    config = uvicorn.Config(app, host=host, port=port, log_level=log_level)
    await uvicorn.Server(config).serve()
