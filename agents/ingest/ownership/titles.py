"""Whose an episode's title and summary say each thing is, read from its turns (no LLM).

A 1.5B model titles an excerpt "Theo's bakery loan approval and Maya's lease signing"
when Maya only asked Theo when he signs the lease, and "Lena's support group and
Kofi's painting" when Kofi went to the group and Lena painted. The title is
what recall shows first of an episode, so a wrong owner there misleads every answer
that reads it.

Each "<Name>'s <words>" of a title, for a person of the excerpt, is checked as a fact's
owner is (:func:`~.grammar.grammar_owner`): against the turn of the excerpt that says
most of its words (at least :data:`TITLE_SUPPORT` of them), by that turn's grammar.
When the grammar names another person of the excerpt, the name is changed, and counted
by the caller. So is a place's name put in a person's stead ("Porto's bakery runs itself"
from Theo's "I'll visit Porto once the bakery runs itself"): a name the turns only ever
go to or come from (:func:`~.named.place_only`).

The summary has the faults of a note ("Theo approved my bakery loan yesterday"): each of
its sentences is told in the voice of the turn it copies (:func:`voiced_summary`, with
:mod:`.voice`'s repairs).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ....records.model import RawTurn
from ...common.formatting import SENTENCE_BREAK
from ...common.names import match_speakers
from ..evidence.questions import statements
from ..evidence.support import support_ratio
from .grammar import grammar_owner
from .named import place_only
from .owner_check import spoken_to
from .voice import FIRST_PERSON, in_third_person, told_subject

TITLE_SUPPORT = 0.5
"""Share of a title part's content words one turn must say for its grammar to decide."""
_GIVING = frozenset(
    "support encouragement help advice congratulations kindness praise words thanks feedback "
    "gift gifts kind".split()
)
"""First words of what one person gives another: the title names the giver, the turn the
one who got it ("I'm grateful for all the support I've got")."""
_PART = re.compile(r"\b(?P<name>[A-Z][\w-]*)['’]s\s+(?P<words>[^,:;()]+?)(?=\s+and\s+|[,:;()]|$)")


def _possessor(words: str, turn: RawTurn, addressed: str | None) -> str | None:
    """Whose the turn says the head word is: "my journey" the speaker's, "your art" the other's."""
    head = re.escape(words.split()[0])
    said = re.search(rf"(?i)\b(my|your)\s+(?:\w+\s+)?{head}", turn.text)
    if said is None:
        return None
    return turn.speaker if said.group(1).casefold() == "my" else addressed


def title_owner(words: str, turns: Sequence[RawTurn], people: Sequence[str]) -> str | None:
    """Whose ``words`` ("lease signing") are by the turns that say most of them, else None.

    Every turn that says most of them (its questions aside) votes: by "my" or "your" before
    the words' first word, else by its grammar. Votes that disagree decide nothing; so do
    words of giving ("Maya's support" is what Maya gave, told by the one who got it).
    """
    if words.split()[0].casefold() in _GIVING:
        return None
    said = [statements(t.text) for t in turns]
    ratios = [support_ratio(words, [text], people) for text in said]
    if not ratios or max(ratios) < TITLE_SUPPORT:
        return None
    found = set()
    for at, turn in enumerate(turns):
        if ratios[at] == max(ratios):
            addressed = spoken_to(turn, turns, people)
            whose = _possessor(words, turn, addressed)
            found.add(whose or grammar_owner(words, said[at], turn.speaker, addressed, people))
    owners = {f for f in found if f and f != "third" and f in people}
    return owners.pop() if len(owners) == 1 else None


def owned_title(title: str, turns: Sequence[RawTurn], people: Sequence[str]) -> tuple[str, int]:
    """``title`` with each person's possessive given to whom its turn says; how many changed."""
    changed = 0

    def check(match: re.Match[str]) -> str:
        nonlocal changed
        named = match_speakers(match.group("name"), people)
        if not named and not place_only(match.group("name"), [t.text for t in turns]):
            return match.group()  # someone the speakers talk about: theirs as written
        owner = title_owner(match.group("words"), turns, people)
        if owner is None or (named and owner == named[0]):
            return match.group()
        changed += 1
        return f"{owner}'s {match.group('words')}"

    return _PART.sub(check, title), changed


def voiced_summary(
    summary: str, turns: Sequence[RawTurn], people: Sequence[str]
) -> tuple[str, int]:
    """``summary`` with each sentence in the voice of the turn it copies; how many changed.

    A sentence that puts a name in front of a turn's words gets the turn's subject back
    (:func:`~.voice.told_subject`); first-person words left in a sentence become the
    speaker's of the turn that says most of it (half its words at least), else stay.
    """
    changed = 0
    out = []
    for sentence in SENTENCE_BREAK.split(summary):
        new = sentence
        for turn in turns:
            told = told_subject(sentence, turn.speaker, spoken_to(turn, turns, people), turn.text)
            if told is not None:
                new = in_third_person(told, turn.speaker)[0]
                break
        else:
            if FIRST_PERSON.search(sentence):
                ratios = [support_ratio(sentence, [t.text], people) for t in turns]
                if ratios and max(ratios) >= TITLE_SUPPORT:
                    new = in_third_person(sentence, turns[ratios.index(max(ratios))].speaker)[0]
        changed += new != sentence
        out.append(new)
    return " ".join(out), changed


__all__ = ["TITLE_SUPPORT", "owned_title", "title_owner", "voiced_summary"]
