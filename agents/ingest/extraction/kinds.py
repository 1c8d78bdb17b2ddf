"""A note's kind (fact, plan, preference) read from its own wording, not the model's tag.

The construction prompt asks for ``F``, ``P`` and ``L`` lines. A 1.5B model mostly
cycles through the tags in the order its example shows them (F, L, P, F, L, P, ...)
whatever each note says: in a built memory, about half the notes tagged as plans said
nothing about the future ("Maya made a bowl in her class") and more than half of those
tagged as preferences held no like, dislike or habit. The kind is not cosmetic:
every plan of a person shares the ``plans`` slot (:mod:`..supersession.slots`), so a past
event tagged as a plan is paired with that person's real plans and sent to the model's update check,
and the profile files preferences as traits.

:func:`checked_kind` keeps the model's kind when the wording allows it and corrects it
only when the wording rules it out:

* a note that looks ahead (``will``, ``is going to``, ``plans to``, ``wants to``,
  ``next month``, ``is moving ... in September``...) is a plan;
* a plan that does not look ahead is a preference when it states a like or a habit,
  else a fact;
* a preference with no like, dislike or habit in it is a fact.

A fact tagged as a fact stays one even when it mentions a like ("Lena thanked
Maya, who loves pottery"): only a wrong tag is repaired, never a plausible one.
"""

from __future__ import annotations

import re

from ....records.model import FactKind
from ...common.lexicon import MONTHS_EN, SEASONS_EN, UNITS_EN, WEEKDAYS_EN

_PERIODS = "|".join([*(u for u in UNITS_EN if u != "day"), *SEASONS_EN])
"""The periods a "next" or "this" points ahead with ("the next day" tells of the past)."""
_AHEAD = re.compile(
    r"\b(?:will|won't|shall|'ll|gonna|wanna"
    r"|(?:is|are|am|'s|'re|'m)\s+(?:(?:really|also|still|just|now|definitely|probably|"
    r"finally)\s+)?(?:going|planning|hoping|aiming|about|looking forward|scheduled)\s+to"
    r"|(?:plans?|intends?|hopes?|wants?|aims?|expects?)\s+to"
    r"|(?:would|'d)\s+(?:like|love)\s+to|can't wait\s+to|cannot wait\s+to"
    rf"|next\s+(?:{_PERIODS})"
    r"|one day|someday|some day|in the future|upcoming)\b",
    re.IGNORECASE,
)
"""Wording that looks ahead: a plan, an intention, a wish or a prediction."""

_MONTHS = "|".join(m.capitalize() for m in MONTHS_EN)
_WEEKDAYS = "|".join(d.capitalize() for d in WEEKDAYS_EN)
_SOON_PROGRESSIVE = re.compile(
    r"\b(?:is|are|am|'s|'re|'m)\s+(?:\w+\s+)?\w+ing\b[^.!?]*?\b(?:tomorrow|tonight|"
    rf"this\s+(?:{_PERIODS})|"
    rf"in\s+(?:{_MONTHS})|on\s+(?:{_WEEKDAYS}))\b"
)
"""The present progressive with a time to come: "Maya is moving to Lisbon in September"."""

_LIKES = re.compile(
    r"\b(?:loves?|likes?|enjoys?|prefers?|hates?|dislikes?|adores?|detests?|"
    r"favou?rites?|fan of|fond of|passionate about|keen on|can't stand|"
    r"(?:is|are|am|'s|'re|'m)\s+(?:really\s+|so\s+|very\s+)?into|"
    r"usually|always|often|regularly|never|every\s+(?:day|morning|evening|night|"
    rf"{_PERIODS})|each\s+(?:day|week|month)|habit|routine|"
    r"tends? to|(?:is|are) used to)\b",
    re.IGNORECASE,
)
"""Wording of a like, a dislike or a habit."""


def looks_ahead(statement: str) -> bool:
    """Whether the statement speaks of something still to come (a plan or a wish)."""
    return _AHEAD.search(statement) is not None or _SOON_PROGRESSIVE.search(statement) is not None


def states_a_like(statement: str) -> bool:
    """Whether the statement holds a like, a dislike or a habit."""
    return _LIKES.search(statement) is not None


def checked_kind(kind: FactKind, statement: str) -> tuple[FactKind, bool]:
    """The kind to store the note as, and whether the model's ``kind`` was corrected."""
    if looks_ahead(statement):
        found: FactKind = "foresight"
    elif kind == "fact":
        found = "fact"
    else:
        found = "preference" if states_a_like(statement) else "fact"
    return found, found != kind


__all__ = ["checked_kind", "looks_ahead", "states_a_like"]
