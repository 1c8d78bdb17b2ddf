"""Custom stream events: one ``memory_written`` event per memory a node changed.

The same wrapper makes each node run an OpenTelemetry span when tracing is set up
(:mod:`lamina.core.tracing`), with the node's tokens, calls, failures and writes.

The graph builders wrap every node with :func:`emitting`. After the node returns, the
wrapper reads what it reports (``new_raw_ids`` for stored turns, ``written`` for derived
records) and sends one event per record through the run's stream writer, so a caller
streaming with ``stream_mode="custom"`` (or ``["updates", "custom"]``) sees memory change
as it happens, e.g.::

    {"event": "memory_written", "node": "constructor", "namespace": "user:alice",
     "granularity": "episode", "id": "...", "action": "created"}

Events are plain JSON-ready dicts, so they pass through the LangGraph API server
unchanged. A node that raises emits nothing: only committed updates are announced.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from langgraph.runtime import Runtime

from ..core.context import MemoryContext, context_of
from ..core.state import Written
from ..core.tracing import span

MEMORY_WRITTEN: Final = "memory_written"
"""The ``event`` field of every memory change event."""

Node = Callable[..., dict[str, Any]]
"""A node function as the agents build it: ``(state, runtime) -> update``."""


def memory_events(node: str, namespace: str, update: Mapping[str, Any]) -> list[dict[str, str]]:
    """The events describing the memory changes in a node's state ``update``."""
    events = [
        {"granularity": "raw", "id": raw_id, "action": "created"}
        for raw_id in update.get("new_raw_ids") or []
    ]
    for item in update.get("written") or []:
        written = item if isinstance(item, Written) else Written.model_validate(item)
        events.append(
            {"granularity": written.granularity, "id": written.id, "action": written.action}
        )
    return [
        {"event": MEMORY_WRITTEN, "node": node, "namespace": namespace, **event} for event in events
    ]


def node_attributes(update: Mapping[str, Any]) -> dict[str, int]:
    """A node span's figures: LLM calls and tokens, failures, records stored or changed."""
    calls = list(update.get("llm_calls") or [])
    return {
        "lamina.llm.calls": len(calls),
        "lamina.llm.prompt_tokens": sum(getattr(c, "prompt_tokens", 0) or 0 for c in calls),
        "lamina.llm.completion_tokens": sum(getattr(c, "completion_tokens", 0) or 0 for c in calls),
        "lamina.failures": len(update.get("failures") or []),
        "lamina.records_written": len(update.get("new_raw_ids") or [])
        + len(update.get("written") or []),
    }


def emitting(name: str, node: Node) -> Node:
    """Wrap ``node`` so that each memory it changes is also sent as a custom event."""

    def emit_after(state: Any, runtime: Runtime[MemoryContext]) -> dict[str, Any]:
        namespace = context_of(runtime).namespace
        with span(f"lamina.{name}", namespace, {"lamina.node": name}) as current:
            update = node(state, runtime)
            if current is not None and update:
                current.set_attributes(node_attributes(update))
        writer = getattr(runtime, "stream_writer", None)
        if writer is not None and update:
            for event in memory_events(name, namespace, update):
                writer(event)
        return update

    emit_after.__name__ = getattr(node, "__name__", name)
    emit_after.__doc__ = node.__doc__
    return emit_after


__all__ = ["MEMORY_WRITTEN", "emitting", "memory_events"]
