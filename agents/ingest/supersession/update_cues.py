"""Update cues: a newer statement that says in so many words that a state changed.

"Ana moved to Porto", "Ana quit the bakery", "Tom and Lea broke up", "the trip to Rome
is cancelled": English marks a change of where someone lives, works or studies, of a
partner, a pet, a plan, a name, a number, a possession or a diet with a small set of
verbs and phrases. When a candidate pair (same person, same slot; see
:mod:`.slots`) has such a cue for the shared slot in its newer statement, the older
statement is out of date without asking the model: a 1.5B model, asked, mostly answers
"not outdated". Pairs without a cue still go to the model.

Two kinds of cue:

* *leaving* ("quit", "moved out", "broke up", "sold", "cancelled", "no longer"): the old
  state ended, whatever the old statement named;
* *arriving* ("moved to", "new job", "renamed", "postponed", "instead"): a new state
  replaced the old one, so the newer statement must name something the older one does
  not ("Ana moved to Lisbon" does not replace "Ana lives in Lisbon").

A cue right after a negation ("didn't quit", "hasn't moved", "never sold") is no cue,
and a hypothetical is paired with nothing in the first place (:func:`.slots.hedged`),
unless the hedge is only the model's (:func:`plainly_said`).
The phrases themselves are data, in :mod:`.update_phrases`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from ....records.model import FactRecord
from ....stores.lexical import Analyzer
from ...common.formatting import SENTENCE_BREAK
from ...common.lexicon import (
    PARTNER_WORDS,
    POSSESSIVES,
    RELATION_WORDS,
    SEASONS_EN,
    SUBJECT_I,
    UNITS_EN,
    WEEKDAYS_EN,
)
from ..evidence.support import content_terms
from .slots import CandidatePair, cue_stems, hedged, names_in, slots_of
from .update_phrases import ANY_SLOT_LEAVING, ARRIVING, LEAVING

_stems = Analyzer()

CueKind = Literal["leaving", "arriving"]

SINGLE_VALUED = frozenset({"residence", "work", "study", "partner", "diet", "contact"})
"""Slots a person holds one value of at a time: a cue in the slot is enough."""

NEW_VALUE = frozenset({"residence", "work", "study", "name", "contact", "favourite"})
"""Slots whose arriving cue must bring a new value ("moved to Lisbon" repeats "lives in
Lisbon"); in the others the same thing may change state ("Nina and I got married" after
"Nina and I are dating", "the Rome trip is postponed")."""

_RELATIONS = "|".join(re.escape(w) for w in sorted(RELATION_WORDS, key=len, reverse=True))
_SOMEONE_ELSES = re.compile(rf"^(?:\w+,? ){{0,2}}\w+'s (?:\w+ )?(?:{_RELATIONS})s?\b")
"""A statement whose subject is the person's relative or friend ("Jen's brother moved to
Austin", "Ana's best friend Carla got a new job"): the change is theirs."""

_STILL = re.compile(r"\bstill\b")
"""A statement of what continues ("still driving the Mazda") ends nothing."""

_ADDITION = re.compile(
    r"\b(?:both|also|as well|too|in addition|additionally|added|adding|another|second)\b"
)
"""A statement of something more ("now studying both chemistry and music", "added a
minor") brings a value beside the old one, not instead of it."""

_NEGATION = re.compile(r"(?:\bnot|n't|\bnever|\bno)\s+(?:\w+\s+)?$")
"""A negation just before a cue ("didn't quit", "has not yet moved to")."""


def _compile(phrases: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(phrases) + r")(?!\w)")


_LEAVING = {slot: _compile(p) for slot, p in LEAVING.items()}
_ARRIVING = {slot: _compile(p) for slot, p in ARRIVING.items()}
_ANY_LEAVING = _compile(ANY_SLOT_LEAVING)


@dataclass(frozen=True)
class UpdateCue:
    """The cue found in a pair's newer statement."""

    slot: str
    kind: CueKind
    phrase: str


def _affirmed(pattern: re.Pattern[str], text: str, *, negated_ok: bool = False) -> str | None:
    """The first match of ``pattern`` in ``text`` that no negation precedes.

    ``negated_ok``: phrases that carry their own negation ("no longer", "not ... any
    more", "anymore") count wherever they are.
    """
    for match in pattern.finditer(text):
        if negated_ok or not _NEGATION.search(text[: match.start()]):
            return match.group()
    return None


