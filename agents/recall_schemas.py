"""One pydantic schema per LLM decision of the read path.

Retriever, Judge, Refresher and answer each get one; docstrings and field descriptions
are the schema text the model sees.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class RetrievalPlan(BaseModel):
    """A standalone rewrite of the question, its intent vector and retrieval budget."""

    query: str = Field(
        min_length=1,
        description="the question rewritten to stand alone: resolve pronouns and references "
        "from the recent conversation, keep names and dates",
    )
    fine: bool = Field(default=False, description="needs exact wording or fine-grained details")
    abstract: bool = Field(default=False, description="asks for a summary or overview")
    event: bool = Field(default=False, description="spans several turns, events or times")
    atomic: bool = Field(default=True, description="a short single-point factual question")
    k: int = Field(default=5, ge=1, le=50, description="how many memories are likely needed")
    after: str | None = Field(
        default=None, description="YYYY-MM-DD: only events on or after this date are relevant"
    )
    before: str | None = Field(
        default=None, description="YYYY-MM-DD: only events before this date are relevant"
    )
    as_of: str | None = Field(
        default=None,
        description="YYYY-MM-DD when the question asks how things were at a past date "
        "(e.g. 'where did she live in 2020'); otherwise null",
    )


class Verdict(BaseModel):
    """Whether the retrieved memories answer the question, and what to do next."""

    action: Literal["pass", "retry", "refresh"] = Field(
        description="pass: the memories answer the question completely and precisely; "
        "retry: something required is missing; refresh: memories contradict each other "
        "about the same entity or time"
    )
    reason: str = Field(default="", description="one short sentence")
    found: list[str] = Field(default_factory=list, description="key information found")
    missing: list[str] = Field(default_factory=list, description="what is still missing")
    conflicting: list[str] = Field(
        default_factory=list, description="labels of memories that contradict each other"
    )
    queries: list[str] = Field(
        default_factory=list,
        description="for retry: 2-3 complementary queries for the missing information: a "
        "2-5 word keyword combination, a natural question, and a hypothetical statement "
        "of the answer",
    )


class RefreshEdit(BaseModel):
    """One change to one memory."""

    label: str = Field(description='label of the memory to change, e.g. "m3"')
    new_content: str = Field(default="", description="the corrected content (update only)")


class RefreshPlan(BaseModel):
    """How to resolve contradicting memories: update, delete or leave them."""

    action: Literal["update", "delete", "noop"] = Field(
        description="update: newer information corrects an older memory; delete: only when "
        "the user explicitly asked to forget or cancel it; noop: when in doubt"
    )
    edits: list[RefreshEdit] = Field(default_factory=list)
    reason: str = Field(default="", description="one short sentence")


class AnswerDraft(BaseModel):
    """The answer to the question, from the memories only, with citations."""

    answerable: bool = Field(
        description="false when the memories do not contain the answer; never guess"
    )
    answer: str = Field(
        default="", description="a short answer (a few words); absolute dates, not relative ones"
    )
    cited: list[str] = Field(
        default_factory=list, description="labels of the memories the answer relies on"
    )
