"""Slots: which attribute of which person a fact sets, found without an LLM.

An update replaces what one slot of one person held: "Ana moved to Porto" replaces
"Ana lives in Lisbon" (Ana's residence), "Ana quit the bakery" replaces "Ana works at
the bakery" (Ana's work). A fact's slots come from cue words, compared as Snowball
stems (the lexical channel's :class:`~lamina.stores.lexical.Analyzer`), plus a few
phrases; a plan (``kind="foresight"``) is always in the ``plans`` slot.

:func:`candidate_pairs` is the conflict check's pre-filter: a new fact is paired only
with current stored facts about the same person (names matched leniently, see
:func:`~lamina.agents.names.match_speakers`) that share a slot, so the model is asked
about those pairs only, and not at all when there are none.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cache

from ....records.model import FactRecord
from ....stores.lexical import Analyzer
from ...common.lexicon import (
    CALENDAR_NAMES,
    ENGLISH,
    HOMOGRAPHS,
    HOUSEMATE_WORDS,
    LEXICONS,
    PARTNER_WORDS,
    PET_WORDS,
    WORKMATE_WORDS,
)
from ...common.names import match_speakers
from .updates import comparable, same_person

SLOT_PHRASES: dict[str, tuple[str, ...]] = {
    slot: tuple(p for lexicon in LEXICONS for p in lexicon.slot_phrases.get(slot, ()))
    for slot in {s for lexicon in LEXICONS for s in lexicon.slot_phrases}
}
"""Phrases per slot, every language's, matched in the casefolded text."""

SLOT_WORDS: dict[str, str] = {
    "residence": "where they live",
    "work": "their work",
    "study": "what they study",
    "partner": "their partner",
    "pet": "their pet",
    "plans": "their plans",
    "name": "a name",
    "contact": "their contact details",
    "possession": "what they own",
    "diet": "their diet",
    "favourite": "a favourite",
}
"""How a slot is named to the model and in audit entries."""

_HEDGE = re.compile(
    r"\b(?:if|might|maybe|perhaps|possibly|considering|consider|thinking about|"
    r"thinks about|would like|wants to|dreams? of|someday|wish(?:es)?|could)\b",
    re.IGNORECASE,
)
"""A statement of what may be, not what is: it updates no slot."""

