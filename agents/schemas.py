"""One pydantic schema per LLM decision.

Docstrings and field descriptions are the schema text the model sees, so they are
written as instructions.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class BoundaryDecision(BaseModel):
    """Whether the newest turns start a new episode (AMA's episode boundary judge)."""

    new_episode: bool = Field(
        description="true if the new turns shift topic, explicitly change subject, or the "
        "current episode is saturated; false if they continue it"
    )
    reason: str = Field(default="", description="one short sentence")


class EpisodeDraft(BaseModel):
    """A third-person narrative of one coherent event from a conversation excerpt."""

    title: str = Field(min_length=1, description="a concise title of the core event or topic")
    narrative: str = Field(
        min_length=1,
        description="third-person narrative: who took part, what happened or was discussed, "
        "decisions, plans and outcomes; relative dates rewritten as absolute dates",
    )
    date: str | None = Field(
        default=None, description="when the event happened, YYYY-MM-DD, if the excerpt says"
    )


class FactDraft(BaseModel):
    """One atomic fact: a single subject-verb-object statement."""

    statement: str = Field(
        min_length=1,
        description="one self-contained subject-verb-object sentence with full names, "
        "absolute dates instead of relative ones",
    )
    subject: str | None = Field(default=None, description="who or what the fact is about")
    kind: Literal["fact", "foresight", "preference"] = Field(
        default="fact",
        description="fact: something true now or in the past; foresight: a plan, intention "
        "or temporary state with limited validity; preference: a like, dislike or habit",
    )
    point_in_time: str | None = Field(default=None, description="YYYY-MM-DD when it happened")
    start: str | None = Field(default=None, description="YYYY-MM-DD when it began")
    end: str | None = Field(default=None, description="YYYY-MM-DD when it ended")
    valid_until: str | None = Field(
        default=None, description="foresight only: YYYY-MM-DD after which it no longer holds"
    )
    sources: list[str] = Field(
        default_factory=list, description='labels of the turns it comes from, e.g. ["t2"]'
    )


class FactList(BaseModel):
    """New atomic facts; facts already known are left out."""

    facts: list[FactDraft] = Field(
        description="the new facts; an empty list when there are none (the key is required, "
        "so a reply without it is rejected instead of read as 'no facts')"
    )


class SceneSummary(BaseModel):
    """An updated summary of a theme that spans several episodes."""

    title: str = Field(min_length=1, description="a short label for the theme")
    summary: str = Field(min_length=1, description="a compact summary of all its episodes")


class ProfileUpdate(BaseModel):
    """The user profile, rewritten from the current profile and recent scene summaries."""

    explicit_facts: list[str] = Field(
        description="stable, stated facts about the people (names, relations, jobs, places)",
    )
    implicit_traits: list[str] = Field(description="traits and preferences inferred from behaviour")


class ConflictPair(BaseModel):
    """A new fact that contradicts an existing one."""

    new: str = Field(description='label of the new fact, e.g. "n1"')
    old: str = Field(description='label of the existing fact it replaces, e.g. "o2"')
    reason: str = Field(default="", description="one short sentence")


class ConflictReport(BaseModel):
    """Contradictions between new facts and existing facts about the same entity."""

    conflicts: list[ConflictPair] = Field(
        description="only real contradictions about the same entity, event or time; "
        "different wording or added detail is not a conflict",
    )
