"""The recall graph: Retriever -> Judge -> (Retry | Refresh) -> answer.

Pass goes to the answer (or ends, in retrieval-only mode). Retry goes back to the
Retriever with the Judge's queries while ``rounds < max_retrieval_rounds``; after that
the answer works with what was found and may refuse. Refresh goes to the Refresher, then
to the answer.
"""

from __future__ import annotations

from typing import Literal

from langchain_core.language_models import BaseChatModel
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from ..agents.answer import make_answer
from ..agents.deps import context_of
from ..agents.judge import make_recall_judge
from ..agents.refresher import make_recall_refresher
from ..agents.retriever import make_retriever
from ..agents.structured import StructuredMethod
from ..stores.chroma import ChromaMemoryStore
from .context import MemoryContext
from .events import emitting
from .ingest import node_deps
from .nodes import ANSWER, FINISH, JUDGE, REFRESHER, RETRIEVER
from .state import RecallInput, RecallOutput, RecallState


def _answer_or_end(state: RecallState) -> Literal["answer", "__end__"]:
    return FINISH if state.get("mode") == "retrieve" else ANSWER


def route_after_judge(
    state: RecallState, runtime: Runtime[MemoryContext]
) -> Literal["retriever", "refresher", "answer", "__end__"]:
    """Typed routing on the Judge's verdict and the round counter."""
    verdict = state.get("verdict") or {}
    action = verdict.get("action", "pass")
    if action == "refresh":
        return REFRESHER
    if action == "retry" and state.get("rounds", 0) < context_of(runtime).max_retrieval_rounds:
        return RETRIEVER
    return _answer_or_end(state)


def route_after_refresher(state: RecallState) -> Literal["answer", "__end__"]:
    """After a refresh, answer (or stop in retrieval-only mode)."""
    return _answer_or_end(state)


def build_recall_graph(
    *,
    chat_model: BaseChatModel,
    store: ChromaMemoryStore,
    structured_method: StructuredMethod = "json_schema",
    max_attempts: int = 3,
) -> StateGraph[RecallState, MemoryContext, RecallInput, RecallOutput]:
    """Return the uncompiled recall graph; compile it with your checkpointer."""
    deps = node_deps(
        chat_model=chat_model,
        store=store,
        structured_method=structured_method,
        max_attempts=max_attempts,
    )
    graph = StateGraph(
        RecallState,
        context_schema=MemoryContext,
        input_schema=RecallInput,
        output_schema=RecallOutput,
    )
    nodes = {
        RETRIEVER: make_retriever(deps),
        JUDGE: make_recall_judge(deps),
        REFRESHER: make_recall_refresher(deps),
        ANSWER: make_answer(deps),
    }
    for name, node in nodes.items():  # each memory change is also a custom stream event
        graph.add_node(name, emitting(name, node))
    graph.add_edge(START, RETRIEVER)
    graph.add_edge(RETRIEVER, JUDGE)
    graph.add_conditional_edges(
        JUDGE,
        route_after_judge,
        {RETRIEVER: RETRIEVER, REFRESHER: REFRESHER, ANSWER: ANSWER, FINISH: END},
    )
    graph.add_conditional_edges(REFRESHER, route_after_refresher, {ANSWER: ANSWER, FINISH: END})
    graph.add_edge(ANSWER, END)
    return graph
