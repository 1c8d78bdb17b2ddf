"""OpenTelemetry spans for the calls of :class:`~lamina.Memory` (:mod:`lamina.core.tracing`).

Each public call is a span ``lamina.memory.<call>`` (``lamina.memory.search``,
``lamina.memory.forget``...) with the namespace it names (hashed by default), so the
calls made outside the memory graph are traced as the graph's nodes are, and the node
spans of ``add`` and ``answer`` hang under one root. Its figures: the LLM calls and
tokens of a result that reports them, and how many records it returned or changed. An
exception is recorded on the span. Without a tracer provider the call runs unwrapped.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, TypeVar

from ..core.tracing import traced_method

F = TypeVar("F", bound=Callable[..., Any])
C = TypeVar("C", bound=type)

TRACED_CALLS = (
    "add",
    "answer",
    "search",
    "get_all",
    "history",
    "profile",
    "inspect",
    "namespaces",
    "update",
    "delete",
    "delete_all",
    "forget",
    "export",
    "import_",
    "add_facts",
    "flush",
    "set_default_ttl",
    "default_ttl",
    "sweep_expired",
)
"""The :class:`~lamina.Memory` calls that are spans (the other async twins call them)."""

TRACED_ASYNC_CALLS = ("aadd", "aanswer", "asearch", "aget_all", "aprofile")
"""The async twins that do not run their sync call in a thread (they run the graph or
await the store's async reads), so are spans of their own, named as that call. When one
does fall back to its sync call, that call's span is not made twice."""

__all__ = ["TRACED_ASYNC_CALLS", "TRACED_CALLS", "call_attributes", "traced_call", "trace_calls"]


def call_attributes(result: object) -> dict[str, int]:
    """A call span's figures: LLM calls and tokens, and the records returned or changed."""
    out: dict[str, int] = {}
    calls = getattr(result, "llm_calls", None)
    if isinstance(calls, list):
        out["lamina.llm.calls"] = len(calls)
        out["lamina.llm.prompt_tokens"] = sum(getattr(c, "prompt_tokens", 0) or 0 for c in calls)
        out["lamina.llm.completion_tokens"] = sum(
            getattr(c, "completion_tokens", 0) or 0 for c in calls
        )
    if isinstance(result, list):
        out["lamina.records"] = len(result)
    elif isinstance(count := getattr(result, "count", None), int):
        out["lamina.records"] = count  # a ForgetResult
    elif isinstance(result, int) and not isinstance(result, bool):
        out["lamina.records"] = result  # sweep_expired
    return out


def _scope(arguments: dict[str, Any]) -> tuple[str | None, dict[str, Any]]:
    namespace = arguments.get("namespace")
    return (namespace if isinstance(namespace, str) else None), {}


def traced_call(method: F) -> F:
    """``method`` as a span ``lamina.memory.<name>`` while tracing is on.

    An async twin's span has its sync call's name (``aadd``: ``lamina.memory.add``).
    """
    name = method.__name__
    if inspect.iscoroutinefunction(method):
        name = name.removeprefix("a")
    return traced_method(method, f"lamina.memory.{name}", _scope, call_attributes)


def trace_calls(cls: C) -> C:
    """Make each of ``cls``'s :data:`TRACED_CALLS` and :data:`TRACED_ASYNC_CALLS` a span."""
    for attribute in (*TRACED_CALLS, *TRACED_ASYNC_CALLS):
        setattr(cls, attribute, traced_call(getattr(cls, attribute)))
    return cls
