"""``build_memory_graph``: one graph for Studio and checkpointed runs.

START routes a request to the ``ingest`` subgraph (input ``{"turns": [...]}``) or the
``recall`` subgraph (input ``{"question": "..."}``). Both subgraphs are compiled into the
parent, so every node (raw_write, episode_trigger, constructor, judge, refresher,
retriever, answer) shows in LangGraph Studio and streams with ``subgraphs=True``.
"""

from __future__ import annotations

from typing import Literal, Unpack

from langchain_core.language_models import BaseChatModel
from langgraph.graph import END, START, StateGraph

from ..core.context import MemoryContext
from ..core.nodes import INGEST, RECALL
from ..core.state import (
    IngestInput,
    IngestOutput,
    IngestState,
    RecallInput,
    RecallOutput,
    RecallState,
)
from ..errors import InvalidInputError
from ..stores.base import MemoryStore
from ..stores.expiry import UnexpiredStore
from .ingest import ingest_graph
from .options import GraphOptions, node_deps
from .recall import recall_graph


class MemoryInput(IngestInput, RecallInput, total=False):
    """Either ``turns`` (remember) or ``question`` (recall)."""


class MemoryState(IngestState, RecallState, total=False):
    """The union of the ingest and recall states."""


class MemoryOutput(IngestOutput, RecallOutput, total=False):
    """What either path reports."""


def route_request(state: MemoryState) -> Literal["ingest", "recall"]:
    """Send questions to recall and turns to ingest."""
    if state.get("question"):
        return RECALL
    if state.get("turns") or state.get("pending_raw_ids"):
        return INGEST
    raise InvalidInputError(
        "send {'turns': [...]} to remember a conversation or {'question': '...'} to recall"
    )


def build_memory_graph(
    *, chat_model: BaseChatModel, store: MemoryStore, **options: Unpack[GraphOptions]
) -> StateGraph[MemoryState, MemoryContext, MemoryInput, MemoryOutput]:
    """Return the uncompiled memory graph; compile it with your checkpointer.

    ``options`` (:class:`~lamina.graphs.options.GraphOptions`) reach both subgraphs, whose
    nodes share one :class:`~lamina.agents.common.deps.NodeDeps`: the
    structured-output method and attempts, a ``journal`` of construction replies, the
    ``clock`` and ``count_tokens``. Every node reads ``store`` through
    :class:`~lamina.stores.expiry.UnexpiredStore`: an expired memory reaches none.
    """
    deps = node_deps(chat_model, UnexpiredStore(store, options.get("clock")), options)
    graph = StateGraph(
        MemoryState,
        context_schema=MemoryContext,
        input_schema=MemoryInput,
        output_schema=MemoryOutput,
    )
    graph.add_node(INGEST, ingest_graph(deps).compile())
    graph.add_node(RECALL, recall_graph(deps, options.get("count_tokens")).compile())
    graph.add_conditional_edges(START, route_request, {INGEST: INGEST, RECALL: RECALL})
    graph.add_edge(INGEST, END)
    graph.add_edge(RECALL, END)
    return graph
