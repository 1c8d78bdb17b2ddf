"""Whether a note's owner is someone the excerpt holds: a speaker or a person it names.

The construction reply names each note's owner. An owner must be one of the people
present, or the note is refused (counted ``owner_absent``): a speaker of the excerpt or
of the namespace (matched leniently, so "Lucia" is filed under the label "Lucía"), a
name the excerpt writes somewhere other than at the start of a sentence (a word that
opens a sentence is as likely a verb or a noun: "Work at the bank is exhausting",
"Loves Berlin"; there it counts only when the model itself named it), or a present
person's relation that the excerpt mentions ("Maya's brother"). Words are compared
casefolded and without accents, so a chat written in lowercase names "lisa" as well as
"Lisa". No word list is needed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from ...common.names import fold, match_speakers

_WORD = re.compile(r"[^\W\d_][\w'’-]*")
_SENTENCE = re.compile(r"[^.!?\n]+")
_POSSESSIVE = re.compile(r"^(?P<who>.+?)['’]s?\s+(?P<what>\S.*)$")


def _bare(word: str) -> str:
    return re.sub(r"['’]s?$", "", word)


def named_words(texts: Iterable[str]) -> set[str]:
    """Folded words the texts write somewhere other than first in a sentence."""
    found: set[str] = set()
    for text in texts:
        for sentence in _SENTENCE.findall(text):
            words = [_bare(w) for w in _WORD.findall(sentence)]
            found.update(fold(w) for w in words[1:])
    return found


def all_words(texts: Iterable[str]) -> set[str]:
    """Folded words of the texts, anywhere."""
    return {fold(_bare(w)) for text in texts for w in _WORD.findall(text)}


def present_owner(
    owner: str, people: Sequence[str], excerpt: Sequence[str], vouched: str = ""
) -> str | None:
    """The owner as the namespace writes it, or None when no one present is meant.

    ``people``: the speakers (the excerpt's first); ``excerpt``: what its turns say;
    ``vouched``: the owner the model itself named. A name the excerpt writes only at the
    start of a sentence ("Alfred got the job!") is present when the model named it too:
    a deterministic repair that took a sentence's first word for its subject is not.
    """
    owner = owner.strip()
    if not owner:
        return None
    relation = _POSSESSIVE.match(owner)
    if relation is not None:  # "Maya's brother": Maya present, a brother mentioned
        who = present_owner(relation.group("who"), people, excerpt, vouched)
        said = all_words(excerpt)
        what = [fold(w) for w in _WORD.findall(relation.group("what"))]
        if who is not None and what and all(w in said for w in what):
            return f"{who}'s {relation.group('what')}"
        return None
    words = [_bare(w) for w in _WORD.findall(owner)]
    if not words:
        return None
    for label in people:  # a speaker: their label, however the reply spelled them
        label_words = {fold(w) for w in _WORD.findall(label)}
        if {fold(w) for w in words} <= label_words or (
            len(words) == 1 and match_speakers(owner, [label])
        ):
            return label
    named = named_words(excerpt)
    if all(fold(w) in named for w in words):
        return owner
    said = all_words(excerpt)
    if fold(owner) == fold(vouched.strip()) and all(
        fold(w) in said and w[:1].isupper() for w in words
    ):
        return owner
    return None


__all__ = ["all_words", "named_words", "present_owner"]
