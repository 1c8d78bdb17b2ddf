"""Tokenisation for the lexical (BM25) channel: case, punctuation, stop words, stemming."""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field

import snowballstemmer

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*", re.UNICODE)
_POSSESSIVE = re.compile(r"['’]s$")
_APOSTROPHE = re.compile(r"['’]")

ENGLISH_STOP_WORDS: frozenset[str] = frozenset(
    """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself yourselves
    s t d ll m re ve y im ive id youre thats dont doesnt didnt isnt wasnt cant wont
    oh yeah hey wow really also got get""".split()
)
"""Function words that carry no topic; dropped from documents and queries alike."""


@dataclass
class Analyzer:
    """Turns text into BM25 terms: NFKC, lowercase, words, stop words, Snowball stems.

    Possessives are folded (``Maya's`` -> ``maya``), inner apostrophes removed
    (``don't`` -> ``dont``), and every other punctuation mark splits words.
    """

    stop_words: frozenset[str] = ENGLISH_STOP_WORDS
    stem: bool = True
    _cache: dict[str, str] = field(default_factory=dict, init=False, repr=False)
    _stemmer: object = field(default=None, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def __post_init__(self) -> None:
        self._stemmer = snowballstemmer.stemmer("english")

    def _stem(self, word: str) -> str:
        cached = self._cache.get(word)
        if cached is None:
            with self._lock:  # the Snowball stemmer object is not thread-safe
                cached = self._stemmer.stemWord(word)  # type: ignore[attr-defined]
            if len(self._cache) < 200_000:
                self._cache[word] = cached
        return cached

    def words(self, text: str) -> list[str]:
        """Return lowercase words without stop words (no stemming)."""
        text = unicodedata.normalize("NFKC", text).lower()
        out = []
        for match in _WORD.finditer(text):
            word = _APOSTROPHE.sub("", _POSSESSIVE.sub("", match.group()))
            if word and word not in self.stop_words:
                out.append(word)
        return out

    def __call__(self, text: str) -> list[str]:
        """Return the BM25 terms of ``text``."""
        words = self.words(text)
        return [self._stem(w) for w in words] if self.stem else words

    def many(self, texts: Iterable[str]) -> list[list[str]]:
        """Analyse several texts."""
        return [self(t) for t in texts]
