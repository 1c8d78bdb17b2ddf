"""The answer node: answers from validated memories only, cites them, or refuses.

It converts relative dates using memory dates and prefers the most recent valid fact
(both are instructions in the prompt, and superseded facts are marked with their
validity). With no memories, or when the model says the memories do not hold the
answer, it refuses (REMem's refusal; LoCoMo category 5) instead of guessing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langgraph.runtime import Runtime

from ..graphs.context import MemoryContext
from ..graphs.state import RecallState
from ..prompts.recall import ANSWER
from .deps import NodeDeps, StepLog, context_of
from .formatting import as_data, format_candidates
from .recall_schemas import AnswerDraft

NODE = "answer"
REFUSAL = "I don't know: my memory holds nothing that answers this."


def make_answer(deps: NodeDeps) -> Callable[..., dict[str, Any]]:
    """Build the ``answer`` node."""

    def answer(state: RecallState, runtime: Runtime[MemoryContext]) -> dict[str, Any]:
        """Answer the question from the candidates, with citations, or refuse."""
        ctx = context_of(runtime)
        log = StepLog(NODE, deps)
        candidates = state.get("candidates", [])
        refusal = {"answer": REFUSAL, "citations": [], "refused": True}
        if not candidates:
            return {**refusal, **log.update()}
        memories, labels = format_candidates(candidates, ctx.tz)
        question = as_data(state.get("question", ""))
        messages = ANSWER.format_messages(memories=memories, question=question)
        draft = log.ask(AnswerDraft, messages, "answer")
        if draft is None or not draft.answerable or not draft.answer.strip():
            return {**refusal, **log.update()}
        cited = [labels[x] for x in draft.cited if x in labels]
        return {
            "answer": draft.answer.strip(),
            "citations": cited,
            "refused": False,
            **log.update(),
        }

    return answer
