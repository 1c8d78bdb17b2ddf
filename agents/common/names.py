"""People in a question: lenient matching of its words against the speaker labels.

A question word names a speaker when it is the same name in another case, with accents
or a possessive ("Jose's" for "José"), a nickname or the name it is short for ("Kate"
for "Katherine", from the ``nicknames`` package), a short form ("Max" for "Maxine") or
one typo in a long name. No LLM is called.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from difflib import SequenceMatcher
from functools import cache

from nicknames import NickNamer

from ...stores.lexical import ENGLISH_STOP_WORDS

_WORD = re.compile(r"[^\W\d_][\w'’.-]*", re.UNICODE)
_POSSESSIVE = re.compile(r"(?:'s|’s|'|’)$")


def _bare(word: str) -> str:
    """A matched word without its possessive or edge punctuation: ``Max's`` -> ``Max``."""
    return _POSSESSIVE.sub("", word).strip(".-")


def _words(text: str) -> list[str]:
    return [_bare(w) for w in _WORD.findall(text)]


def _label_tokens(speakers: Iterable[str]) -> list[tuple[str, list[str]]]:
    """Each distinct non-blank label with the name tokens a question word may match."""
    labels = dict.fromkeys(s for s in speakers if s and s.strip())
    return [(label, [t for t in _words(label) if t] or [label.strip()]) for label in labels]


def fold(name: str) -> str:
    """Casefolded, without accents: ``José`` -> ``jose``, ``Zoë`` -> ``zoe``."""
    decomposed = unicodedata.normalize("NFKD", name.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


@cache
def _name_variants() -> dict[str, frozenset[str]]:
    """Each English given name with its nicknames and what they are short for.

    From the hand-curated ``nicknames`` package (``Katherine`` <-> ``Kate``, ``Kathy``,
    ``Kit``; ``Robert`` <-> ``Bob``). Only direct pairs: two nicknames of one name are
    not linked (``Kate`` may be Katelyn, ``Kathy`` is not).
    """
    related: dict[str, set[str]] = {}
    for canonical, nicks in NickNamer.default_lookup().items():
        for nick in nicks:
            related.setdefault(canonical, set()).add(nick)
            related.setdefault(nick, set()).add(canonical)
    return {name: frozenset(names) for name, names in related.items()}


def _name_matches(word: str, label_token: str) -> bool:
    """Lenient match of one question word against one token of a speaker label.

    The same name with other case or accents always matches. A capitalised word that is
    no stop word ("Will", "And" and "Same" start sentences) also matches a nickname of
    the label or the name it is short for (``Kate`` -> ``Katherine``), a short form of at
    least three letters (``Max`` -> ``Maxine``), or one typo in a long name
    (``Priyanca`` -> ``Priyanka``).
    """
    w, t = fold(word), fold(label_token)
    if not w or not t:
        return False
    if w == t:
        return True
    if not word[:1].isupper() or w in ENGLISH_STOP_WORDS:
        return False
    if t in _name_variants().get(w, ()):
        return True
    if len(w) >= 3 and (t.startswith(w) or (len(t) >= 3 and w.startswith(t))):
        return True
    return len(w) >= 5 and len(t) >= 5 and SequenceMatcher(None, w, t).ratio() >= 0.85


def match_speakers(question: str, speakers: Iterable[str]) -> list[str]:
    """The speaker labels the question names, in the order they appear in it."""
    words = _words(question)
    found: list[tuple[int, str]] = []
    for label, tokens in _label_tokens(speakers):
        positions = [
            n for n, word in enumerate(words) if any(_name_matches(word, t) for t in tokens)
        ]
        if positions:
            found.append((positions[0], label))
    return [label for _, label in sorted(found)]


def with_speaker_names(query: str, speakers: Iterable[str]) -> str:
    """``query`` with the label of each speaker it names only in another form.

    ``"Where did Kate go hiking?"`` with the speaker ``Katherine`` becomes
    ``"Where did Kate go hiking? (Katherine)"``, so both search channels see the name
    as the transcript writes it. A label whose word the query already holds (in any
    case) adds nothing, and a query that names no speaker is returned as it is.
    """
    written = {w.casefold() for w in _words(query)}
    missing = [
        label
        for label in match_speakers(query, speakers)
        if not written & {t.casefold() for t in _words(label)}
    ]
    return f"{query} ({', '.join(missing)})" if missing else query


def without_speakers(query: str, speakers: Iterable[str]) -> str:
    """``query`` without the words that name one of ``speakers`` (possessives too).

    A search already restricted to a person's turns gains nothing from their name, and
    the name alone ranks their shortest turns first (a bare "Thanks!" is mostly the
    speaker label it is indexed with). ``"Why did Maya shut down her bank account?"``
    with ``Maya`` becomes ``"Why did shut down her bank account?"``. A query that would
    keep no other word is returned as it is.
    """
    tokens = [t for _, label_tokens in _label_tokens(speakers) for t in label_tokens]

    def drop(match: re.Match[str]) -> str:
        bare = _bare(match.group())
        return "" if any(_name_matches(bare, t) for t in tokens) else match.group()

    kept = _WORD.sub(drop, query)
    if not _WORD.search(kept):
        return query
    return re.sub(r"\s+([,.?!;:])", r"\1", re.sub(r"\s{2,}", " ", kept)).strip()


__all__ = ["fold", "match_speakers", "with_speaker_names", "without_speakers"]
