"""Update candidates: which stored facts a new fact might make out of date, found without words.

An update replaces what a person's earlier statement said: "Ana moved to Porto" after
"Ana lives in Lisbon", "Ana se mudó a Valencia" after "Ana vive en Madrid". Which
attribute the two statements share is not looked up in a word list (that only works in
the language and phrasing the list was written for): a new fact's candidates are the
current stored facts about the *same person* that are *nearest to it by embedding*, and
the model's update check decides every pair. Nearness ranks; it does not decide, so a
phrasing or a language the embedder knows poorly still reaches the model as long as the
person has few facts, and a person with many facts has the nearest few checked.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from ....records.model import FactRecord
from ...common.names import match_speakers

LATE_REPORT = timedelta(days=14)
"""How long before the old fact was said a change may have happened and still replace it
(two weeks: "last week" said the next day reaches back 13 days)."""


def same_person(a: str | None, b: str | None) -> bool:
    """Whether two subjects name the same person ("Kate" and "Katherine", "Ana" and "Ana Lopez").

    A missing subject matches nobody.
    """
    if not a or not b or not a.strip() or not b.strip():
        return False
    return bool(match_speakers(a, [b]) or match_speakers(b, [a]))


@dataclass(frozen=True)
class CandidatePair:
    """A new fact and a current stored fact about the same person, near it by embedding."""

    new: FactRecord
    old: FactRecord
    person: str
    about: str = ""
    """What both statements are about, when a slot names it ("where they live")."""


def comparable(new: FactRecord, old: FactRecord, said: datetime) -> bool:
    """Whether ``new`` could replace ``old``: current, another text, not about earlier.

    The new fact must not be about a time well before the old one was said (``said``):
    a change told late ("I moved to Berlin last week", the day after "I live in Paris")
    still counts, within :data:`LATE_REPORT`; a statement about an earlier year does not.
    """
    if old.id == new.id or old.superseded_by is not None:
        return False
    if " ".join(old.text.casefold().split()) == " ".join(new.text.casefold().split()):
        return False  # a repeat
    return new.event_time() >= said - LATE_REPORT


def candidate_pairs(
    new: FactRecord,
    nearest: Sequence[FactRecord],
    *,
    exclude: set[str],
    per_fact: int,
    said_at: Callable[[FactRecord], datetime] = FactRecord.event_time,
) -> list[CandidatePair]:
    """The pairs of ``new`` with the first ``per_fact`` comparable facts of ``nearest``.

    ``nearest`` are the stored facts nearest to ``new`` by embedding, nearest first;
    those whose subject is not ``new``'s person, and those in ``exclude`` (this batch's
    own new facts), are skipped. A new fact with no subject is paired with nothing.
    """
    if not new.subject or not new.subject.strip():
        return []
    pairs: list[CandidatePair] = []
    for old in nearest:
        if len(pairs) >= per_fact:
            break
        if old.id in exclude or not same_person(new.subject, old.subject):
            continue
        if comparable(new, old, said_at(old)):
            pairs.append(CandidatePair(new=new, old=old, person=new.subject))
    return pairs


__all__ = [
    "LATE_REPORT",
    "CandidatePair",
    "candidate_pairs",
    "comparable",
    "same_person",
]
