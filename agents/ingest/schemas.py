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


class PairVerdict(BaseModel):
    """The decision on one listed pair."""

    pair: str = Field(description='label of the pair, e.g. "p1"')
    outdated: bool = Field(
        description="true if the NEW statement means the OLD one is no longer true (moved, "
        "changed or quit a job, renamed, ended, sold, replaced, changed plans); false if "
        "both can be true (an added detail, a second one, a visit, a hypothetical, a past "
        "event, a repeat, someone else's)"
    )


class SupersessionCheck(BaseModel):
    """For each listed pair of statements about one person: is the old one out of date?"""

    verdicts: list[PairVerdict] = Field(description="one verdict per listed pair")


class FactLine(BaseModel):
    """One memory item of a construction reply: a fact, a plan or a preference."""

    kind: Literal["fact", "foresight", "preference"] = Field(
        description="fact: an event, name, relation, job, place or possession; foresight: "
        "a plan or intention; preference: a like, dislike or habit"
    )
    source: str | None = Field(default=None, description='label of the turn, e.g. "t3"')
    subject: str = Field(
        min_length=1, max_length=120, description="the person the statement is about"
    )
    statement: str = Field(min_length=3, description="one sentence with names, never I/you/he/she")


class ConstructionDraft(BaseModel):
    """What one construction call makes of a conversation excerpt."""

    title: str = Field(description="a title of the excerpt, at most 8 words")
    summary: str = Field(description="1-2 sentences, third person, with names and the dates given")
    facts: list[FactLine] = Field(
        description="what is worth remembering for weeks; an empty list when there is nothing "
        "(the key is required, so a reply without it is rejected instead of read as nothing)"
    )
