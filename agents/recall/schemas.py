"""One pydantic schema per LLM decision of the read path.

The Judge and the answer share one call (:class:`DraftFirst`); the query rewrite after
an insufficient verdict, the Refresher and the plain answer (fallback) get one each.
Docstrings and field descriptions are the schema text the model sees. Free-text fields
are clipped instead of rejected, so a long-winded model costs no retry.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, Field

from ..common.formatting import distinct_items, natural_dates

MAX_NOTE = 160
"""Characters kept of a one-line field (what is missing, a reason)."""
MAX_ANSWER = 300
"""Characters kept of an answer."""
MAX_LABELS = 8
"""Memory labels kept of a list (citations, conflicts)."""
DRAFT_CITATIONS = 3
"""Citations the answer-first call may write. The limit is in its JSON schema, so a
grammar-constrained local model stops listing there: a 1.5B model otherwise cites most
of the context, about 4 output tokens per label."""
MAX_QUERIES = 3


_REFUSAL = re.compile(
    r"^\W*(?:not\s+(?:mentioned|stated|specified|available|answerable|known|found|provided)|"
    r"no\s+(?:information|mention|answer|memories|data)|unknown|unanswerable|n/?a\b|"
    r"(?:i\s+)?(?:do\s+not|don't|cannot|can't)\s+(?:know|tell|say|answer|determine|find)|"
    r"(?:it\s+is\s+|it's\s+)?(?:not\s+possible|impossible)\s+to|"
    r"the\s+(?:memories|context|conversation)\s+(?:do|does)\s*(?:not|n't))",
    re.IGNORECASE,
)


def is_refusal_text(answer: str) -> bool:
    """Whether an answer says the memories do not hold it ("Not mentioned...", "unknown")."""
    return bool(_REFUSAL.match(answer.strip()))


def _clip(limit: int) -> BeforeValidator:
    return BeforeValidator(lambda text: text.strip()[:limit] if isinstance(text, str) else text)


def _labels(value: object, limit: int = MAX_LABELS) -> object:
    if isinstance(value, str):  # a model may write "m1, m3" instead of a list
        value = [part for part in value.replace(";", ",").split(",")]
    if isinstance(value, list):
        out = [str(v).strip().strip("[]") for v in value if str(v).strip()]
        return list(dict.fromkeys(out))[:limit]
    return value


Note = Annotated[str, _clip(MAX_NOTE), Field(max_length=MAX_NOTE)]
AnswerText = Annotated[
    str,
    _clip(MAX_ANSWER),
    Field(max_length=MAX_ANSWER),
    AfterValidator(natural_dates),
    AfterValidator(distinct_items),
]
"""An answer, clipped, its ISO dates written as the memories write them (7 May 2023), a
listed item that repeats said once."""
"""Free text is cut to its limit when read, and the limit is in the JSON schema
(maxLength): a grammar-constrained local model must close the string there, so a
rambling answer cannot run into the call's token cap and leave the JSON unclosed."""
Labels = Annotated[list[str], BeforeValidator(_labels)]
Citations = Annotated[
    list[str],
    BeforeValidator(lambda v: _labels(v, DRAFT_CITATIONS)),
    Field(max_length=DRAFT_CITATIONS),
]
"""At most :data:`DRAFT_CITATIONS` labels: in the schema (maxItems), and cut to it."""


class DraftFirst(BaseModel):
    """A draft answer from the memories, then whether they really state it."""

    answer: AnswerText = Field(
        default="",
        description="the answer in a few words, from the memories only, with absolute "
        "dates written as the memories write them (7 May 2023); empty when nothing relates "
        "to the question",
    )
    cited: Citations = Field(
        default_factory=list,
        description=f"labels of the (at most {DRAFT_CITATIONS}) memories the answer relies on",
    )
    sufficient: bool = Field(
        description="true when the cited memories state this answer (the exact entity, "
        "date, place or quantity asked for); false when something required is missing"
    )
    missing: Note = Field(
        default="",
        description="only when not sufficient: one short phrase naming what is missing",
    )
    conflicting: Labels = Field(
        default_factory=list,
        description="labels of memories that contradict each other about the same thing; "
        "usually empty",
    )


def _queries(value: object) -> object:
    if isinstance(value, str):
        value = [value]
    if isinstance(value, list):
        out = [str(v).strip()[:MAX_NOTE] for v in value if str(v).strip()]
        return list(dict.fromkeys(out))[:MAX_QUERIES]
    return value


class QueryRewrite(BaseModel):
    """Search queries for what the memories were missing."""

    queries: Annotated[list[str], BeforeValidator(_queries)] = Field(
        min_length=1,
        description="1-3 short search queries for the missing information: keywords, a "
        "rephrased question, or a statement of what the answer would say",
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
    reason: Note = Field(default="", description="one short sentence")


class AnswerDraft(BaseModel):
    """The answer to the question, from the memories only, with citations."""

    answerable: bool = Field(
        description="false when the memories do not contain the answer; never guess"
    )
    answer: AnswerText = Field(
        default="", description="a short answer (a few words); absolute dates, not relative ones"
    )
    cited: Labels = Field(
        default_factory=list, description="labels of the memories the answer relies on"
    )
