"""The ingest graph: raw write -> episode trigger -> Constructor -> Judge -> Refresher."""

from __future__ import annotations

from typing import Literal, Unpack

from langchain_core.language_models import BaseChatModel
from langgraph.graph import END, START, StateGraph

from ..agents.common.deps import NodeDeps
from ..agents.ingest.nodes.conflicts import make_judge
from ..agents.ingest.nodes.constructor import make_constructor
from ..agents.ingest.nodes.episode_trigger import make_episode_trigger
from ..agents.ingest.nodes.raw_writer import make_raw_write
from ..agents.ingest.nodes.refresher import make_refresher
from ..core.context import MemoryContext
from ..core.nodes import CONSTRUCTOR, EPISODE_TRIGGER, FINISH, JUDGE, RAW_WRITE, REFRESHER
from ..core.state import IngestInput, IngestOutput, IngestState
from ..stores.base import MemoryStore
from .options import GraphOptions, node_deps, node_graph


def route_after_trigger(state: IngestState) -> Literal["constructor", "__end__"]:
    """Consolidate only when the trigger planned jobs."""
    trigger = state.get("trigger")
    return CONSTRUCTOR if trigger is not None and trigger.jobs else FINISH


def route_after_constructor(state: IngestState) -> Literal["judge", "__end__"]:
    """Check conflicts only when new facts were written."""
    return JUDGE if state.get("new_fact_ids") else FINISH


def route_after_judge(state: IngestState) -> Literal["refresher", "__end__"]:
    """Refresh when the Judge found contradictions or settled a flagged fact."""
    return REFRESHER if state.get("conflicts") or state.get("settled_fact_ids") else FINISH


def build_ingest_graph(
    *, chat_model: BaseChatModel, store: MemoryStore, **options: Unpack[GraphOptions]
) -> StateGraph[IngestState, MemoryContext, IngestInput, IngestOutput]:
    """Return the uncompiled ingest graph; compile it with your checkpointer.

    ``options`` (:class:`~lamina.graphs.options.GraphOptions`): the structured-output
    method and attempts, a ``journal`` of construction replies and the ``clock``.
    """
    return ingest_graph(node_deps(chat_model, store, options))


def ingest_graph(
    deps: NodeDeps,
) -> StateGraph[IngestState, MemoryContext, IngestInput, IngestOutput]:
    """The ingest graph over nodes that share ``deps``."""
    nodes = {
        RAW_WRITE: make_raw_write(deps),
        EPISODE_TRIGGER: make_episode_trigger(deps),
        CONSTRUCTOR: make_constructor(deps),
        JUDGE: make_judge(deps),
        REFRESHER: make_refresher(deps),
    }
    graph = node_graph(IngestState, IngestInput, IngestOutput, nodes)
    graph.add_edge(START, RAW_WRITE)
    graph.add_edge(RAW_WRITE, EPISODE_TRIGGER)
    graph.add_conditional_edges(
        EPISODE_TRIGGER, route_after_trigger, {CONSTRUCTOR: CONSTRUCTOR, FINISH: END}
    )
    graph.add_conditional_edges(CONSTRUCTOR, route_after_constructor, {JUDGE: JUDGE, FINISH: END})
    graph.add_conditional_edges(JUDGE, route_after_judge, {REFRESHER: REFRESHER, FINISH: END})
    graph.add_edge(REFRESHER, END)
    return graph