def _shares_object(pair: CandidatePair, slot: str | None = None) -> bool:
    """Whether both statements are about one thing: a shared name or content word.

    Cue words of the slot ("trip", "plan"; of any slot when ``slot`` is None) do not
    count: "cancelled the gym membership" does not end "a trip to Rome", "cancelled the
    Rome trip" does. Another slot's word is a thing of this one ("the house plan is
    off" ends "planning to buy a house").
    """
    people = [pair.person]
    if names_in(pair.new.text, people) & names_in(pair.old.text, people):
        return True
    shared = content_terms(pair.new.text, people) & content_terms(pair.old.text, people)
    return bool(shared - cue_stems(slot))


_TIME_WORDS = frozenset(
    [*WEEKDAYS_EN, *UNITS_EN, *(f"{unit}s" for unit in UNITS_EN)]
    + "last next this ago today yesterday tomorrow tonight recently lately now morning "
    "evening night".split()
)


def _brings_new_value(pair: CandidatePair) -> bool:
    """Whether the newer statement holds a value the older one lacks.

    By names when it names anything ("Porto" after "Lisbon"; "moved to Lisbon last
    week" after "lives in Lisbon" brings nothing), else by content words other than
    cue and time words ("switched my major to graphic design" after "majoring in
    chemistry").
    """
    people = [pair.person]
    new_names = names_in(pair.new.text, people)
    if new_names:
        return bool(new_names - names_in(pair.old.text, people))
    fresh = content_terms(pair.new.text, people) - content_terms(pair.old.text, people)
    return bool(fresh - cue_stems() - {t for w in _TIME_WORDS for t in _stems(w)})


_NAME_LEAVING = (
    r"(?:left|leaving|quit|quitting|sold|selling|traded(?: in)?|swapped|replaced|"
    r"moved (?:out of|away from)|"
    r"broke up with|split from|divorced|re-?homed|stop(?:ped)? calling (?:me|him|her|them))"
)
"""A leaving verb right before a name both statements share ("left St. Mary's", "traded
in the Volvo", "stop calling me Teddy")."""


def _leaves_shared_name(pair: CandidatePair, text: str) -> str | None:
    """The leaving phrase aimed at a name both statements share, or None."""
    people = [pair.person]
    for name in names_in(pair.new.text, people) & names_in(pair.old.text, people):
        pattern = re.compile(
            rf"\b{_NAME_LEAVING} (?:the |my |our |his |her |their )?"
            + re.escape(name.casefold())
            + r"(?!\w)"
        )
        found = _affirmed(pattern, text)
        if found is not None:
            return found
    return None


_SINGLE = re.compile(r"\b(?:is|am|are|was|been|being|stays?|still|now) single\b")
_A_PARTNER = re.compile(
    rf"(?<!ex-)\b(?:{'|'.join(sorted(PARTNER_WORDS, key=len, reverse=True))})\b|"
    r"\b(?:dating|together|engaged|married)\b"
)
_ANY_NEGATION = re.compile(r"\b(?:not|never|no|without)\b|n't\b")


def _partnered(pair: CandidatePair, text: str) -> str | None:
    """The partner a newer statement names when the older one says the person is single.

    "Noor's boyfriend is Emil" ends "Noor is single" though it says no word of change; a
    statement with a negation ("Noor has no boyfriend") names none.
    """
    if "partner" not in pair.slots or _SINGLE.search(pair.old.text.casefold()) is None:
        return None
    if _ANY_NEGATION.search(text):
        return None
    found = _A_PARTNER.search(text)
    return found.group() if found is not None else None


