"""Pydantic record types for every memory granularity.

Every record carries ``namespace`` (tenant scope, enforced on every read and write),
``source_ids`` (the raw turns it came from), ``occurred_at`` (when the event happened)
and ``recorded_at`` (when memory learned it). Both times are timezone-aware and
normalised to UTC; naive datetimes are rejected because their meaning is ambiguous.
"""

from __future__ import annotations

import hashlib
import uuid
from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    StrictStr,
    field_validator,
    model_validator,
)

from ..core.namespace import NAMESPACE_PATTERN, validate_namespace
from ..errors import InvalidInputError
from .timerefs import TimeGranularity, TimeRef, annotate_times

__all__ = [
    "NAMESPACE_PATTERN",
    "RECORD_TYPES",
    "ROLE_KEY",
    "EpisodeRecord",
    "FactRecord",
    "Granularity",
    "MemoryRecord",
    "MetadataValue",
    "ProfileRecord",
    "RawTurn",
    "SceneRecord",
    "TimeGranularity",
    "TimeRef",
    "annotate_times",
    "parse_granularity",
    "require_encodable",
    "stable_id",
    "utc_now",
    "validate_namespace",
]

MetadataValue = str | int | float | bool
"""A scalar that Chroma can store and filter on."""


class Granularity(StrEnum):
    """The four memory granularities, one Chroma collection each."""

    RAW = "raw"
    FACT = "fact"
    EPISODE = "episode"
    SCENE = "scene"


def utc_now() -> datetime:
    """Return the current time as an aware UTC datetime."""
    return datetime.now(UTC)


def _non_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty or whitespace only")
    return value


UtcDatetime = Annotated[AwareDatetime, AfterValidator(lambda value: value.astimezone(UTC))]
"""An aware datetime, converted to UTC. Naive datetimes fail validation."""

Text = Annotated[StrictStr, AfterValidator(_non_blank)]
Namespace = Annotated[StrictStr, AfterValidator(validate_namespace)]


def _unencodable(value: object) -> str | None:
    """The first lone surrogate found in a (nested) string value, or None."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as e:
            return value[e.start : e.end]
        return None
    if isinstance(value, list | tuple):
        items: list[object] = list(value)
    elif isinstance(value, dict):
        items = [*value.keys(), *value.values()]
    else:
        return None
    for item in items:
        bad = _unencodable(item)
        if bad is not None:
            return bad
    return None


def require_encodable(name: str, text: str) -> str:
    """``text`` unchanged, or InvalidInputError if it holds a lone UTF-16 surrogate.

    Such a string cannot be encoded as UTF-8, so no store, tokenizer or model can take
    it. Records refuse it on validation; every query entry point calls this first.
    """
    bad = _unencodable(text)
    if bad is not None:
        raise InvalidInputError(
            f"{name} holds a lone UTF-16 surrogate ({bad!r}), which is not valid text; "
            "decode the original bytes with errors='replace' first"
        )
    return text


def stable_id(*parts: str) -> str:
    """Return a deterministic id built from ``parts`` (sha256, 32 hex characters)."""
    digest = hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()
    return digest[:32]


class MemoryRecord(BaseModel):
    """Fields shared by every granularity."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True, frozen=False)

    granularity: ClassVar[Granularity]

    id: StrictStr = Field(
        default_factory=lambda: uuid.uuid4().hex,
        min_length=1,
        max_length=256,
        description="Unique id within the namespace and granularity.",
    )
    namespace: Namespace = Field(description="Tenant scope, e.g. 'user:alice'.")
    text: Text = Field(description="The memory's content, verbatim for raw turns.")
    source_ids: list[StrictStr] = Field(
        default_factory=list, description="Ids of the raw turns this record came from."
    )
    occurred_at: UtcDatetime = Field(description="When the event happened (UTC).")
    recorded_at: UtcDatetime = Field(
        default_factory=utc_now, description="When memory learned it (UTC)."
    )
    expires_at: UtcDatetime | None = Field(
        default=None,
        description="When the memory expires: no read finds it after this, and the sweeper "
        "forgets it (None: never). Derived records expire with the last of their sources.",
    )
    metadata: dict[StrictStr, MetadataValue] = Field(
        default_factory=dict, description="Free-form scalar metadata, filterable."
    )

    @field_validator("id")
    @classmethod
    def _id_charset(cls, value: str) -> str:
        if "|" in value or not value.strip():
            raise ValueError("id must be non-blank and must not contain '|'")
        return value

    @model_validator(mode="after")
    def _utf8_encodable(self) -> MemoryRecord:
        for name, value in self.__dict__.items():
            bad = _unencodable(value)
            if bad is not None:
                raise ValueError(
                    f"{name} holds a lone UTF-16 surrogate ({bad!r}), which cannot be stored "
                    "as UTF-8; decode the original bytes with errors='replace' first"
                )
        return self

    def index_text(self) -> str:
        """Return the text that is embedded and indexed for lexical search."""
        return self.text

    def display_text(self) -> str:
        """Return the text shown to a model or a user (raw turns add resolved dates)."""
        return self.text


