"""Who told whom: the teller of a summary's reported speech, read from its turns (no LLM).

A 1.5B model writes an episode's summary as reported speech and often gets the roles
the wrong way round: "Priya told Jonas that she finished the marathon" when Jonas said
"I finished the marathon" to Priya. In a summary the teller is who the news is about,
so a reversed sentence files the news under the wrong person, as a wrong owner does a
note.

A sentence "<A> told|mentioned|shared|said|... <words>" in an excerpt of two speakers is
checked as a title's possessive is (:func:`~.titles.title_owner`): the turns that say
most of ``<words>`` (the reported part, without the listener's name, "that" and its
pronoun) decide whose they are by their grammar. When that is the other speaker, the
two names trade places, and the pronoun that stood for the old teller goes with them:
"that she" becomes "that Jonas", and "shared her photos" becomes "shared photos". Anything
else (no such verb, a third person, turns that disagree or say too little) leaves the
sentence as written.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ....records.model import RawTurn
from ...common.formatting import SENTENCE_BREAK
from ...common.names import match_speakers
from ..evidence.support import content_terms, supported
from .owner_check import traded_names
from .titles import TITLE_SUPPORT, title_owner

_REPORT = re.compile(
    r"^(?P<teller>[A-Z][\w-]*)(?P<adverb>\s+(?:also|then|later|further))?\s+"
    r"(?P<verb>told|tells|mentioned|mentions|shared|shares|said|says|explained|explains|"
    r"revealed|reveals|announced|announces|admitted|admits|added|adds|described|describes|"
    r"updated|updates|informed|informs)\b(?P<rest>.*)$",
    re.DOTALL,
)
"""A sentence that reports what its first-named person said."""
_LEAD_IN = re.compile(
    r"^\s*(?:(?:to|with)\s+)?(?:[A-Z][\w-]*\s+)?(?:that\s+|about\s+|how\s+)?"
    r"(?:(?:he|she|they)\s+)?"
)
"""What stands between the verb and the reported words: "Jonas that she", "with Jonas"."""
_TOLD_PRONOUN = re.compile(r"^(?P<listener>\s+(?:to\s+)?[A-Z][\w-]*)?\s+that\s+(?:he|she)\b")
"""The old teller's pronoun in "told Jonas that she ...": it follows the teller's role."""
_OWN_PRONOUN = re.compile(r"^\s+(?:his|her)\s+")
"""A possessive right after the verb ("shared her photos"): the old teller's, dropped."""
MIN_TERMS = 2
"""Content words the reported part must have for its turns to decide whose it is."""
_DATES = re.compile(r"\s*\([^)]*\)")
"""Dates the construction put in brackets ("last week (29 May - 4 June 2023)"): the turn
says them otherwise, so they do not count as its words."""
_IMAGE = re.compile(r"\b(?:photo|photos|picture|pictures|pic|pics|image|images|snap)\b", re.I)
"""Words of a report about a shared image, whose words are in its caption."""


def _shown_by(words: str, turns: Sequence[RawTurn], people: Sequence[str]) -> str | None:
    """The one speaker whose shared images' captions say ``words`` (a photo's sender)."""
    senders = {
        t.speaker
        for t in turns
        if t.media_caption and supported(words, [t.media_caption], people, TITLE_SUPPORT)
    }
    return senders.pop() if len(senders) == 1 else None


def reported_teller(sentence: str, turns: Sequence[RawTurn], people: Sequence[str]) -> str | None:
    """The speaker whose news ``sentence`` reports, when it is not the one it names first.

    None when the sentence is no reported speech of a speaker, the excerpt has other than
    two speakers, or the turns do not say whose the reported words are.
    """
    found = _REPORT.match(sentence.strip())
    if found is None:
        return None
    named = match_speakers(found.group("teller"), list(people))
    if not named:
        return None
    spoken = {t.speaker for t in turns}
    others = [p for p in people if p in spoken and p != named[0]]
    if named[0] not in spoken or len(others) != 1:
        return None
    words = _LEAD_IN.sub("", _DATES.sub("", found.group("rest")), count=1).strip(" .!")
    if len(content_terms(words, people)) < MIN_TERMS:
        return None
    owner = title_owner(words, turns, people)
    if owner is None and _IMAGE.search(words):
        owner = _shown_by(words, turns, people)
    return owner if owner == others[0] else None


def _written(sentence: str, person: str) -> str:
    """How ``sentence`` writes ``person``'s name ("Max" for Maxine), else their first name."""
    for found in re.finditer(r"[A-Z][\w-]*", sentence):
        if match_speakers(found.group(), [person]):
            return found.group()
    return person.split()[0]


def told_by(sentence: str, teller: str, people: Sequence[str]) -> str:
    """``sentence`` retold with ``teller`` as its teller (the two speakers trade places).

    The names trade as the sentence writes them ("Max", "Theo"); a sentence whose names
    do not trade stays as it was.
    """
    found = _REPORT.match(sentence.strip())
    if found is None or not match_speakers(found.group("teller"), list(people)):
        return sentence
    old, new = found.group("teller"), _written(sentence, teller)
    text = traded_names(sentence.strip(), old, new)
    traded = _REPORT.match(text)
    if traded is None or traded.group("teller") != new:
        return sentence
    rest = _OWN_PRONOUN.sub(" ", traded.group("rest"), count=1)
    rest = _TOLD_PRONOUN.sub(lambda m: f"{m.group('listener') or ''} that {new}", rest, count=1)
    return text[: traded.start("rest")] + rest


def owned_summary(summary: str, turns: Sequence[RawTurn], people: Sequence[str]) -> tuple[str, int]:
    """``summary`` with each reversed report told by whom its turns say; how many changed."""
    changed = 0
    out = []
    for sentence in SENTENCE_BREAK.split(summary):
        teller = reported_teller(sentence, turns, people)
        retold = sentence if teller is None else told_by(sentence, teller, people)
        changed += retold != sentence
        out.append(retold)
    return " ".join(out), changed


__all__ = ["owned_summary", "reported_teller", "told_by"]
