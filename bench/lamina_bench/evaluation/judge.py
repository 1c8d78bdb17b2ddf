"""The LLM judge with mem0's LoCoMo semantics.

One user message with the question, the gold answer and the generated answer; the judge
is generous about length and date formats, explains in one sentence and gives one label.
A question scores 1 when the label is CORRECT and 0 otherwise (a judge that gives no valid
label after its retries is recorded as ERROR and also scores 0). Category 5 is not judged,
as in mem0. The judge model is configurable and recorded with the results.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from lamina.llm.structured import StructuredCaller, StructuredOutputError

from .prompts import EVAL_JUDGE
from .records import Costs, costs_of
from .transcripts import TokenCounter

NODE = "eval_judge"


class JudgeLabel(BaseModel):
    """Whether the generated answer matches the gold answer."""

    reason: str = Field(default="", description="one sentence explaining the decision")
    label: Literal["CORRECT", "WRONG"] = Field(description="CORRECT or WRONG, exactly one")

    @field_validator("label", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        return value.strip().upper() if isinstance(value, str) else value


@dataclass
class Judgement:
    """The judge's label (CORRECT / WRONG / ERROR), its reason and what it cost."""

    label: str
    reason: str
    costs: Costs

    @property
    def correct(self) -> bool:
        """mem0's score: only CORRECT counts."""
        return self.label == "CORRECT"


class Judge:
    """Labels answers with a (configurable) judge model."""

    def __init__(self, caller: StructuredCaller, counter: TokenCounter, *, name: str) -> None:
        self.caller = caller
        self.counter = counter
        self.name = name
        """The judge model, as recorded in the results."""

    def judge(self, question: str, gold: str, answer: str) -> Judgement:
        """Label ``answer``; never raises for a model failure (the label is then ERROR).

        An empty answer (the answer step failed) is WRONG without asking the judge.
        """
        if not answer.strip():
            return Judgement("WRONG", "empty answer (not sent to the judge)", {})
        messages = EVAL_JUDGE.format_messages(question=question, gold=gold, answer=answer)
        prompt = self.counter.count(str(messages[0].content))
        try:
            result = self.caller.invoke(JudgeLabel, messages, node=NODE)
        except StructuredOutputError as e:
            reason = f"no valid label: {e}"[:500]
            return Judgement("ERROR", reason, costs_of(e.attempts, estimate=(prompt, 0)))
        completion = self.counter.count(result.value.model_dump_json())
        costs = costs_of(result.calls, estimate=(prompt, completion))
        return Judgement(result.value.label, result.value.reason, costs)