def update_cue(pair: CandidatePair) -> UpdateCue | None:
    """The cue by which the pair's newer statement replaces the older one, or None.

    The pair's shared slots count, and when the two share a name, every slot of the
    newer statement. In a slot of :data:`NEW_VALUE` an arriving cue needs the newer
    statement to name something the older one does not, or the older one to name
    nothing: "moved to Porto" replaces "lives in Lisbon", and "got a new job" replaces
    "works at the bakery", but "moved to Lisbon" does not replace "lives in Lisbon".
    A newer statement saying "still" takes no leaving cue, one adding a value ("also",
    "both") no arriving cue, and one whose subject is the person's relative or friend
    ("Jen's brother moved to Austin") none at all. A plan changes only plans: "Ana will
    move to Porto" does not end "Ana lives in Lisbon" before the move happens.
    """
    text = " ".join(pair.new.text.casefold().split())
    partnered = _partnered(pair, text)
    if partnered is not None:  # "Noor's boyfriend is Emil" after "Noor is single"
        return UpdateCue(slot="partner", kind="arriving", phrase=partnered)
    if _SOMEONE_ELSES.match(text):
        return None
    slots = [s for s in _cued_slots(pair) if s in SINGLE_VALUED or _shares_object(pair, s)]
    planned = pair.new.kind == "foresight" and pair.old.kind != "foresight"
    if planned:
        slots = [s for s in slots if s == "plans"]
    if not _STILL.search(text):
        aimed = None if planned else _leaves_shared_name(pair, text)
        if aimed is not None:
            return UpdateCue(slot=(slots or ["name"])[0], kind="leaving", phrase=aimed)
        for slot in slots:
            pattern = _LEAVING.get(slot)
            found = _affirmed(pattern, text) if pattern is not None else None
            if found is None:
                found = _affirmed(_ANY_LEAVING, text, negated_ok=True)
            if found is not None:
                return UpdateCue(slot=slot, kind="leaving", phrase=found)
    for slot in [] if _ADDITION.search(text) else slots:
        pattern = _ARRIVING.get(slot)
        found = _affirmed(pattern, text) if pattern is not None else None
        if found is None:
            continue
        if slot not in NEW_VALUE or _brings_new_value(pair):
            return UpdateCue(slot=slot, kind="arriving", phrase=found)
    return None


def _cued_slots(pair: CandidatePair) -> list[str]:
    """The slots a cue may update.

    The shared ones, and when the two share a name, all of the newer statement's
    ("traded in the Volvo" after "my old Volvo").
    """
    shared = sorted(s for s in pair.slots if not s.startswith("name:"))
    if len(shared) < len(pair.slots):
        shared += sorted(slots_of(pair.new.text, pair.new.kind) - set(shared))
    return shared


_OWN_SUBJECT = re.compile(rf"\b(?:{'|'.join(sorted(SUBJECT_I, key=len, reverse=True))})\b")
_OWN = "|".join(sorted(POSSESSIVES))
_RELATIVE_OPENS = re.compile(rf"^(?:\w+,? ){{0,2}}(?:{_OWN}) (?:\w+ )?(?:{_RELATIONS})s?\b")
"""A sentence of the speaker's about a relative or friend ("My daughter has a new email
address, she'll send it to you"), unless the speaker is in it too ("my boyfriend and I
broke up")."""


def _sentences(said: Sequence[str]) -> list[str]:
    """The casefolded sentences of the person's own turns."""
    return [
        " ".join(s.casefold().split())
        for text in said
        for s in SENTENCE_BREAK.split(text)
        if s.strip()
    ]


def _someone_elses_sentence(sentence: str) -> bool:
    """Whether a sentence of the speaker's tells of someone else's change."""
    return _RELATIVE_OPENS.match(sentence) is not None and not _OWN_SUBJECT.search(sentence)


def _told_of_someone_else(phrase: str, said: Sequence[str]) -> bool:
    """Whether every sentence of the person's turns with the cue phrase is about a relative.

    The model turned "My daughter has a new email address" into "Sue will send the new
    email address": the turn says whose change it is. A phrase the turn does not hold (the
    model's own wording) is not judged.
    """
    holding = [s for s in _sentences(said) if phrase in s]
    return bool(holding) and all(_someone_elses_sentence(s) for s in holding)