ROLE_KEY = "role"
"""Raw turn metadata: ``"assistant"`` on a turn the agent wrote (an AI message, or a
message with role ``assistant``/``ai``). Such a turn is stored and shown as context, but
is never the only source of a fact."""


class PendingBuild(BaseModel):
    """A raw turn's consolidation still to run: ``add(..., consolidate="background")``.

    Kept on the turn itself, so what awaits construction is read from the store (both
    backends filter on ``pending``) and survives a crash or a restart. The worker clears
    it once the turn's batch is built.
    """

    model_config = ConfigDict(extra="forbid")

    batch: StrictStr = Field(description="The add call the turn came with; built together.")
    queued_at: UtcDatetime = Field(description="When the add stored the turn (batch order).")
    session_closed: bool = Field(default=False, description="The add closed the session.")
    instructions: StrictStr | None = Field(
        default=None, description="The add's construction instructions, if any."
    )


class RawTurn(MemoryRecord):
    """One conversation turn, verbatim, written before any LLM call."""

    granularity: ClassVar[Granularity] = Granularity.RAW

    speaker: Text = Field(description="Who said it.")
    session_id: Text = Field(description="The conversation session the turn belongs to.")
    turn_index: int = Field(ge=0, description="Position of the turn within its session.")
    media_caption: StrictStr | None = Field(
        default=None, description="Caption of an image or file shared with the turn."
    )
    context: StrictStr | None = Field(
        default=None,
        description="Neighbouring text (e.g. the previous turn) indexed to aid retrieval; "
        "not part of the verbatim turn.",
    )
    consolidated_into: list[StrictStr] = Field(
        default_factory=list,
        description="Ids of the episodes this turn was consolidated into (empty: not yet).",
    )
    trivial: bool = Field(
        default=False,
        description="Nothing to consolidate (a greeting or acknowledgement): the turn stays "
        "in the raw layer only and no LLM call is spent on it.",
    )
    time_refs: list[TimeRef] = Field(
        default_factory=list,
        description="Relative time expressions in the text, resolved against the turn's "
        "date when it was written (no LLM).",
    )
    pending: PendingBuild | None = Field(
        default=None,
        description="Set while the turn awaits background consolidation (None: built, or "
        "added inline).",
    )

    def display_text(self) -> str:
        """The verbatim text with each resolved time in brackets after its expression."""
        return annotate_times(self.text, self.time_refs)

    @classmethod
    def turn_id(cls, namespace: str, session_id: str, turn_index: int) -> str:
        """Return the stable id of a turn, so re-sending it is a no-op."""
        return stable_id("raw", namespace, session_id, str(turn_index))

    @model_validator(mode="before")
    @classmethod
    def _default_id(cls, data: Any) -> Any:
        if isinstance(data, dict) and "id" not in data:
            try:
                data = {
                    **data,
                    "id": cls.turn_id(
                        str(data["namespace"]), str(data["session_id"]), int(data["turn_index"])
                    ),
                }
            except (KeyError, TypeError, ValueError):
                pass  # field validation reports the real problem
        return data


FactKind = Literal["fact", "foresight", "preference"]


