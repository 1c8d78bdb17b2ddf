"""State, input and output schemas of the memory graphs.

Values that accumulate over a run (LLM call records, failures, written records) use an
``operator.add`` reducer; decisions are overwritten on each pass.
"""

from __future__ import annotations

import operator
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, StrictStr
from typing_extensions import TypedDict

from .calls import LLMCall


class TurnInput(BaseModel):
    """One incoming conversation turn."""

    model_config = ConfigDict(extra="forbid")

    speaker: StrictStr = Field(min_length=1)
    text: StrictStr = Field(min_length=1)
    occurred_at: AwareDatetime
    session_id: StrictStr = Field(min_length=1)
    turn_index: int | None = Field(default=None, ge=0)
    media_caption: StrictStr | None = None
    metadata: dict[str, str | int | float | bool] = Field(default_factory=dict)
    expires_at: AwareDatetime | None = None


class Job(BaseModel):
    """One unit of consolidation work the episode trigger hands to the Constructor."""

    kind: Literal["episode", "merge", "turn_facts"]
    raw_ids: list[str]
    episode_id: str | None = None
    reason: str = ""


class TriggerDecision(BaseModel):
    """What the episode trigger decided, and why (visible in streams and Studio)."""

    policy: str
    consolidate: bool
    reason: str
    jobs: list[Job] = Field(default_factory=list)


class Written(BaseModel):
    """A derived record the run created or changed."""

    granularity: str
    id: str
    action: Literal["created", "merged", "updated", "superseded", "deleted"]


class Failure(BaseModel):
    """A step that failed; the graph went on without it."""

    node: str
    step: str
    error: str
    at: datetime


class Conflict(BaseModel):
    """A stored fact contradicted by a new one."""

    old_id: str
    new_id: str
    reason: str = ""


class IngestInput(TypedDict, total=False):
    """Input of the ingest graph."""

    turns: list[TurnInput | dict[str, Any]]
    session_closed: bool
    pending_raw_ids: list[str]
    """Turns already stored (``add(..., consolidate="background")``) to build now,
    instead of ``turns``."""


class IngestState(TypedDict, total=False):
    """State of the ingest graph."""

    turns: list[TurnInput | dict[str, Any]]
    session_closed: bool
    pending_raw_ids: list[str]
    new_raw_ids: list[str]
    duplicate_raw_ids: list[str]
    trigger: TriggerDecision
    new_fact_ids: list[str]
    conflicts: list[Conflict]
    settled_fact_ids: list[str]
    """Facts whose update check went through: the Refresher clears their pending flag in
    the transaction of its supersessions."""
    written: Annotated[list[Written], operator.add]
    llm_calls: Annotated[list[LLMCall], operator.add]
    failures: Annotated[list[Failure], operator.add]
    checks: Annotated[list[str], operator.add]
    """Changes the construction checks made: owner_corrected, owner_undecided,
    unsupported_dropped (one entry each)."""


class IngestOutput(TypedDict, total=False):
    """What an ingest run reports."""

    new_raw_ids: list[str]
    duplicate_raw_ids: list[str]
    trigger: TriggerDecision
    written: list[Written]
    conflicts: list[Conflict]
    llm_calls: list[LLMCall]
    failures: list[Failure]
    checks: list[str]


__all__ = [
    "Conflict",
    "Failure",
    "IngestInput",
    "IngestOutput",
    "IngestState",
    "Job",
    "TriggerDecision",
    "TurnInput",
    "Written",
    "AnswerSource",
    "Candidate",
    "RecallInput",
    "RecallOutput",
    "RecallState",
    "RecallVerdict",
]


