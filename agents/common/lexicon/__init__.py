"""The words lamina still needs per language, defined once: one module per language.

Each language module gives a :class:`Lexicon`: its weekday and month names, its small
numbers, its time units and the phrases that say a relative time ("hace tres días",
"letzten Freitag", "la semaine dernière"), each with the English phrase it means, and
its words for relatives, partners and pets. The date resolver (:mod:`..timeparse`) reads
every language's phrases in every turn, so a turn's language is never a setting, and a
mixed-language chat resolves both. The rules that need a relation or a pet word read
every language's too (:data:`RELATION_WORDS`, :data:`PET_WORDS`), for the same reason.
"""

from __future__ import annotations

from collections.abc import Mapping

from .base import (
    HOUSEMATES_EN,
    MONTHS_EN,
    PARTNERS_EN,
    SEASONS_EN,
    UNITS_EN,
    WEEKDAYS_EN,
    WORKMATES_EN,
    Lexicon,
    Phrase,
)
from .de import GERMAN
from .en import DROPPED_I_OPENERS, ENGLISH, INTERJECTIONS, NOT_NAMES, SUBJECT_I, SUBJECT_YOU
from .es import SPANISH
from .fr import FRENCH
from .pt import PORTUGUESE

LEXICONS: tuple[Lexicon, ...] = (ENGLISH, SPANISH, GERMAN, FRENCH, PORTUGUESE)
"""Every language lamina has words for, English first."""


def _every(field: str) -> Mapping[str, str]:
    """One word map of every language (English first where two spell a word alike)."""
    out: dict[str, str] = {}
    for lexicon in LEXICONS:
        for word, means in getattr(lexicon, field).items():
            out.setdefault(word.casefold(), means)
    return out


RELATION_WORDS: Mapping[str, str] = _every("relations")
"""Every language's word for a relative, friend, partner or colleague -> its English word."""
PET_WORDS: Mapping[str, str] = _every("pets")
"""Every language's word for a kept animal -> its English word ("Hund" -> "dog")."""
PARTNER_WORDS = frozenset(w for w, means in RELATION_WORDS.items() if means in PARTNERS_EN)
"""Every language's words for a partner ("novia", "Ehemann", "girlfriend")."""
HOUSEMATE_WORDS = frozenset(w for w, means in RELATION_WORDS.items() if means in HOUSEMATES_EN)
"""Every language's words for a roommate ("Mitbewohnerin", "coloc")."""
WORKMATE_WORDS = frozenset(w for w, means in RELATION_WORDS.items() if means in WORKMATES_EN)
"""Every language's words for a boss or colleague ("jefa", "Kollege")."""
POSSESSIVES = frozenset(p for lexicon in LEXICONS for p in lexicon.possessives)
"""Every language's words for the speaker's own ("my", "mi", "meine", "ma", "minha")."""
HOMOGRAPHS = frozenset(w for lexicon in LEXICONS for w in lexicon.homographs)
"""Words of other languages that English writes with another meaning ("chat", "patron")."""
CALENDAR_NAMES = frozenset(w.capitalize() for w in (*MONTHS_EN, *WEEKDAYS_EN))
"""The English month and weekday names, capitalised: words that are no one's name."""

__all__ = [
    "CALENDAR_NAMES",
    "DROPPED_I_OPENERS",
    "ENGLISH",
    "HOMOGRAPHS",
    "HOUSEMATE_WORDS",
    "INTERJECTIONS",
    "LEXICONS",
    "MONTHS_EN",
    "NOT_NAMES",
    "PARTNERS_EN",
    "PARTNER_WORDS",
    "PET_WORDS",
    "POSSESSIVES",
    "RELATION_WORDS",
    "SEASONS_EN",
    "SUBJECT_I",
    "SUBJECT_YOU",
    "UNITS_EN",
    "WEEKDAYS_EN",
    "WORKMATE_WORDS",
    "Lexicon",
    "Phrase",
]