class FactRecord(MemoryRecord):
    """One atomic subject-verb-object statement, optionally time-qualified."""

    granularity: ClassVar[Granularity] = Granularity.FACT

    kind: FactKind = Field(default="fact", description="fact, foresight or preference.")
    subject: StrictStr | None = Field(default=None, description="Who or what it is about.")
    point_in_time: UtcDatetime | None = Field(default=None, description="When it held.")
    start_time: UtcDatetime | None = Field(default=None, description="When it began.")
    end_time: UtcDatetime | None = Field(default=None, description="When it ended.")
    valid_from: UtcDatetime | None = Field(default=None, description="Start of validity.")
    valid_to: UtcDatetime | None = Field(default=None, description="End of validity.")
    superseded_by: StrictStr | None = Field(
        default=None, description="Id of the fact that replaced this one; history is kept."
    )

    @model_validator(mode="after")
    def _ordered_intervals(self) -> FactRecord:
        for lo, hi in (("start_time", "end_time"), ("valid_from", "valid_to")):
            a, b = getattr(self, lo), getattr(self, hi)
            if a is not None and b is not None and b < a:
                raise ValueError(f"{hi} ({b.isoformat()}) is before {lo} ({a.isoformat()})")
        return self

    def event_time(self) -> datetime:
        """When what the fact states began: its validity start, else its event time.

        A fact this one supersedes is valid until then (never until the clock time of
        the update).
        """
        return self.valid_from or self.start_time or self.point_in_time or self.occurred_at

    def is_valid_at(self, when: datetime) -> bool:
        """Return True if the fact was valid (and not yet superseded) at ``when``."""
        if self.valid_from is not None and when < self.valid_from:
            return False
        return self.valid_to is None or when < self.valid_to


class EpisodeRecord(MemoryRecord):
    """A third-person narrative of one coherent event."""

    granularity: ClassVar[Granularity] = Granularity.EPISODE

    title: Text = Field(description="A short title.")
    start_at: UtcDatetime | None = Field(default=None, description="Start of the time span.")
    end_at: UtcDatetime | None = Field(default=None, description="End of the time span.")

    @model_validator(mode="after")
    def _ordered_span(self) -> EpisodeRecord:
        if self.start_at and self.end_at and self.end_at < self.start_at:
            raise ValueError("end_at is before start_at")
        return self

    def index_text(self) -> str:
        """Index the title with the narrative."""
        return f"{self.title}. {self.text}"


class SceneRecord(MemoryRecord):
    """A thematic cluster of episodes; ``text`` is the scene summary."""

    granularity: ClassVar[Granularity] = Granularity.SCENE

    title: StrictStr = Field(default="", description="A short label for the theme.")
    members: list[StrictStr] = Field(default_factory=list, description="Member episode ids.")
    centroid: list[float] | None = Field(
        default=None, description="Mean embedding of the member episodes."
    )

    @property
    def summary(self) -> str:
        """The scene summary (stored as the record text)."""
        return self.text


class ProfileRecord(BaseModel):
    """The profile of one namespace: its current facts, each filed under its person."""

    model_config = ConfigDict(extra="forbid")

    namespace: Namespace
    explicit_facts: list[StrictStr] = Field(default_factory=list)
    implicit_traits: list[StrictStr] = Field(default_factory=list)
    source_ids: list[StrictStr] = Field(
        default_factory=list, description="Ids of the scenes it was distilled from."
    )
    occurred_at: UtcDatetime | None = None
    recorded_at: UtcDatetime = Field(default_factory=utc_now)

    def about(self, person: str) -> list[str]:
        """The entries filed under ``person`` (``"<person>: ..."``, case-insensitive)."""
        prefix = f"{person.strip().lower()}: "
        entries = [*self.explicit_facts, *self.implicit_traits]
        return [e[len(prefix) :] for e in entries if e.lower().startswith(prefix)]

    def render(self) -> str:
        """Return the profile as prompt-ready text."""
        lines = ["Explicit facts:"] + [f"- {f}" for f in self.explicit_facts]
        lines += ["Implicit traits:"] + [f"- {t}" for t in self.implicit_traits]
        return "\n".join(lines)


RECORD_TYPES: dict[Granularity, type[MemoryRecord]] = {
    Granularity.RAW: RawTurn,
    Granularity.FACT: FactRecord,
    Granularity.EPISODE: EpisodeRecord,
    Granularity.SCENE: SceneRecord,
}


def parse_granularity(value: object) -> Granularity:
    """Return ``value`` as a :class:`Granularity`, or raise a fix-it error."""
    try:
        return Granularity(value)  # type: ignore[arg-type]
    except ValueError as e:
        allowed = ", ".join(g.value for g in Granularity)
        raise InvalidInputError(f"unknown granularity {value!r}; use one of: {allowed}") from e