def turn_cue(pair: CandidatePair, said: Sequence[str]) -> UpdateCue | None:
    """A cue in the person's own words when the model's statement of them lost it.

    A 1.5B model writes "Ali changed: my parents are coming to us" or "Ben likes tacos
    more than sushi" from "Plans changed: ..." and "Tacos have replaced sushi as my
    favourite food". ``said`` holds the texts of the newer fact's source turns that its
    person spoke. Each sentence is read as the newer statement when it is about the
    older statement's thing (a shared name or content word), is not a hypothetical, and
    is not about the speaker's relative or friend; the first cue found counts, under the
    rules of :func:`update_cue`, with the sentence's own slots added to the pair's.
    """
    for sentence in _sentences(said):
        if hedged(sentence) or _someone_elses_sentence(sentence):
            continue
        spoken = pair.new.model_copy(update={"text": sentence})
        as_said = replace(pair, new=spoken, slots=pair.slots | slots_of(sentence, pair.new.kind))
        if not any(_shares_object(as_said, slot) for slot in as_said.slots):
            continue
        cue = update_cue(as_said)
        if cue is not None:
            return cue
    return None


def plainly_said(facts: Iterable[FactRecord], said: Mapping[str, Sequence[str]]) -> frozenset[str]:
    """The ids of the hedged facts whose person said them without a hedge.

    A 1.5B model adds hedges its speaker never used: from "We've decided to keep renting.
    The house plan is off." it wrote "Raj will keep renting the house if he can find a
    suitable house plan". Such a fact is paired all the same
    (:func:`.slots.candidate_pairs`, ``plain``), and only the person's own words can cue
    it (:func:`pair_cue`). ``said``: per fact id, the texts of the fact's source turns its
    own person spoke; one of them must hold no hedge at all.
    """
    return frozenset(
        f.id for f in facts if hedged(f.text) and any(not hedged(t) for t in said.get(f.id, ()))
    )


def pair_cue(pair: CandidatePair, said: Sequence[str] = ()) -> UpdateCue | None:
    """The pair's update cue: in the newer statement, else in the person's own words.

    A cue the statement holds is dropped when the person's turns hold the same phrase
    only about a relative or friend (:func:`update_cue`, :func:`turn_cue`). A hedged
    statement (paired because its person said it plainly, :func:`plainly_said`) holds no
    cue of its own: only the turns count.
    """
    if hedged(pair.new.text):
        return turn_cue(pair, said)
    cue = update_cue(pair)
    if cue is not None and _told_of_someone_else(cue.phrase, said):
        cue = None
    return cue if cue is not None else turn_cue(pair, said)


_ANY_CHANGE = re.compile(
    r"\b(?:now|no longer|no more|any ?more|new|newly|instead|again|anew|changed?|changing|"
    r"switch(?:ed|ing)?|mov(?:e|ed|ing)|quit|left|leaving|stopped|ended|former(?:ly)?|"
    r"used to|not \w+ any ?more|after all|actually|turns out)\b"
)
_EVERY_CUE = [*_LEAVING.values(), *_ARRIVING.values(), _ANY_LEAVING]
_PAST_EPISODE = re.compile(
    r"\b(?:spent (?:a|an|the|one|two|three|several|some|\w+ing) |back in |years ago|"
    r"as a (?:kid|child|teen|teenager|student)|when (?:he|she|they|i|we) (?:was|were)|"
    rf"once (?:lived|worked)|for (?:a|one) (?:{'|'.join(SEASONS_EN)}|semester|year|month|week)s?\b)"
)
"""A stay or spell that is over ("spent a summer in Madrid", "lived there as a kid"):
a past episode, not a new value of the person's present state."""


def may_change(pair: CandidatePair) -> bool:
    """Whether the pair is worth asking the model about.

    Its newer statement has a word of change, or a new value in a slot a person holds
    one value of ("lives in Denver" after "lives in Boston"). Other pairs ("Maya loves
    aerial yoga" after "Maya does yoga") are not worth a call: a 1.5B model almost never
    confirms an update among them.
    """
    text = " ".join(pair.new.text.casefold().split())
    if _ANY_CHANGE.search(text) is not None or any(p.search(text) for p in _EVERY_CUE):
        return True
    # a new value where a person holds one ("lives in Denver" after "lives in Boston"),
    # unless the newer statement tells of a stay that is over ("spent a summer in Madrid")
    return (
        bool(pair.slots & SINGLE_VALUED)
        and _PAST_EPISODE.search(text) is None
        and _brings_new_value(pair)
    )


__all__ = [
    "ARRIVING",
    "LEAVING",
    "SINGLE_VALUED",
    "UpdateCue",
    "may_change",
    "pair_cue",
    "plainly_said",
    "turn_cue",
    "update_cue",
]
