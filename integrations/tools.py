"""LangChain tools over a ``Memory``: ``search_memory``, ``remember`` and ``forget``.

Each tool reads the namespace from the agent's runtime context (``ToolRuntime.context``),
never from its arguments, so a model cannot reach another tenant's memory. Errors, a
missing namespace included, come back to the model as tool errors instead of ending the run.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from langchain.tools import ToolRuntime
from langchain_core.tools import BaseTool, StructuredTool, ToolException
from pydantic import BaseModel, Field

from ..errors import InvalidInputError, InvalidTypeError, LaminaError, RecordNotFoundError
from ..memory.results import ForgetResult
from ..prompts.agents import FORGET_TOOL, REMEMBER_TOOL, SEARCH_MEMORY_TOOL
from .formatting import format_add, format_forget, format_hits
from .namespace import DEFAULT_NAMESPACE_KEY, NamespaceSource, check_source, resolve_namespace

if TYPE_CHECKING:
    from ..memory import Memory

logger = logging.getLogger(__name__)

AnyRuntime = ToolRuntime[Any, Any]


class SearchMemoryInput(BaseModel):
    """Arguments of ``search_memory``."""

    query: str = Field(description="A short standalone search query.")


class RememberInput(BaseModel):
    """Arguments of ``remember``."""

    text: str = Field(description="The information to remember, understandable on its own.")


class ForgetInput(BaseModel):
    """Arguments of ``forget``: exactly one of the two."""

    memory_id: str | None = Field(
        default=None, description="The id of one memory, as shown by search_memory."
    )
    subject: str | None = Field(
        default=None, description="Delete every fact about this subject instead."
    )


@contextmanager
def _tool_errors(action: str) -> Iterator[None]:
    """Turn any failure into a ToolException the agent sees as a tool result."""
    try:
        yield
    except (LaminaError, ValueError, TypeError) as e:
        raise ToolException(f"{action} failed: {e}") from e
    except Exception as e:
        logger.warning("lamina tool %s failed", action, exc_info=e)
        raise ToolException(f"{action} failed: memory is unavailable ({type(e).__name__})") from e


def _forget_arguments(memory_id: str | None, subject: str | None) -> dict[str, Any]:
    memory_id = (memory_id or "").strip() or None
    subject = (subject or "").strip() or None
    if (memory_id is None) == (subject is None):
        raise InvalidInputError("give exactly one of memory_id or subject")
    if memory_id is not None:
        # tolerate the "[fact abc]" / "fact abc" forms search_memory prints
        memory_id = memory_id.strip("[]").split()[-1]
        return {"memory_ids": [memory_id]}
    return {"subject": subject}


def memory_tools(
    memory: Memory,
    *,
    namespace_from: NamespaceSource = DEFAULT_NAMESPACE_KEY,
    k: int = 5,
    note_speaker: str = "assistant",
) -> list[BaseTool]:
    """Build the ``search_memory``, ``remember`` and ``forget`` tools for one ``Memory``.

    Args:
        memory: The memory the tools read and write.
        namespace_from: Where the namespace is found in the agent's runtime context: a
            field name (default ``"user_id"``) or a function ``context -> namespace``.
        k: How many memories ``search_memory`` returns.
        note_speaker: The speaker recorded for text stored by ``remember``.

    Returns:
        The three tools, ready for ``create_agent(tools=...)``.

    Raises:
        InvalidTypeError: if ``namespace_from`` is neither a field name nor a callable, or
            ``k`` is not an int, or ``note_speaker`` is not a str.
        InvalidInputError: if ``k`` is not positive or ``note_speaker`` is blank.
    """
    source = check_source(namespace_from)
    if isinstance(k, bool) or not isinstance(k, int):
        raise InvalidTypeError(f"k must be an int, got {type(k).__name__}")
    if k < 1:
        raise InvalidInputError(f"k must be a positive number of memories, got {k}")
    if not isinstance(note_speaker, str):
        raise InvalidTypeError(f"note_speaker must be a str, got {type(note_speaker).__name__}")
    if not note_speaker.strip():
        raise InvalidInputError("note_speaker must be a non-empty speaker name")

    def namespace(runtime: AnyRuntime) -> str:
        return resolve_namespace(runtime.context, source)

    def search_memory(query: str, runtime: AnyRuntime) -> str:
        with _tool_errors("search_memory"):
            return format_hits(memory.search(query, namespace=namespace(runtime), k=k))

    async def asearch_memory(query: str, runtime: AnyRuntime) -> str:
        with _tool_errors("search_memory"):
            return format_hits(await memory.asearch(query, namespace=namespace(runtime), k=k))

    def remember(text: str, runtime: AnyRuntime) -> str:
        with _tool_errors("remember"):
            result = memory.add(text, namespace=namespace(runtime), speaker=note_speaker)
        return format_add(result)

    async def aremember(text: str, runtime: AnyRuntime) -> str:
        with _tool_errors("remember"):
            result = await memory.aadd(text, namespace=namespace(runtime), speaker=note_speaker)
        return format_add(result)

    def forget(
        runtime: AnyRuntime, memory_id: str | None = None, subject: str | None = None
    ) -> str:
        with _tool_errors("forget"):
            scope = namespace(runtime)
            arguments = _forget_arguments(memory_id, subject)
            try:
                result = memory.forget(namespace=scope, **arguments)
            except RecordNotFoundError:  # an id of another tenant is unknown here too
                result = ForgetResult(not_found=list(arguments["memory_ids"]))
        return format_forget(result)

    async def aforget(
        runtime: AnyRuntime, memory_id: str | None = None, subject: str | None = None
    ) -> str:
        with _tool_errors("forget"):
            scope = namespace(runtime)
            arguments = _forget_arguments(memory_id, subject)
            try:
                result = await memory.aforget(namespace=scope, **arguments)
            except RecordNotFoundError:
                result = ForgetResult(not_found=list(arguments["memory_ids"]))
        return format_forget(result)

    tools = (
        ("search_memory", SEARCH_MEMORY_TOOL, SearchMemoryInput, search_memory, asearch_memory),
        ("remember", REMEMBER_TOOL, RememberInput, remember, aremember),
        ("forget", FORGET_TOOL, ForgetInput, forget, aforget),
    )
    return [
        StructuredTool.from_function(
            func=func,
            coroutine=coroutine,
            name=name,
            description=description,
            args_schema=schema,
            handle_tool_error=True,
        )
        for name, description, schema, func, coroutine in tools
    ]
