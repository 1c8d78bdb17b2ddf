"""The shared answer step of the compared systems.

Every system except lamina's full graph answers the same way, with
:data:`~lamina_bench.evaluation.prompts.EVAL_ANSWER` on the same model.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from langchain_core.messages import BaseMessage
from pydantic import BaseModel, Field

from lamina.agents.common.formatting import as_data
from lamina.llm.structured import LLMCall, StructuredCaller, StructuredOutputError

from .prompts import EVAL_ANSWER, NOT_MENTIONED
from .records import Costs, costs_of
from .transcripts import TokenCounter

NODE = "eval_answer"


class EvalAnswer(BaseModel):
    """The answer to the question, from the given context only."""

    answer: str = Field(
        description="the answer in at most five or six words, with absolute dates; or "
        f"exactly '{NOT_MENTIONED}' when the context does not contain it"
    )


@dataclass
class Answered:
    """What the answer step produced and cost."""

    text: str
    costs: Costs
    calls: list[LLMCall] = field(default_factory=list)
    failed: bool = False


class Answerer:
    """Asks the chat model for a short answer from a context (memories, excerpts, transcript)."""

    def __init__(self, caller: StructuredCaller, counter: TokenCounter) -> None:
        self.caller = caller
        self.counter = counter

    def messages(
        self, *, speakers: str, kind: str, context: str, question: str
    ) -> list[BaseMessage]:
        """The prompt; ``context`` must already be safe inside a ``<data>`` block."""
        return EVAL_ANSWER.format_messages(
            speakers=speakers,
            context_kind=kind,
            context_kind_title=kind[:1].upper() + kind[1:],
            context=context or "(nothing found)",
            question=as_data(question),
        )

    def answer(self, *, speakers: str, kind: str, context: str, question: str) -> Answered:
        """Answer, or an empty answer (marked failed) when every attempt failed."""
        messages = self.messages(speakers=speakers, kind=kind, context=context, question=question)
        prompt = self.counter.count("\n".join(str(m.content) for m in messages))
        try:
            result = self.caller.invoke(EvalAnswer, messages, node=NODE)
        except StructuredOutputError as e:
            return Answered("", costs_of(e.attempts, estimate=(prompt, 0)), e.attempts, True)
        text = result.value.answer.strip()
        completion = self.counter.count(result.value.model_dump_json())
        return Answered(text, costs_of(result.calls, estimate=(prompt, completion)), result.calls)