_ANALYZER = Analyzer()
_NAME = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-z]+(?:'s)?\b")
"""A capitalised word that does not start a sentence: a name of a place, firm, pet..."""


_KIN_SLOTS = (
    ("partner", PARTNER_WORDS),
    ("pet", frozenset(PET_WORDS)),
    ("residence", HOUSEMATE_WORDS),
    ("work", WORKMATE_WORDS),
)
"""The slots every language's relation and pet words cue."""
_ENGLISH_KIN = frozenset({*ENGLISH.relations, *ENGLISH.pets})
_WORD = re.compile(r"[^\W\d_]+")


@cache
def _stem_index() -> dict[str, frozenset[str]]:
    """Stem of each English cue word (:mod:`..common.lexicon`) -> the slots it cues.

    The partner and pet slots also take the partner and pet words, residence the
    roommates and work the bosses and colleagues.
    """
    index: dict[str, set[str]] = {}
    for slot, words in ENGLISH.slot_cues.items():
        for word in words:
            for stem in _ANALYZER(word):
                index.setdefault(stem, set()).add(slot)
    for slot, kin in _KIN_SLOTS:
        for word in kin & _ENGLISH_KIN:  # a word another slot has ("fish": diet) stays there
            for stem in _ANALYZER(word) if " " not in word else ():
                index.setdefault(stem, {slot})
    return {stem: frozenset(slots) for stem, slots in index.items()}


@cache
def _word_index() -> dict[str, frozenset[str]]:
    """Each other language's cue, relation or pet word -> the slots it cues, matched whole.

    An English stemmer would make the French "mari" of "Mary's" a partner; a word English
    writes too ("chat") cues nothing.
    """
    index: dict[str, set[str]] = {}
    for lexicon in LEXICONS:
        for slot, words in lexicon.slot_cues.items() if lexicon is not ENGLISH else ():
            for word in words:
                index.setdefault(word.casefold(), set()).add(slot)
    for slot, kin in _KIN_SLOTS:
        for word in kin - _ENGLISH_KIN - HOMOGRAPHS:
            index.setdefault(word, set()).add(slot)
    return {word: frozenset(slots) for word, slots in index.items()}


def cue_stems(slot: str | None = None) -> frozenset[str]:
    """The stems of every slot's cue words, or of ``slot``'s only."""
    index = _stem_index()
    return frozenset(s for s, slots in index.items() if slot is None or slot in slots)


def slots_of(text: str, kind: str = "fact") -> frozenset[str]:
    """The slots a statement sets: its cue stems and phrases; a plan is in ``plans``."""
    index, words = _stem_index(), _word_index()
    found: set[str] = {slot for stem in _ANALYZER(text) for slot in index.get(stem, ())}
    folded = f" {text.casefold()} "
    found |= {slot for word in _WORD.findall(folded) for slot in words.get(word, ())}
    found |= {s for s, phrases in SLOT_PHRASES.items() if any(p in folded for p in phrases)}
    if kind == "foresight":
        found.add("plans")
    return frozenset(found)


def names_in(text: str, people: Iterable[str] = ()) -> frozenset[str]:
    """Names a statement mentions other than ``people``: places, firms, pets, brands.

    Two statements about one person that name the same thing ("Westside", "Berlin",
    "Pepper") are about one slot even without a cue word: "Tom teaches at Westside"
    and "Tom left Westside".
    """
    found = {m.group().removesuffix("'s") for m in _NAME.finditer(text.strip())}
    found = {n for n in found if n not in CALENDAR_NAMES and n.lower() not in _ANALYZER.stop_words}
    return frozenset(n for n in found if not any(same_person(n, p) for p in people))


def hedged(text: str) -> bool:
    """Whether the statement is a hypothetical or a wish ("if I moved...", "might")."""
    return _HEDGE.search(text) is not None


def person_of(fact: FactRecord, people: Iterable[str]) -> str | None:
    """The fact's subject, or the first of ``people`` its text names when it has none."""
    if fact.subject and fact.subject.strip():
        return fact.subject
    named = match_speakers(fact.text, [p for p in people if p])
    return named[0] if named else None


@dataclass(frozen=True)
class CandidatePair:
    """A new fact and a current stored fact about the same person's same slot."""

    new: FactRecord
    old: FactRecord
    person: str
    slots: frozenset[str]

    def slot_words(self) -> str:
        """The shared slots as words, e.g. ``where they live`` or ``Westside``."""
        return ", ".join(SLOT_WORDS.get(s, s.removeprefix("name:")) for s in sorted(self.slots))


def _topics(fact: FactRecord, people: Sequence[str]) -> frozenset[str]:
    """A fact's slots and the names it mentions (``name:<Name>``)."""
    names = names_in(fact.text, people)
    return slots_of(fact.text, fact.kind) | {f"name:{n}" for n in names}


def candidate_pairs(
    new_facts: Sequence[FactRecord],
    stored_facts: Sequence[FactRecord],
    *,
    per_fact: int | None = None,
    said_at: Callable[[FactRecord], datetime] | None = None,
    plain: Collection[str] = (),
) -> list[CandidatePair]:
    """The (new, stored) pairs worth asking the model about, best first per new fact.

    A new fact is paired with a stored fact when both are about the same person and share
    a slot or a name ("Westside"), the stored fact is current and says something else,
    and the new one is not about a time before the stored one was said
    (``said_at``: when a fact was said, by default its event time). A hypothetical new
    fact ("if Ana moved to Berlin") is paired with nothing, unless its id is in ``plain``:
    the hedge is the model's and its person said it without one (see
    :func:`~lamina.agents.ingest.supersession.update_cues.plainly_said`). ``stored_facts`` keeps its
    order (pass the nearest by embedding first); at most ``per_fact`` stored facts are
    paired with one new fact. A stored fact that is also new is skipped.
    """
    said = said_at or FactRecord.event_time
    new_ids = {f.id for f in new_facts}
    people = [f.subject for f in [*new_facts, *stored_facts] if f.subject]
    stored = list({f.id: f for f in stored_facts if f.id not in new_ids}.values())
    old_topics = {f.id: _topics(f, people) for f in stored}
    old_people = {f.id: person_of(f, people) for f in stored}
    pairs: list[CandidatePair] = []
    for new in new_facts:
        topics = _topics(new, people)
        if not topics or not new.subject or (hedged(new.text) and new.id not in plain):
            continue
        taken = 0
        for old in stored:
            if per_fact is not None and taken >= per_fact:
                break
            shared = topics & old_topics[old.id]
            if not shared:
                continue
            if not same_person(new.subject, old_people[old.id]):
                continue
            if comparable(new, old, said(old)):
                pairs.append(CandidatePair(new=new, old=old, person=new.subject, slots=shared))
                taken += 1
    return pairs


__all__ = [
    "SLOT_PHRASES",
    "SLOT_WORDS",
    "CandidatePair",
    "candidate_pairs",
    "cue_stems",
    "hedged",
    "names_in",
    "person_of",
    "same_person",
    "slots_of",
]
