"""What the :class:`~memstrata.Memory` facade returns: small pydantic models."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from .agents.structured import LLMCall
from .graphs.state import Failure, Written


class _Result(BaseModel):
    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)


class AddResult(_Result):
    """What ``Memory.add`` stored.

    Raw turns are written before any LLM call, so ``new_raw_ids`` is complete even when
    consolidation failed; such failures are listed in ``failures``.
    """

    new_raw_ids: list[str] = Field(default_factory=list)
    duplicate_raw_ids: list[str] = Field(default_factory=list, description="Turns already stored.")
    written: list[Written] = Field(default_factory=list, description="Derived records changed.")
    failures: list[Failure] = Field(default_factory=list)
    llm_calls: list[LLMCall] = Field(default_factory=list)


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


class AnswerResult(_Result):
    """An answer with the memories it cites, or a refusal."""

    answer: str
    citations: list[str] = Field(default_factory=list, description="Ids of the cited memories.")
    refused: bool = False
    memories: list[MemoryHit] = Field(default_factory=list)
    rounds: int = 0
    failures: list[Failure] = Field(default_factory=list)
    llm_calls: list[LLMCall] = Field(default_factory=list)


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
