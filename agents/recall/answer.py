"""The answer node: the Judge's draft when it suffices, else a plain answer or a refusal.

On the sufficient path the answer costs no call: the Judge's combined call already wrote
it. A plain answer call is made only when that call gave no usable output (a counted
fallback) or when the Refresher changed the memories the draft was written from. With
nothing retrieved, or a context still judged insufficient after the last round, it
refuses (REMem's refusal, for a question about something never said) instead of
giving the Judge's partial draft. A draft that cites only other people's words for a
question about one person (see :mod:`.attribution`), or whose content the memories it
cites do not hold (see :mod:`.grounding`), is refused.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langgraph.runtime import Runtime

from ...core import nodes
from ...core.context import MemoryContext, context_of
from ...core.state import AnswerSource, RecallState, RecallVerdict
from ...prompts.recall import ANSWER, ANSWER_HINTS
from ..common.deps import NodeDeps, StepLog
from ..common.formatting import as_data
from ..common.query_analysis import QueryAnalysis
from ..common.token_caps import capped_log
from .context import render_for
from .grounding import ground_shown
from .schemas import AnswerDraft, is_refusal_text

ANSWER_MAX_TOKENS = 96
"""Output cap of a plain answer call (fallback or after a refresh): a short answer."""
REFUSAL = "I don't know: my memory holds nothing that answers this."


def _answered(
    text: str, cited: list[str], source: AnswerSource, log: StepLog, *, refused: bool = False
) -> dict[str, Any]:
    out = {"answer": text, "citations": cited, "refused": refused, "answer_source": source}
    return {**out, **log.update()}


def _refusal(source: AnswerSource, log: StepLog) -> dict[str, Any]:
    return _answered(REFUSAL, [], source, log, refused=True)


def make_answer(deps: NodeDeps) -> Callable[..., dict[str, Any]]:
    """Build the ``answer`` node."""

    def plain_answer(
        state: RecallState, ctx: MemoryContext, source: AnswerSource
    ) -> dict[str, Any]:
        log = capped_log(nodes.ANSWER, deps, ANSWER_MAX_TOKENS)
        memories, labels = render_for(state.get("candidates", []), ctx)
        analysis = QueryAnalysis.model_validate(state.get("analysis") or {})
        messages = ANSWER.format_messages(
            memories=memories,
            question=as_data(state.get("question", "")),
            hint=ANSWER_HINTS[analysis.question_type],
        )
        draft = log.ask(AnswerDraft, messages, "answer")
        if draft is None or not draft.answerable or is_refusal_text(draft.answer):
            return _refusal(source, log)
        if not draft.answer:
            return _refusal(source, log)
        checked = ground_shown(
            draft.answer,
            state.get("question", ""),
            [labels[x] for x in draft.cited if x in labels],
            state.get("candidates", []),
            ctx.tz,
        )
        if not checked.grounded:  # its content is in no memory it was shown on the topic
            return _refusal(source, log)
        return _answered(draft.answer, checked.cited_ids, source, log)

    def answer(state: RecallState, runtime: Runtime[MemoryContext]) -> dict[str, Any]:
        """Return the draft, answer plainly (fallback, after a refresh), or refuse."""
        ctx = context_of(runtime)
        if not state.get("candidates"):
            return _refusal("no_memories", StepLog(nodes.ANSWER, deps))
        verdict = RecallVerdict.model_validate(state.get("verdict") or {"status": "failed"})
        if verdict.status == "failed":
            return plain_answer(state, ctx, "fallback")
        if any(w.granularity != "raw" for w in state.get("written", [])):
            return plain_answer(state, ctx, "after_refresh")
        log = StepLog(nodes.ANSWER, deps)
        usable = (
            bool(verdict.answer)
            and not verdict.refusal
            and not verdict.unsupported_person
            and not verdict.ungrounded
        )
        if usable and verdict.sufficient:
            return _answered(verdict.answer, list(verdict.cited_ids), "draft", log)
        return _refusal("draft", log)

    return answer
