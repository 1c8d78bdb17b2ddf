"""``lamina mcp``: serve memory to MCP clients (desktop and IDE agents).

stdio by default (the client starts ``lamina mcp`` itself), or streamable HTTP with
``--transport http``. The namespace is the server's to decide: ``--namespace`` pins it
(default ``'default'``), and ``--allow-namespace PATTERN`` (repeatable) lets a call name
its own when it matches. Everything but the protocol goes to stderr.
"""

from __future__ import annotations

import argparse
import functools
from typing import Any

from .common import DEFAULT_NAMESPACE, add_memory_options, open_memory, warn


def register(sub: Any) -> None:
    """Add ``mcp`` to the subparsers ``sub``."""
    mcp = sub.add_parser(
        "mcp", help="serve memory to MCP clients over stdio or streamable HTTP (needs [mcp])"
    )
    mcp.add_argument(
        "--transport", choices=("stdio", "http"), default="stdio", help="default stdio"
    )
    mcp.add_argument("--host", default="127.0.0.1", help="HTTP: address (default 127.0.0.1)")
    mcp.add_argument("--port", type=int, default=8000, help="HTTP: port (default 8000)")
    mcp.add_argument("--path", default="/mcp", help="HTTP: endpoint path (default /mcp)")
    mcp.add_argument(
        "--stateless", action="store_true", help="HTTP: no session state between requests"
    )
    mcp.add_argument(
        "--allow-namespace",
        action="append",
        default=[],
        metavar="PATTERN",
        help="let a call name its namespace when it matches: a namespace, a prefix ending "
        "in * ('user:*'), or * for any (repeatable)",
    )
    mcp.add_argument(
        "--speaker",
        default="assistant",
        help="speaker recorded for text add_memory stores (default assistant)",
    )
    add_memory_options(
        mcp,
        namespace_help=f"the namespace every call uses (default {DEFAULT_NAMESPACE!r}); with "
        "--allow-namespace, the one used by calls that name none",
    )
    mcp.set_defaults(func=run_mcp)


def run_mcp(args: argparse.Namespace) -> int:
    """Serve until the client disconnects (stdio) or the process is interrupted (HTTP)."""
    import anyio

    from ..integrations import mcp_server

    allowed = tuple(args.allow_namespace)
    default = args.namespace or DEFAULT_NAMESPACE  # with --allow-namespace too, as --help says
    policy = mcp_server.NamespacePolicy(default=default, allowed=allowed)
    rule = f"calls may name {', '.join(allowed)}; default {default!r}" if allowed else repr(default)
    with open_memory(args, local_model=True) as memory:
        server = mcp_server.build_server(memory, policy, speaker=args.speaker)
        if args.transport == "stdio":
            warn(f"MCP server on stdio, namespace {rule}")
            anyio.run(mcp_server.run_stdio, server)
            return 0
        if args.host not in mcp_server.transports.LOOPBACK:
            warn(
                f"the HTTP server has no authentication: anyone who reaches {args.host} can "
                "use this memory"
            )
        url = f"http://{args.host}:{args.port}{args.path}"
        warn(f"MCP server at {url}, namespace {rule}")
        serve = functools.partial(
            mcp_server.run_http,
            server,
            host=args.host,
            port=args.port,
            path=args.path,
            stateless=args.stateless,
        )
        anyio.run(serve)
    return 0
