"""The Retriever node: deterministic query analysis, then one pooled search.

No LLM is called here. On the first round the question is analysed (time window, people,
question type; see :mod:`.query_analysis`) and searched as asked. On a retry round the
queries the rewrite wrote after an insufficient verdict are searched beside the question.
Every round searches raw turns, facts, episodes and scenes at once (:mod:`.pooling`) and
returns one context cut to the token budget, raw turns first.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from langgraph.runtime import Runtime

from ...core.arms import ResearchArms
from ...core.context import MemoryContext, context_of
from ...core.nodes import RETRIEVER
from ...core.state import RecallState
from ...errors import InvalidInputError
from ..common.deps import NodeDeps, StepLog
from ..common.formatting import approx_tokens
from ..common.query_analysis import QueryAnalysis, analyze_question
from .context import TokenCount
from .pooling import EvidencePool, PoolSettings


def require_question(state: RecallState) -> str:
    """The question, or an error that says what to send (before any LLM call)."""
    question = state.get("question")
    if not isinstance(question, str) or not question.strip():
        raise InvalidInputError("recall needs 'question': a non-empty, non-blank string")
    return question.strip()


K_MIN = 5
"""Minimum facts, episodes and scenes ranked per channel (AMA's K_min)."""
RAW_DEPTH = 40
"""Raw turns ranked per search channel before the budget cut: deep enough that the
evidence a question's words find is in the pool the token budget is cut from."""
DERIVED_DEPTH = 10
"""Facts, episodes and scenes ranked per channel (at least :data:`K_MIN`): they take at
most the derived share of the budget, so fewer are ranked than raw turns."""
SCENE_TOP = 3
"""Scenes whose member episodes are pooled during scene expansion."""
NEIGHBOUR_TURNS = 1
"""On retry rounds a raw hit brings the turns this close to it in its session."""
MAX_CANDIDATES = 60
"""At most this many memories in the context, whatever the token budget."""


def pool_settings(ctx: MemoryContext, arms: ResearchArms, *, retry: bool) -> PoolSettings:
    """The pooled search the context and the arms ask for (neighbours on retry rounds)."""
    return PoolSettings(
        raw_depth=RAW_DEPTH,
        derived_depth=max(DERIVED_DEPTH, K_MIN),
        scene_top=SCENE_TOP,
        kinds=tuple(arms.context_kinds),
        aggregation_kinds=tuple(arms.aggregation_kinds),
        neighbours=NEIGHBOUR_TURNS if retry else 0,
        budget=ctx.context_tokens,
        derived_share=arms.derived_share,
        limit=MAX_CANDIDATES,
        source_weight=arms.source_weight,
    )


def _reference(state: RecallState, pool: EvidencePool) -> datetime | None:
    given = state.get("reference_time")
    if isinstance(given, datetime) and given.tzinfo is not None:
        return given
    latest = pool.latest()
    return datetime.fromtimestamp(latest, UTC) if latest is not None else None


def make_retriever(
    deps: NodeDeps, *, count_tokens: TokenCount = approx_tokens
) -> Callable[..., dict[str, Any]]:
    """Build the ``retriever`` node; ``count_tokens`` measures the context budget."""

    def retriever(state: RecallState, runtime: Runtime[MemoryContext]) -> dict[str, Any]:
        """Analyse (first round) or take the rewritten queries (retry); search; cut."""
        question = require_question(state)
        ctx = context_of(runtime)
        log = StepLog(RETRIEVER, deps)
        rounds = state.get("rounds", 0)
        pool = EvidencePool(
            deps.store,
            ctx.namespace,
            settings=pool_settings(ctx, deps.arms, retry=rounds > 0),
            tz=ctx.tz,
            count=count_tokens,
            as_of=state.get("as_of"),
            on_error=log.fail,
        )
        if rounds == 0 or not state.get("analysis"):
            analysis = analyze_question(
                question, reference=_reference(state, pool), speakers=pool.speakers(), tz=ctx.tz
            )
        else:
            analysis = QueryAnalysis.model_validate(state["analysis"])
        rewrites = [q for q in state.get("queries", []) if q.strip()] if rounds else []
        queries = list(dict.fromkeys([question, *rewrites]))
        return {
            "analysis": analysis.model_dump(mode="json"),
            "queries": queries,
            "queries_tried": queries if rounds == 0 else rewrites,
            "rounds": rounds + 1,
            "candidates": pool.collect(queries, analysis),
            **log.update(),
        }

    return retriever
