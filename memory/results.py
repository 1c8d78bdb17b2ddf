"""What the :class:`~lamina.Memory` facade returns: small pydantic models."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, computed_field

from ..core.calls import LLMCall
from ..core.state import Failure, Written

__all__ = ["AddResult", "AnswerResult", "ForgetResult", "MemoryHit", "TokenUsage"]


class _Result(BaseModel):
    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)


class TokenUsage(BaseModel):
    """Tokens of a call's LLM requests, as the model server reported them.

    Nothing here is estimated: a request whose server sent no usage is counted in
    ``unreported_calls`` and adds no tokens.
    """

    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0
    unreported_calls: int = 0

    @classmethod
    def of(cls, calls: Sequence[LLMCall]) -> TokenUsage:
        """Sum the server-reported usage of ``calls``."""
        usage = cls(calls=len(calls))
        for call in calls:
            if call.prompt_tokens is None and call.completion_tokens is None:
                usage.unreported_calls += 1
            usage.prompt_tokens += call.prompt_tokens or 0
            usage.completion_tokens += call.completion_tokens or 0
        return usage


class _LLMResult(_Result):
    llm_calls: list[LLMCall] = Field(default_factory=list)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def repairs(self) -> int:
        """Replies whose broken JSON syntax json-repair fixed (no re-ask was needed)."""
        return sum(1 for c in self.llm_calls if c.repaired)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def reasks(self) -> int:
        """Times a model was asked again because its reply could not be used."""
        return sum(1 for c in self.llm_calls if c.reask)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def usage(self) -> TokenUsage:
        """Server-reported tokens of :attr:`llm_calls` (never estimated)."""
        return TokenUsage.of(self.llm_calls)


class AddResult(_LLMResult):
    """What ``Memory.add`` stored.

    Raw turns are written before any LLM call, so ``new_raw_ids`` is complete even when
    consolidation failed; such failures are listed in ``failures`` (and logged at
    WARNING), and ``model_error`` says so when the chat model could not be reached.
    """

    new_raw_ids: list[str] = Field(default_factory=list)
    duplicate_raw_ids: list[str] = Field(default_factory=list, description="Turns already stored.")
    written: list[Written] = Field(default_factory=list, description="Derived records changed.")
    failures: list[Failure] = Field(default_factory=list)
    model_error: str | None = Field(
        default=None,
        description="Set when no LLM call reached the chat model: the raw turns are stored "
        "and will be consolidated by a later add; the text says how to reach a model.",
    )
    pending_raw_ids: list[str] = Field(
        default_factory=list,
        description='consolidate="background": the turns stored and left for the worker '
        "(see Memory.flush).",
    )


class MemoryHit(_Result):
    """One retrieved memory."""

    granularity: str
    id: str
    text: str
    score: float
    occurred_at: datetime
    speaker: str | None = None
    ranks: dict[str, int] = Field(
        default_factory=dict, description="1-based rank per channel (dense, bm25)."
    )
    via: str | None = Field(
        default=None,
        description="Recall only: how it was found (search, scene expansion, neighbour turn).",
    )
    similarity: float | None = Field(
        default=None,
        description="Search only: cosine similarity of the query and the memory (what "
        "threshold= compares), when known.",
    )
    metadata: dict[str, str | int | float | bool] = Field(
        default_factory=dict, description="The memory's own metadata (add(metadata=...))."
    )


class AnswerResult(_LLMResult):
    """An answer with the memories it cites, or a refusal; :meth:`explain` says why."""

    answer: str
    citations: list[str] = Field(default_factory=list, description="Ids of the cited memories.")
    refused: bool = False
    memories: list[MemoryHit] = Field(
        default_factory=list, description="What was retrieved, in the order the Judge saw it."
    )
    rounds: int = 0
    failures: list[Failure] = Field(default_factory=list)
    question: str = ""
    verdicts: list[dict[str, Any]] = Field(
        default_factory=list, description="The Judge's verdict of each round."
    )
    queries: list[str] = Field(default_factory=list, description="Every search query tried.")
    pending_turns: int = Field(
        default=0,
        description="Raw turns of the namespace still awaiting background consolidation: "
        "found through the raw layer, not yet as facts or episodes.",
    )

    def best_memories(self, k: int) -> list[MemoryHit]:
        """The ``k`` memories that best back the answer.

        The cited ones come first, then raw turns by fused score, then facts, episodes
        and scenes by theirs. :attr:`memories` keeps the order the Judge saw, which is
        not best first (by default the best raw turn comes last, next to the question).
        """
        cited = {c: n for n, c in enumerate(self.citations)}

        def rank(m: MemoryHit) -> tuple[int, int, float, str]:
            return (cited.get(m.id, len(cited)), m.granularity != "raw", -m.score, m.id)

        return sorted(self.memories, key=rank)[: max(k, 0)]

    def explain(self, width: int = 160) -> str:
        """A readable account: the evidence, the Judge's verdicts, the rounds, the answer.

        Memories are labelled ``m1``, ``m2``... in the order the Judge and the answer saw
        them, the labels the Judge's ``conflicting`` list uses.
        """
        lines = [f"question: {self.question}"] if self.question else []
        lines.append(f"{'refused' if self.refused else 'answer'}: {self.answer}")
        used = self.usage
        unreported = f", {used.unreported_calls} without usage" if used.unreported_calls else ""
        lines.append(
            f"rounds: {self.rounds}; LLM calls: {used.calls} ({self.repairs} repaired, "
            f"{self.reasks} re-asked); tokens (server-reported): {used.prompt_tokens} prompt + "
            f"{used.completion_tokens} completion{unreported}"
        )
        if self.queries:
            lines.append("queries tried: " + "; ".join(repr(q) for q in self.queries))
        lines.append("judge:" if self.verdicts else "judge: no verdict recorded")
        lines.extend(_verdict_lines(v) for v in self.verdicts)
        lines.append(f"evidence ({len(self.memories)} memories, as the Judge saw them):")
        cited = set(self.citations)
        for n, hit in enumerate(self.memories, start=1):
            mark = "<- cited " if hit.id in cited else ""
            lines.append(_clip(f"  m{n} {mark}{_hit_line(hit)}", width))
        if not self.memories:
            lines.append("  (nothing was retrieved)")
        for failure in self.failures:
            lines.append(_clip(f"failed: {failure.node}/{failure.step}: {failure.error}", width))
        return "\n".join(lines)


def _clip(text: str, width: int) -> str:
    flat = " ".join(text.split()) if "\n" in text else text
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _hit_line(hit: MemoryHit) -> str:
    """Granularity, id, date, score and ranks first (never clipped), then the text."""
    ranks = ", ".join(f"{channel} #{rank}" for channel, rank in sorted(hit.ranks.items()))
    how = "; ".join(x for x in (ranks, f"via {hit.via}" if hit.via else "") if x)
    who = f"{hit.speaker}: " if hit.speaker else ""
    text = " ".join(hit.text.split())
    head = f"[{hit.granularity} {hit.id}] {hit.occurred_at:%Y-%m-%d} score {hit.score:.4f}"
    return f"{head}{f' ({how})' if how else ''} {who}{text}"


_VERDICT_HEAD = ("round", "action", "status", "sufficient")


def _verdict_lines(verdict: dict[str, Any]) -> str:
    """One verdict: its round and decision, then every other non-empty field."""
    if "action" in verdict:
        decision = str(verdict["action"])
    elif "sufficient" in verdict:
        decision = "sufficient" if verdict["sufficient"] else "insufficient"
    else:
        decision = "?"
    status = verdict.get("status")
    if status and status != "judged":
        decision += f" ({status})"
    reason = str(verdict.get("reason") or "").strip()
    parts = [
        f"  round {verdict.get('round', '?')}: {decision}" + (f" - {reason}" if reason else "")
    ]
    for key, value in verdict.items():
        if key in _VERDICT_HEAD or key == "reason" or value in (None, "", [], {}, False):
            continue
        shown = "; ".join(str(v) for v in value) if isinstance(value, list) else str(value)
        parts.append(f"    {key}: {shown}")
    return "\n".join(parts)


class ForgetResult(_Result):
    """What ``Memory.forget`` removed; the tombstone holds ids and counts, never content."""

    deleted: dict[str, list[str]] = Field(
        default_factory=dict, description="Deleted record ids per granularity (and 'profile')."
    )
    updated: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Records kept but cleaned: forgotten sources, members or context removed.",
    )
    not_found: list[str] = Field(
        default_factory=list, description="Requested ids that exist in no granularity."
    )
    tombstone_ids: list[str] = Field(default_factory=list)

    @property
    def count(self) -> int:
        """How many records were deleted."""
        return sum(len(ids) for ids in self.deleted.values())
