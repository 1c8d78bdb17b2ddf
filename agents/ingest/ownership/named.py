"""Whom a turn names: a person by the turn's own spelling, or a pet and its keeper (no LLM).

A small model takes words for names ("Renting a house...", "Great idea!") and files a
pet's news under the pet ("Clover is settling in"). These checks read the turn as it was
written: where a word stands capitalized, and what the words before a name make it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ...common.attribution import mentions
from ...common.lexicon import DROPPED_I_OPENERS, ENGLISH, INTERJECTIONS, PET_WORDS

NOT_A_NAME = re.compile(
    r"\w{3,}ing|\w{3,}ed|"
    + "|".join(sorted({*DROPPED_I_OPENERS, *INTERJECTIONS, *ENGLISH.numbers} - {"a", "an"}))
)
"""Words that open a sentence without being a name: a verb's -ing or -ed form, a number
word, a word a clause opens with when it drops its "I" ("Renting a house...", "Been
busy...", "Thirty years..."), or a chat turn's interjection ("Great idea!", "Wow, ...")."""
_NAMED = frozenset({"named", "called"})
_PLACE_WORDS = (
    "Street St Avenue Ave Road Rd Boulevard Drive Square Bridge Station Cafe Café Bakery "
    "Bar Restaurant Hotel Inn Shop Store Market Mall Gallery Museum Theater Theatre Studio "
    "Club Center Centre School College University Academy Hospital Clinic Bank Company Co "
    "Corp Inc Ltd LLC Group Lake River Beach Island Mountains".split()
)
"""Words that end a place's or a business's name, not a person's (so no "Park", "Hall" or
"Lane": "Grace Park" is a person)."""
_NOT_A_PERSON = re.compile(
    rf"^(?:\s*&\s*[A-Z]|\s+(?:[A-Z][\w'’-]*\s+)?(?:{'|'.join(_PLACE_WORDS)})\b)"
)
"""What follows a capitalized word that makes it part of a business's or a place's name:
"Rise & Crumb opens", "the Alder Street shop", "Maple Grove Park"."""
_NAMING = re.compile(r"\b(?:named|called|call|name)\s+(?:him|her|it|them)\s+$", re.IGNORECASE)
_TO_A_PLACE = re.compile(
    r"\b(?:(?:move|moving|moved|go|going|went|gone|travel\w*|trip|flight|fly|flying|flew|"
    r"drive|driving|drove|relocat\w*|head\w*|back|return\w*|came|come|coming)\s+"
    r"(?:back\s+)?(?:to|from)|in|visit|visiting|visited|near|around|across|leave|leaving|left)"
    r"\s+$",
    re.IGNORECASE,
)
"""The words before a name that make it a place: "moving to Lisbon", "visit Porto", "in
Porto" (not a bare "to" or "from": "talked to Jen", "a gift from Jen")."""
_ONLY_A_PLACE = re.compile(
    r"\b(?:(?:move|moving|moved|travel\w*|trip|flight|fly|flying|flew|relocat\w*)\s+"
    r"(?:back\s+)?(?:to|from)|in|near)\s+$",
    re.IGNORECASE,
)
"""Of those, the words that only a place follows: "moving to Porto", "in Porto" (one can
visit, leave or come back to a person too)."""


def _hits(name: str, text: str) -> Iterator[re.Match[str]]:
    """Where the first word of ``name`` stands as a whole word in ``text``."""
    first = re.escape(name.split()[0])
    return re.finditer(rf"(?<![\w'’-]){first}(?![\w-])", text)


def _opens_sentence(text_before: str) -> bool:
    """Whether a word after ``text_before`` stands first in its sentence (or the text)."""
    before = text_before.rstrip()
    return not before or before[-1] in '.!?:;"“'


def _pet_of(text_before: str) -> str | None:
    """Whose pet the words before a name make it, as a possessive, else None.

    "my rabbit Clover", "we named him Rocket", "my kitten is called Pepper": ``"my"``
    (also with no possessive); "our dog Rex": ``"our"``; "your dog Rex": ``"your"``.
    """
    before = text_before.casefold().split()[-4:]
    words = [w.strip(",") for w in before]
    pets = [w in PET_WORDS or w.removesuffix("s") in PET_WORDS for w in words]
    named = bool(words) and words[-1] in _NAMED and any(pets)
    if _NAMING.search(" ".join(before) + " ") or named:
        return "my"
    if words and pets[-1]:
        return next((w for w in reversed(words) if w in ("my", "our", "your")), "my")
    return None


def place_only(name: str, texts: list[str]) -> bool:
    """Whether the mentions of ``name`` in ``texts`` read as a place ("moving to Porto").

    No mention may carry a possessive or stand inside a sentence other than right after a
    word of going or being somewhere (in, to, from, at, visit, leave...), and at least one
    must follow a word only a place follows ("in", "moving to"). A sentence's first word
    counts neither way: "Porto is lovely" could be said of a person as well.
    """
    placed = False
    for text in texts:
        for hit in _hits(name, text):
            if text[hit.end() : hit.end() + 1] in ("'", "’"):
                return False
            before = text[: hit.start()]
            if _opens_sentence(before):
                continue
            if not _TO_A_PLACE.search(before):
                return False
            placed = placed or _ONLY_A_PLACE.search(before) is not None
    return placed


def person_named(name: str, turn_text: str, *, within: bool = False) -> bool:
    """Whether ``name`` stands for a person the turn names, by the turn's own spelling.

    It must appear capitalized (at a sentence's start, not as a verb form or a number
    word: "Renting a house", "Thirty years" are not names), not as a pet's name ("my
    rabbit Clover", "my kitten is called Pepper": a pet's news is its owner's, see
    :func:`pet_keeper`), and not only as a vocative. ``within``: only inside a sentence,
    where a capital is a name's own ("Plans changed: ..." opens a sentence; it is not
    enough to outvote the turn's grammar). A word that opens a business's or a place's name
    ("Rise & Crumb", "Alder Street") is no person.
    """
    if not mentions(turn_text, name):
        return False
    for hit in _hits(name, turn_text):
        if _NOT_A_PERSON.match(turn_text[hit.end() :]):  # "Rise & Crumb", "Alder Street"
            continue
        before = turn_text[: hit.start()].rstrip()
        if _opens_sentence(before):
            # a sentence's first word is capitalized anyway: a name unless it reads as a
            # word ("Renting a house...", "Thirty years...")
            if not within and NOT_A_NAME.fullmatch(hit.group().casefold()) is None:
                return True
            continue
        return _pet_of(before) is None
    return False


def pet_keeper(name: str, turn_text: str, speaker: str, addressed: str | None) -> str | None:
    """Whose pet ``name`` is, when the turn names it as a pet, else None.

    "my rabbit Clover", "we ... named him Rocket": the speaker's; "your dog Rex": the one
    addressed. A pet's news is filed under its keeper.
    """
    for hit in _hits(name, turn_text):
        whose = _pet_of(turn_text[: hit.start()])
        if whose is not None:
            return addressed if whose == "your" else speaker
    return None


__all__ = ["person_named", "pet_keeper"]
