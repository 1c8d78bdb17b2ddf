"""The query rewrite: the one LLM rewrite of the read path, after an insufficient verdict.

The Judge said what the context is missing; the rewrite turns that into 1-3 search
queries for the next retrieval round. When the call fails, the missing phrase and the
people the question names are searched as they are, so a retry still searches something
new.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langgraph.runtime import Runtime

from ...core.context import MemoryContext
from ...core.nodes import REWRITER
from ...core.state import RecallState, RecallVerdict
from ...prompts.recall import REWRITE
from ..common.deps import NodeDeps
from ..common.formatting import as_data
from ..common.query_analysis import QueryAnalysis
from ..common.token_caps import capped_log
from .schemas import QueryRewrite

REWRITE_MAX_TOKENS = 96
"""Output cap of the query rewrite after an insufficient verdict: a few short queries."""
WINDOW_LINES = 10
"""Recent conversation lines shown to the rewrite."""


GENERIC_MISSING = ("the answer", "no memories found")
"""What a verdict says is missing when it names nothing searchable."""


def names_something(verdict: RecallVerdict) -> bool:
    """Whether the verdict names a specific missing thing that a search could look for."""
    missing = verdict.missing.strip()
    return bool(missing) and missing not in GENERIC_MISSING


def fallback_queries(verdict: RecallVerdict, analysis: QueryAnalysis) -> list[str]:
    """Queries without an LLM: what is missing, with the people the question names."""
    missing = verdict.missing.strip()
    if not names_something(verdict):
        return []
    people = " ".join(p for p in analysis.persons if p.casefold() not in missing.casefold())
    return [f"{people} {missing}".strip()]


def make_rewriter(deps: NodeDeps) -> Callable[..., dict[str, Any]]:
    """Build the ``rewriter`` node."""

    def rewriter(state: RecallState, runtime: Runtime[MemoryContext]) -> dict[str, Any]:
        """Write search queries for what the last verdict found missing.

        The Judge's own words for what is missing are the query when they name
        something (the combined call already did the thinking) and no call is made; a
        round where it named nothing (nothing was found, or the draft refused) gets the
        LLM rewrite, so a refusal is retried first.
        """
        log = capped_log(REWRITER, deps, REWRITE_MAX_TOKENS)
        verdict = RecallVerdict.model_validate(state.get("verdict") or {})
        analysis = QueryAnalysis.model_validate(state.get("analysis") or {})
        if names_something(verdict):
            return {"queries": fallback_queries(verdict, analysis), **log.update()}
        window = "\n".join(state.get("window", [])[-WINDOW_LINES:]) or "(none)"
        messages = REWRITE.format_messages(
            window=as_data(window),
            question=as_data(state.get("question", "")),
            missing=as_data(verdict.missing or "the answer"),
        )
        rewrite = log.ask(QueryRewrite, messages, "rewrite")
        queries = rewrite.queries if rewrite is not None else fallback_queries(verdict, analysis)
        return {"queries": queries, **log.update()}

    return rewriter
