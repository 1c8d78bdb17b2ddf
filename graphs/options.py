"""What every graph builder takes besides the chat model and the store, declared once.

``build_ingest_graph``, ``build_recall_graph`` and ``build_memory_graph`` each take
``chat_model``, ``store`` and ``**options`` (:class:`GraphOptions`); :func:`node_deps`
turns them, once per built graph, into the :class:`~lamina.agents.common.deps.NodeDeps`
the nodes share, and :func:`node_graph` lays the nodes made from it into a graph.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import TypedDict

from langchain_core.language_models import BaseChatModel
from langgraph.graph import StateGraph
from langgraph.typing import InputT, OutputT, StateT

from ..agents.common.deps import NodeDeps
from ..agents.common.journal import ReplyJournal
from ..agents.recall.context import TokenCount
from ..core.arms import ResearchArms
from ..core.context import MemoryContext
from ..errors import InvalidTypeError
from ..llm.structured import StructuredCaller, StructuredMethod
from ..records.model import utc_now
from ..stores.base import MemoryStore
from ..stores.traced import traced
from .events import Node, emitting

__all__ = ["DEFAULT_MAX_ATTEMPTS", "GraphOptions", "node_deps", "node_graph"]

DEFAULT_MAX_ATTEMPTS = 3
"""Attempts per structured call; each retry shows the model its validation error."""


class GraphOptions(TypedDict, total=False):
    """The options of the graph builders, all optional.

    A builder ignores the options of nodes it has none of: ``journal`` and ``clock``
    serve the ingest graph, ``count_tokens`` the recall graph; ``build_memory_graph``
    passes each to both.
    """

    structured_method: StructuredMethod
    """How structured output is asked for (default ``"json_schema"``)."""
    max_attempts: int
    """Attempts per structured call (default :data:`DEFAULT_MAX_ATTEMPTS`)."""
    journal: ReplyJournal | None
    """Keeps construction replies by content hash, model and prompt version, so an
    interrupted or repeated build reuses them instead of calling the model again."""
    clock: Callable[[], datetime] | None
    """Stamps records and audit entries with the time memory learned something (default:
    the system clock); event times never come from it."""
    count_tokens: TokenCount | None
    """Counts the tokens of the recall context budget (default: the served model's own
    tokenizer when it is known, else a labelled estimate)."""
    arms: ResearchArms
    """Research arms for lamina-bench, not a user setting: the recall designs a benchmark
    compares with lamina's defaults (:class:`~lamina.core.arms.ResearchArms`)."""


def node_deps(chat_model: BaseChatModel, store: MemoryStore, options: GraphOptions) -> NodeDeps:
    """The store, structured LLM caller, clock and journal the nodes of a graph share.

    Raises:
        InvalidTypeError: ``options`` holds a name :class:`GraphOptions` does not have.
    """
    unknown = sorted(set(options) - GraphOptions.__optional_keys__)
    if unknown:
        known = ", ".join(sorted(GraphOptions.__optional_keys__))
        raise InvalidTypeError(f"unknown graph option(s) {unknown}; the options are: {known}")
    name = getattr(chat_model, "model_name", None) or getattr(chat_model, "model", None)
    caller = StructuredCaller(
        chat_model,
        method=options.get("structured_method", "json_schema"),
        max_attempts=options.get("max_attempts", DEFAULT_MAX_ATTEMPTS),
    )
    return NodeDeps(
        store=traced(store),  # its calls become spans when OpenTelemetry is set up
        caller=caller,
        clock=options.get("clock") or utc_now,
        model_name=str(name or type(chat_model).__name__),
        journal=options.get("journal"),
        arms=options.get("arms") or ResearchArms(),
    )


def node_graph(
    state: type[StateT],
    input_schema: type[InputT],
    output_schema: type[OutputT],
    nodes: Mapping[str, Node],
) -> StateGraph[StateT, MemoryContext, InputT, OutputT]:
    """A graph over ``state`` holding ``nodes``; the edges are the caller's to add.

    Each node also sends its memory changes as custom stream events (:func:`emitting`).
    """
    graph = StateGraph(
        state, context_schema=MemoryContext, input_schema=input_schema, output_schema=output_schema
    )
    for name, node in nodes.items():
        graph.add_node(name, emitting(name, node))
    return graph
