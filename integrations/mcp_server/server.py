"""``build_server``: lamina's five tools on an MCP server, over stdio or streamable HTTP.

The server is the MCP SDK's low-level ``Server``: each tool's input schema is generated
from the pydantic model every call is validated against (unknown keys refused), so the
error names the argument. Any failure, a malformed call included, comes back as an MCP
tool error (``isError``) and stores nothing; an unexpected failure is logged and
reported without its details.
"""

from __future__ import annotations

import copy
import logging
from typing import TYPE_CHECKING, Any

from mcp import types
from mcp.server.lowlevel import Server
from pydantic import ValidationError

from ...errors import InvalidInputError, LaminaError
from ...prompts import mcp as text
from .policy import NamespacePolicy
from .tools import NAMESPACE_FIELD, TOOLS, Call, ToolSpec

if TYPE_CHECKING:
    from ...memory import Memory

logger = logging.getLogger(__name__)

SERVER_NAME = "lamina"


def _schema(spec: ToolSpec, policy: NamespacePolicy) -> dict[str, Any]:
    """The tool's JSON schema; ``namespace`` only when a call may choose one."""
    schema = copy.deepcopy(spec.args.model_json_schema())
    schema.pop("title", None)
    schema.pop("description", None)  # the tool's description says it
    properties = schema.setdefault("properties", {})
    for prop in properties.values():
        prop.pop("title", None)
    if policy.per_call:
        allowed = ", ".join(policy.allowed)
        default = f"default {policy.default!r}" if policy.default else "required"
        properties[NAMESPACE_FIELD] = {
            "type": "string",
            "description": f"The memory namespace ({default}; allowed: {allowed}).",
        }
    else:
        properties.pop(NAMESPACE_FIELD, None)
    schema["additionalProperties"] = False
    return schema


def tool_definitions(policy: NamespacePolicy) -> list[types.Tool]:
    """The five tools as MCP tool definitions."""
    return [
        types.Tool(
            name=spec.name,
            description=spec.description,
            inputSchema=_schema(spec, policy),
            annotations=types.ToolAnnotations(
                readOnlyHint=spec.read_only,
                destructiveHint=spec.destructive,
                openWorldHint=False,
            ),
        )
        for spec in TOOLS.values()
    ]


def _invalid(name: str, error: ValidationError) -> InvalidInputError:
    parts = []
    for problem in error.errors():
        where = ".".join(str(x) for x in problem["loc"]) or "arguments"
        parts.append(f"{where}: {problem['msg']}")
    return InvalidInputError(f"invalid arguments for {name}: " + "; ".join(parts))


async def call_tool(
    memory: Memory, policy: NamespacePolicy, speaker: str, name: str, arguments: dict[str, Any]
) -> tuple[list[types.TextContent], dict[str, Any]]:
    """Validate one call, pick its namespace, run it; raise a clear error otherwise."""
    spec = TOOLS.get(name)
    if spec is None:
        raise InvalidInputError(f"unknown tool {name!r}; the tools are {', '.join(TOOLS)}")
    try:
        args = spec.args.model_validate(arguments)
    except ValidationError as e:
        raise _invalid(name, e) from None
    call = Call(memory=memory, namespace=policy.resolve(args.namespace), speaker=speaker)
    try:
        said, data = await spec.run(call, args)
    except (LaminaError, ValueError, TypeError) as e:  # the message says how to fix it
        raise LaminaError(f"{name} failed: {e}") from e
    except Exception as e:
        logger.warning("MCP tool %s failed", name, exc_info=e)
        raise LaminaError(f"{name} failed: memory is unavailable ({type(e).__name__})") from e
    return [types.TextContent(type="text", text=said)], data


def instructions(policy: NamespacePolicy) -> str:
    """The server's instructions, with its namespace rule."""
    if policy.per_call:
        default = repr(policy.default) if policy.default else "nothing (name one)"
        rule = text.PER_CALL_NAMESPACE.format(allowed=", ".join(policy.allowed), default=default)
    else:
        rule = text.PINNED_NAMESPACE.format(namespace=policy.default)
    return f"{text.SERVER_INSTRUCTIONS} {rule}"


def build_server(
    memory: Memory, policy: NamespacePolicy, *, speaker: str = "assistant"
) -> Server[Any, Any]:
    """An MCP server with the five memory tools, confined to what ``policy`` allows.

    The tools are add_memory, search_memory, ask_memory, forget and list_memories.

    Args:
        memory: The memory the tools read and write; ``ask_memory`` uses its chat model.
        policy: Which namespace each call uses.
        speaker: The speaker recorded for text stored by ``add_memory``.
    """
    if not isinstance(policy, NamespacePolicy):
        raise InvalidInputError(f"policy must be a NamespacePolicy, got {type(policy).__name__}")
    if not isinstance(speaker, str) or not speaker.strip():
        raise InvalidInputError("speaker must be a non-empty speaker name")
    from ... import __version__

    server: Server[Any, Any] = Server(
        SERVER_NAME, version=__version__, instructions=instructions(policy)
    )
    definitions = tool_definitions(policy)

    @server.list_tools()  # type: ignore[no-untyped-call,untyped-decorator]
    async def _list_tools() -> list[types.Tool]:
        return definitions

    @server.call_tool(validate_input=False)  # type: ignore[untyped-decorator]
    async def _call_tool(
        name: str, arguments: dict[str, Any]
    ) -> tuple[list[types.TextContent], dict[str, Any]]:
        return await call_tool(memory, policy, speaker, name, arguments)

    return server
