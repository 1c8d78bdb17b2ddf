"""A peer as an evaluated system: its own search, then the shared answer prompt."""

from __future__ import annotations

import time
from dataclasses import dataclass

from lamina.agents.common.formatting import data_line, long_date

from ...datasets.locomo import Conversation
from ..answering import Answerer
from ..records import ANSWER_STEP_FAILED
from ..subset import EvalQuestion
from ..systems import SystemAnswer, speakers_of
from ..transcripts import TokenCounter
from .base import UTC_ZONE, PeerMemory, Recalled
from .ingest import describe


def memory_lines(found: list[Recalled]) -> str:
    """``[m1] (8 May 2023) text`` per memory, in the peer's ranking order."""
    lines = []
    for n, memory in enumerate(found, start=1):
        day = f"({long_date(memory.on, UTC_ZONE)}) " if memory.on else ""
        lines.append(f"[m{n}] {day}{data_line(memory.text)}")
    return "\n".join(lines)


@dataclass
class PeerSystem:
    """A peer's top-k memories of the conversation through the shared answer step.

    Its search calls no LLM (mem0 without its optional reranker, LangMem's store search),
    so a question costs the answer call only; the search's time counts in the latency.
    """

    name: str
    stage: str
    memory: PeerMemory
    answerer: Answerer
    counter: TokenCounter
    k: int

    def answer(self, conv: Conversation, question: EvalQuestion) -> SystemAnswer:
        """Search the peer's memory of ``conv``, then answer from what it returned."""
        started = time.perf_counter()
        notes: list[str] = []
        try:
            found = self.memory.search(conv.sample_id, question.text, self.k)
        except Exception as e:  # the peer failed: answered from nothing, and said so
            found = []
            notes.append(f"{self.name} search failed: {describe(e)}")
        context = memory_lines(found)
        result = self.answerer.answer(
            speakers=speakers_of(conv), kind="memories", context=context, question=question.text
        )
        return SystemAnswer(
            answer=result.text,
            refused=False,
            used=list(dict.fromkeys(d for m in found for d in m.dia_ids)),
            costs=result.costs,
            context_tokens=self.counter.count(context) if found else 0,
            failures=len(notes),
            notes=notes + ([ANSWER_STEP_FAILED] if result.failed else []),
            latency_s=time.perf_counter() - started,
        )


__all__ = ["PeerSystem", "memory_lines"]
