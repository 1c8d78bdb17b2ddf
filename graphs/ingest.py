"""The ingest graph: raw write -> episode trigger -> Constructor -> Judge -> Refresher."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from typing import Literal

from langchain_core.language_models import BaseChatModel
from langgraph.graph import END, START, StateGraph

from ..agents.common.deps import node_deps
from ..agents.common.journal import ReplyJournal
from ..agents.ingest.conflicts import make_judge
from ..agents.ingest.constructor import make_constructor
from ..agents.ingest.episode_trigger import make_episode_trigger
from ..agents.ingest.raw_writer import make_raw_write
from ..agents.ingest.refresher import make_refresher
from ..core.context import MemoryContext
from ..core.nodes import CONSTRUCTOR, EPISODE_TRIGGER, FINISH, JUDGE, RAW_WRITE, REFRESHER
from ..core.state import IngestInput, IngestOutput, IngestState
from ..llm.structured import StructuredMethod
from ..stores.base import MemoryStore
from .events import emitting


def route_after_trigger(state: IngestState) -> Literal["constructor", "__end__"]:
    """Consolidate only when the trigger planned jobs."""
    trigger = state.get("trigger")
    return CONSTRUCTOR if trigger is not None and trigger.jobs else FINISH


def route_after_constructor(state: IngestState) -> Literal["judge", "__end__"]:
    """Check conflicts only when new facts were written."""
    return JUDGE if state.get("new_fact_ids") else FINISH


def route_after_judge(state: IngestState) -> Literal["refresher", "__end__"]:
    """Refresh only when the Judge found contradictions."""
    return REFRESHER if state.get("conflicts") else FINISH


def build_ingest_graph(
    *,
    chat_model: BaseChatModel,
    store: MemoryStore,
    structured_method: StructuredMethod = "json_schema",
    max_attempts: int = 3,
    journal: ReplyJournal | None = None,
    clock: Callable[[], datetime] | None = None,
) -> StateGraph[IngestState, MemoryContext, IngestInput, IngestOutput]:
    """Return the uncompiled ingest graph; compile it with your checkpointer.

    ``journal`` keeps construction replies by content hash, model and prompt version, so
    an interrupted or repeated build reuses them instead of calling the model again.
    ``clock`` stamps records and audit entries with the time memory learned something
    (default: the system clock); event times never come from it.
    """
    deps = node_deps(
        chat_model=chat_model,
        store=store,
        structured_method=structured_method,
        max_attempts=max_attempts,
        journal=journal,
    )
    if clock is not None:
        deps = replace(deps, clock=clock)
    graph = StateGraph(
        IngestState,
        context_schema=MemoryContext,
        input_schema=IngestInput,
        output_schema=IngestOutput,
    )
    nodes = {
        RAW_WRITE: make_raw_write(deps),
        EPISODE_TRIGGER: make_episode_trigger(deps),
        CONSTRUCTOR: make_constructor(deps),
        JUDGE: make_judge(deps),
        REFRESHER: make_refresher(deps),
    }
    for name, node in nodes.items():  # each memory change is also a custom stream event
        graph.add_node(name, emitting(name, node))
    graph.add_edge(START, RAW_WRITE)
    graph.add_edge(RAW_WRITE, EPISODE_TRIGGER)
    graph.add_conditional_edges(
        EPISODE_TRIGGER, route_after_trigger, {CONSTRUCTOR: CONSTRUCTOR, FINISH: END}
    )
    graph.add_conditional_edges(CONSTRUCTOR, route_after_constructor, {JUDGE: JUDGE, FINISH: END})
    graph.add_conditional_edges(JUDGE, route_after_judge, {REFRESHER: REFRESHER, FINISH: END})
    graph.add_edge(REFRESHER, END)
    return graph
