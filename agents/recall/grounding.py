"""Whether an answer's content is in the memories it cites (no LLM, no word list).

A small model answers from its own knowledge when the memories do not hold the answer
("blue" for a favourite colour nobody named), or names someone the cited turn does not
("Jonas" citing "Pixel knocked my laptop"). Both are caught by reading the answer
against the lines it cites, exactly as the model was shown them (speaker, date, text):

- the answer's own words are its words of three or more letters, and its numbers, that
  the question does not already hold (the question's words are its premise, not what
  the answer adds);
- a word is held by a line when the line has the same word, or, for words of four or
  more letters, one sharing its first five letters (or all of the shorter one's), so
  "adopted" finds "adopt" and "Lofoten" finds "Lofoten's" in any language; numbers match
  only whole;
- an answer that adds no word to the question restates it ("Katharina's sister" to
  "What is Katharina's sister called?") and is not grounded;
- the answer is grounded when the cited lines hold at least half of its own words; when
  those are only speakers' names, the lines must also hold half of the question's other
  words, since a speaker's name is in every line they said;
- a bare one-word answer of four letters or fewer that they do not hold ("Yes", "Ja",
  "Oui") affirms the question, so the cited lines must hold half of the question's
  other words instead.

Letters are compared casefolded and without accents, so "Lucía" finds "lucia". No stop
word list is needed: a function word the answer adds weighs like any other, which is
why half of the words, not all of them, must be held.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from zoneinfo import ZoneInfo

from ...core.state import Candidate
from ..common.names import fold
from .context import render_memory

_WORD = re.compile(r"\w+")
MIN_LETTERS = 3
"""Shorter words (articles, "a", "de", "il") are not weighed."""
PREFIX = 5
"""Letters two words of four or more letters must share to count as one word."""
SHORT_REPLY = 4
"""A one-word answer of at most this many letters may be a yes or a no."""


def words(text: str) -> list[str]:
    """The weighed words of ``text``, folded, in order, each once."""
    found = (w for w in _WORD.findall(fold(text)) if w.isdigit() or len(w) >= MIN_LETTERS)
    return list(dict.fromkeys(found))


def _same(word: str, other: str) -> bool:
    if word == other:
        return True
    if word.isdigit() or other.isdigit() or min(len(word), len(other)) < 4:
        return False
    k = min(PREFIX, len(word), len(other))
    return word[:k] == other[:k]


def _held(word: str, pool: Sequence[str]) -> bool:
    return any(_same(word, w) for w in pool)


def own_words(answer: str, question: str) -> list[str]:
    """The answer's words that the question does not hold."""
    asked = words(question)
    return [w for w in words(answer) if not _held(w, asked)]


def _on_topic(line_words: Sequence[str], topic: Sequence[str]) -> bool:
    """Whether a line holds at least half of the question's topic words."""
    return not topic or sum(_held(w, line_words) for w in topic) * 2 >= len(topic)


def grounded(
    answer: str, question: str, cited: Sequence[str], speakers: Iterable[str] = ()
) -> bool:
    """Whether the ``cited`` lines hold the answer's content (see the module docstring).

    ``speakers``: a speaker's name is in every line they said, so an answer whose held
    words are only speakers' names ("Jonas") is grounded only when the lines also hold
    half of the question's topic words (its words that are not a speaker's name).
    """
    own = own_words(answer, question)
    if not own:  # "Katharina's sister" to "What is Katharina's sister called?": no answer
        return False
    if not cited:
        return False
    names = {w for s in speakers for w in words(s)}
    topic = [w for w in words(question) if w not in names]
    pool = words(" ".join(cited))
    held = {w for w in own if _held(w, pool)}
    if len(held) * 2 >= len(own):
        return bool(held - names) or _on_topic(pool, topic)
    if len(own) == 1 and len(own[0]) <= SHORT_REPLY and not own[0].isdigit():
        return _on_topic(pool, topic)  # "Yes": the lines must say what was asked
    return False


@dataclass(frozen=True)
class Grounding:
    """What the check made of one answer."""

    grounded: bool
    cited_ids: list[str]
    """The citations to keep: the model's own, or the shown memories that hold the answer."""
    recited: bool = False
    """The model's citations did not hold the answer but other shown memories did."""


def ground(
    answer: str,
    question: str,
    cited_ids: Sequence[str],
    lines: dict[str, str],
    speakers: Iterable[str] = (),
) -> Grounding:
    """Check ``answer`` against the lines it cites; else look for the shown lines that hold it.

    ``lines``: every shown memory's id and its line as the model saw it. A small model
    often cites the label next to the one it read; when the cited lines do not hold the
    answer, the shown lines that hold one of its own words become its citations, if
    together they hold it. A line that holds only speakers' names of the answer must be
    on the question's topic itself: "Jonas" is not grounded by a line of Jonas's that
    shares one word with the question, and "Juniper" cited under the wrong label keeps
    its answer.
    """
    speakers = list(speakers)
    cited = [i for i in dict.fromkeys(cited_ids) if i in lines]
    if grounded(answer, question, [lines[i] for i in cited], speakers):
        return Grounding(True, cited)
    names = {w for s in speakers for w in words(s)}
    own = own_words(answer, question)
    topic = [w for w in words(question) if w not in names]
    holding = []
    for key, line in lines.items():
        pool = words(line)
        held = {w for w in own if _held(w, pool)}
        if held and (held - names or _on_topic(pool, topic)):
            holding.append(key)
    if holding and grounded(answer, question, [lines[i] for i in holding], speakers):
        return Grounding(True, holding, recited=True)
    return Grounding(False, cited)


def ground_shown(
    answer: str, question: str, cited_ids: Sequence[str], shown: Sequence[Candidate], tz: ZoneInfo
) -> Grounding:
    """:func:`ground` against the shown memories, each read as its context line.

    The lines are what the model saw (:func:`.context.render_memory`: speaker, date, text),
    and the shown memories' speakers are the names the check treats as names.
    """
    lines = {c.id: render_memory("m", c, tz) for c in shown}
    return ground(answer, question, cited_ids, lines, {c.speaker for c in shown if c.speaker})


__all__ = ["Grounding", "ground", "ground_shown", "grounded", "own_words", "words"]