# ----------------------------------------------------------------- recall / answer
class Candidate(BaseModel):
    """A retrieved memory with its provenance."""

    granularity: str
    id: str
    text: str
    occurred_at: datetime
    score: float
    title: str | None = None
    speaker: str | None = None
    source_ids: list[str] = Field(default_factory=list)
    ranks: dict[str, int] = Field(default_factory=dict)
    query: str = ""
    via: str = "search"
    """How it was found: ``search``, ``scene`` (scene expansion) or ``neighbour`` (a turn
    next to a raw hit)."""
    valid_to: datetime | None = None
    superseded_by: str | None = None
    media_caption: str | None = None
    """Raw turns: the caption of an image shared with the turn."""
    session_id: str | None = None
    """Raw turns: the session, for ordering the context."""
    turn_index: int | None = None
    """Raw turns: the position in the session, for ordering the context."""
    tokens: int = 0
    """Tokens of the memory's line in the context (set by the budget cut)."""


class RecallVerdict(BaseModel):
    """The Judge's verdict on one round's context, with its draft answer."""

    status: Literal["judged", "failed", "empty"] = "judged"
    """``judged``: the combined call answered; ``failed``: its output was malformed (the
    answer node falls back to a plain answer call); ``empty``: nothing was retrieved,
    so nothing was asked."""
    sufficient: bool = False
    missing: str = ""
    """What the context lacks, in a few words (drives the query rewrite)."""
    answer: str = ""
    """The draft answer."""
    refusal: bool = False
    """The draft says the memories do not hold the answer (or is empty)."""
    cited_ids: list[str] = Field(default_factory=list)
    conflicting_ids: list[str] = Field(default_factory=list)
    unsupported_person: str = ""
    """The person the question names when the draft cites only other people's turns
    (none mentioning them): the draft is then not taken as sufficient."""
    premise_failed: bool = False
    """No shown turn tied that person to the question's topic (``agents.premise``):
    later rounds must find one before a draft counts."""
    premise_searched: bool = False
    """Nor did any raw turn of the namespace (``agents.premise_search``): the premise
    fails for good, and the answer is a refusal without another round."""
    ungrounded: bool = False
    """The memories the draft cites do not hold its content, nor do any other shown
    memories on its topic (``agents.recall.grounding``): the draft is not taken."""
    recited: bool = False
    """The draft's own citations did not hold it; the shown memories that do replaced them."""
    round: int = 0

    @property
    def wants_refresh(self) -> bool:
        """Two or more memories contradict each other."""
        return len(self.conflicting_ids) >= 2


AnswerSource = Literal["draft", "fallback", "after_refresh", "no_memories"]
"""How the answer came about: the Judge's draft (no second call), a plain answer call
after the combined call failed (a counted fallback), a plain answer call after the
Refresher changed memories, or a refusal without any call because nothing was found."""


class RecallInput(TypedDict, total=False):
    """Input of the recall graph."""

    question: str
    window: list[str]
    """Recent conversation lines (shown to the query rewrite after an insufficient round)."""
    mode: Literal["answer", "retrieve"]
    as_of: datetime | None
    reference_time: datetime | None
    """What relative time words in the question are read against (default: the latest
    stored turn)."""


class RecallState(TypedDict, total=False):
    """State of the recall graph."""

    question: str
    window: list[str]
    mode: Literal["answer", "retrieve"]
    as_of: datetime | None
    reference_time: datetime | None
    analysis: dict[str, Any]
    """The deterministic query analysis (time window, persons, question type)."""
    queries: list[str]
    """Queries of the next (or last) retrieval round."""
    queries_tried: Annotated[list[str], operator.add]
    rounds: int
    candidates: list[Candidate]
    verdict: dict[str, Any]
    verdicts: Annotated[list[dict[str, Any]], operator.add]
    answer: str
    citations: list[str]
    refused: bool
    answer_source: AnswerSource
    written: Annotated[list[Written], operator.add]
    llm_calls: Annotated[list[LLMCall], operator.add]
    failures: Annotated[list[Failure], operator.add]


class RecallOutput(TypedDict, total=False):
    """What a recall run reports."""

    answer: str
    citations: list[str]
    refused: bool
    answer_source: AnswerSource
    analysis: dict[str, Any]
    candidates: list[Candidate]
    verdicts: list[dict[str, Any]]
    rounds: int
    queries_tried: list[str]
    written: list[Written]
    llm_calls: list[LLMCall]
    failures: list[Failure]
