r"""The recall graph: Retriever -> Judge (+ draft answer) -> answer, with a bounded retry.

::

    START -> retriever --(retrieve mode)--> END
                       \-> judge --(sufficient, or last round)--> answer -> END
                                \--(insufficient)--> rewriter -> retriever
                                \--(memories conflict)--> refresher -> answer

The Retriever analyses the question without an LLM and searches every granularity at
once. The Judge's one structured call returns sufficiency, what is missing and a draft
answer; when the context suffices the answer node returns the draft without a second
call. An insufficient verdict (a refusal, or an empty round, included) sends the
question to the rewrite and a new retrieval round while ``rounds <
MAX_RETRIEVAL_ROUNDS``. Retrieval-only mode returns the pooled evidence after the first
round, with no LLM call at all.
"""

from __future__ import annotations

from typing import Literal, Unpack

from langchain_core.language_models import BaseChatModel
from langgraph.graph import END, START, StateGraph

from ..agents.common.deps import NodeDeps
from ..agents.recall.answer import make_answer
from ..agents.recall.context import TokenCount
from ..agents.recall.judge import make_recall_judge
from ..agents.recall.refresher import make_recall_refresher
from ..agents.recall.retriever import make_retriever
from ..agents.recall.rewriter import make_rewriter
from ..core.context import MemoryContext
from ..core.nodes import ANSWER, FINISH, JUDGE, REFRESHER, RETRIEVER, REWRITER
from ..core.state import RecallInput, RecallOutput, RecallState, RecallVerdict
from ..llm.tokens import DeferredTokens
from ..stores.base import MemoryStore
from .options import GraphOptions, node_deps, node_graph

MAX_RETRIEVAL_ROUNDS = 2
"""Retrieval rounds before answering with what was found (AMA's K_r): the question, then
one retry with the rewritten queries."""


def route_after_retriever(state: RecallState) -> Literal["judge", "__end__"]:
    """Retrieval-only mode ends with the pooled evidence; otherwise the Judge decides."""
    return FINISH if state.get("mode") == "retrieve" else JUDGE


def route_after_judge(state: RecallState) -> Literal["rewriter", "refresher", "answer"]:
    """Typed routing on the verdict and the round counter.

    A premise the whole namespace does not hold goes to the answer, which refuses;
    conflicting memories go to the Refresher; a sufficient draft (or a failed call, which
    the answer node answers plainly) goes to the answer; an insufficient or empty round
    is retried with rewritten queries while rounds remain, then answered or refused.
    """
    verdict = RecallVerdict.model_validate(state.get("verdict") or {"status": "failed"})
    if verdict.premise_searched:  # the whole namespace was searched: refuse now
        return ANSWER
    if verdict.wants_refresh:
        return REFRESHER
    if verdict.status == "failed" or verdict.sufficient:
        return ANSWER
    if state.get("rounds", 0) >= MAX_RETRIEVAL_ROUNDS:
        return ANSWER
    return REWRITER


def build_recall_graph(
    *, chat_model: BaseChatModel, store: MemoryStore, **options: Unpack[GraphOptions]
) -> StateGraph[RecallState, MemoryContext, RecallInput, RecallOutput]:
    """Return the uncompiled recall graph; compile it with your checkpointer.

    ``chat_model`` serves the Judge, the rewrite, the Refresher and the answer.
    ``options`` (:class:`~lamina.graphs.options.GraphOptions`): the structured-output
    method and attempts, and ``count_tokens``, which counts the context budget.
    """
    return recall_graph(node_deps(chat_model, store, options), options.get("count_tokens"))


def recall_graph(
    deps: NodeDeps, count_tokens: TokenCount | None = None
) -> StateGraph[RecallState, MemoryContext, RecallInput, RecallOutput]:
    """The recall graph over nodes that share ``deps``.

    ``count_tokens`` defaults to the tokenizer of the model ``deps.caller`` calls.
    """
    count_tokens = count_tokens or DeferredTokens(deps.caller.model)
    nodes = {
        RETRIEVER: make_retriever(deps, count_tokens=count_tokens),
        JUDGE: make_recall_judge(deps),
        REWRITER: make_rewriter(deps),
        REFRESHER: make_recall_refresher(deps),
        ANSWER: make_answer(deps),
    }
    graph = node_graph(RecallState, RecallInput, RecallOutput, nodes)
    graph.add_edge(START, RETRIEVER)
    graph.add_conditional_edges(RETRIEVER, route_after_retriever, {JUDGE: JUDGE, FINISH: END})
    graph.add_conditional_edges(
        JUDGE,
        route_after_judge,
        {REWRITER: REWRITER, REFRESHER: REFRESHER, ANSWER: ANSWER},
    )
    graph.add_edge(REWRITER, RETRIEVER)
    graph.add_edge(REFRESHER, ANSWER)
    graph.add_edge(ANSWER, END)
    return graph
