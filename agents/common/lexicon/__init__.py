"""The words lamina still needs per language, defined once: one module per language.

Each language module gives a :class:`Lexicon`: its weekday and month names, its small
numbers, its time units and the phrases that say a relative time ("hace tres días",
"letzten Freitag", "la semaine dernière"), each with the English phrase it means. The
date resolver (:mod:`..timeparse`) reads every language's phrases in every turn, so a
turn's language is never a setting, and a mixed-language chat resolves both.
"""

from __future__ import annotations

from .base import Lexicon, Phrase
from .de import GERMAN
from .en import ENGLISH
from .es import SPANISH
from .fr import FRENCH
from .pt import PORTUGUESE

LEXICONS: tuple[Lexicon, ...] = (ENGLISH, SPANISH, GERMAN, FRENCH, PORTUGUESE)
"""Every language lamina has words for, English first."""

__all__ = ["ENGLISH", "LEXICONS", "Lexicon", "Phrase"]
