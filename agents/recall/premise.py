"""Whether the shown turns tie the named person to what the question asks (no LLM).

A false-premise question names the wrong person: "Why did Maya shut down her bank
account?" when Theo said "Hey Maya, I had to shut down my bank account". A small model
answers it from Theo's words, and the citation and grounding checks of
:mod:`.attribution` rarely catch it in a full context: among 30 turns, one of Maya's
always shares a word with the draft. This check reads the conversation's grammar
instead. It fires only when both of these hold:

- **the topic is someone else's**: the turns that best match the question's content
  words (the person's name, question words and time expressions left out; at least
  two words in common, weighted by how rare each is among the shown turns) are about
  someone else;
- **so is the answer**: the turns the draft came from are too. Those are the turns that
  share a word with the draft and the most words with the draft and the question's topic
  together, and the turns sharing the most words with the draft that also share a topic
  word. The person's echo of the answer on another topic ("Great that you're
  prioritizing self-care!") is neither, so it does not outweigh the turn that said it
  about the thing asked ("The race made me realize self-care is important").

A sentence is about its speaker when it speaks in the first person ("I had to shut
down my bank account"). Said to the named person ("you", or their name as a vocative
with no "I"), it is about them: "What are your pets' names?" asked by the other speaker
is about the one asked, and in a chat of two so is that speaker's question with no "I"
("What are their names?"). Naming the person other than by addressing them makes it
theirs as well. The named person's own sentence about or to someone else ("Did you
make it?", "That race sounds great, Theo!"), or their question without an "I" ("How did
they handle the accident?"), is not theirs. A shared photo's caption counts as its
sender's words.

Calibrated without an LLM, with the gold answer as the draft, it fires on very few
answerable questions; the topic test alone fired far too often to refuse on. A firing
makes the draft insufficient: the graph retries with rewritten
queries, then refuses unless a turn of the new round ties the person to the topic
(:func:`premise_found`): a new draft alone does not lift the doubt.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from ...core.state import Candidate
from ...stores.lexical import Analyzer
from ..common.attribution import mentions
from ..common.lexicon import MONTHS_EN, UNITS_EN, WEEKDAYS_EN
from ..common.names import match_speakers
from ..common.query_analysis import QueryAnalysis

_ANALYZER = Analyzer()
_SENTENCE = re.compile(r"[^.!?]+[.!?]*")
_FIRST_PERSON = re.compile(r"\b(?:i|me|my|mine|myself|we|us|our|ours|ourselves)\b", re.I)
_SECOND_PERSON = re.compile(r"\b(?:you|your|yours|yourself|yourselves|u|ur)\b", re.I)
_FRAMING = frozenset(
    _ANALYZER(
        "what which who whom whose how why when where kind type sort did does do feel "
        "think say said mention mentioned"
    )
)
"""Words that frame a question rather than name its topic."""
_CALENDAR = frozenset(
    _ANALYZER(
        " ".join([*MONTHS_EN, *WEEKDAYS_EN, *UNITS_EN])
        + " today yesterday tomorrow ago last next recently"
    )
)
"""Time words: a question's time is a filter, and resolved dates fill every turn."""

TOPIC_RATIO = 0.8
"""Turns scoring at least this share of the best topic score count as best matches."""
TOPIC_MIN_TERMS = 2
"""A topic match needs this many of the question's content words in one turn."""


def _content(text: str, person: str) -> set[str]:
    own = set(_ANALYZER(person))
    return {
        t
        for t in _ANALYZER(text)
        if t not in own and t not in _FRAMING and t not in _CALENDAR and not t.isdigit()
    }


def _about(turn: Candidate, terms: set[str], person: str, others: Sequence[str]) -> bool:
    """Whether the turn's sentences that best match ``terms`` are about ``person``.

    ``others``: the other speakers; the person's own sentence that names or addresses
    one of them without an "I" is about them ("That race sounds great, Theo!"), and so
    is the person's own question without an "I" ("How did they handle the accident?").
    When the other speaker is the only one, their question without an "I" is put to the
    person and so about them ("What are their names?", "Got any fave styles?").
    """
    sentences = _SENTENCE.findall(_text(turn)) or [_text(turn)]
    overlap = [len(terms.intersection(_ANALYZER(s))) for s in sentences]
    best = max(overlap)
    for sentence, n in zip(sentences, overlap, strict=True):
        if n != best:
            continue
        if mentions(sentence, person):
            return True
        first = bool(_FIRST_PERSON.search(sentence))
        second = bool(_SECOND_PERSON.search(sentence))
        if turn.speaker == person:
            asked = sentence.rstrip().endswith("?")  # "How did they handle it?"
            if first or not (second or asked or match_speakers(sentence, others)):
                return True
        elif second or (not first and match_speakers(sentence, [person])):
            return True
        elif not first and list(others) == [turn.speaker] and sentence.rstrip().endswith("?"):
            return True  # "What are their names?": in a chat of two, asked of the person
    return False


def _text(turn: Candidate) -> str:
    """The turn's words, with the caption of the photo its speaker shared."""
    return f"{turn.text} {turn.media_caption}." if turn.media_caption else turn.text


def _topic_matches(terms: set[str], turns: Sequence[Candidate]) -> list[Candidate]:
    """The turns that best match the question's content words (rarer words weigh more)."""
    words = [terms.intersection(_ANALYZER(_text(t))) for t in turns]
    df = Counter(w for found in words for w in found)
    n = len(turns)
    scores = [sum(math.log((n + 1) / (df[w] + 0.5)) for w in found) for found in words]
    best = max(scores, default=0.0)
    if best <= 0:
        return []
    top = [i for i, s in enumerate(scores) if s >= best * TOPIC_RATIO]
    if max(len(words[i]) for i in top) < TOPIC_MIN_TERMS:
        return []
    return [turns[i] for i in top]


def _answer_matches(
    said: set[str], topic: Collection[str], turns: Sequence[Candidate]
) -> list[Candidate]:
    """The turns the answer most likely came from (none when none shares a word with it).

    Among the turns sharing a word with the answer, those sharing the most words with
    the answer and the question's topic together: an echo of the answer on another
    topic ("Great that you're prioritizing self-care") loses to the turn that said it
    about the thing asked ("The race made me realize self-care is important").
    """
    terms = said | set(topic)
    overlap = []
    for turn in turns:
        words = set(_ANALYZER(_text(turn)))
        overlap.append(len(terms & words) if said & words else 0)
    best = max(overlap, default=0)
    return [t for t, n in zip(turns, overlap, strict=True) if n == best] if best else []


def _topic(
    analysis: QueryAnalysis, question: str, shown: Sequence[Candidate]
) -> tuple[str, list[Candidate], list[str], set[str], list[Candidate]] | None:
    """What the premise checks read from the question and the shown turns.

    (person, raw turns, other speakers, topic words, best topic matches), or None when
    the question names no speaker or several.
    """
    if len(analysis.persons) != 1:
        return None
    person = analysis.persons[0]
    turns = [c for c in shown if c.granularity == "raw"]
    others = sorted({t.speaker for t in turns if t.speaker and t.speaker != person})
    asked = question
    for expression in analysis.time_expressions:
        asked = asked.replace(expression, " ")
    topic = _content(asked, person)
    return person, turns, others, topic, _topic_matches(topic, turns)


@dataclass(frozen=True)
class ForeignTopic:
    """A question whose topic the shown turns tie only to someone else."""

    person: str
    """The one person the question names."""
    others: list[str]
    """The other speakers of the shown turns."""
    turns: list[Candidate]
    """The raw turns that best match the question's topic (none about ``person``)."""
    shown: list[Candidate]
    """Every raw turn shown."""
    topic: frozenset[str] = frozenset()
    """The question's content words (analyzed; the person and time words left out)."""


def foreign_topic(
    analysis: QueryAnalysis, question: str, shown: Sequence[Candidate]
) -> ForeignTopic | None:
    """The topic test alone: the question's best-matching turns, all about someone else.

    None when the question names no speaker or several, when no shown turn shares two
    content words with it, or when one of its best turns is about the named person.
    """
    found = _topic(analysis, question, shown)
    if found is None:
        return None
    person, turns, others, topic, best = found
    if not best or any(_about(t, topic, person, others) for t in best):
        return None
    return ForeignTopic(person, others, best, turns, frozenset(topic))


def foreign_answer(foreign: ForeignTopic, answer: str) -> bool:
    """The answer test: no turn the answer may have come from is about the person.

    Two readings of where it came from, and one about the person lifts the doubt:

    - the turns sharing a word with the answer and the most words with the answer and
      the question's topic together (:func:`_answer_matches`);
    - the turns sharing the most words with the answer alone, when they also share a
      topic word: "Lena told me she realized self-care matters" ties Lena to
      "What did Lena realize...", but Ines's echo "Great that you're prioritizing
      self-care!" does not tie her to "What did Ines realize after the race?".

    False when no shown turn shares a word with the answer.
    """
    person, others, topic = foreign.person, foreign.others, foreign.topic
    said = _content(answer, person)
    grounds = _answer_matches(said, topic, foreign.shown)
    if not grounds:
        return False
    if any(_about(t, said | topic, person, others) for t in grounds):
        return False
    for turn in _answer_matches(said, (), foreign.shown):
        on_topic = not topic or bool(topic.intersection(_ANALYZER(_text(turn))))
        if on_topic and _about(turn, said, person, others):
            return False
    return True


def unfounded_premise(
    analysis: QueryAnalysis, question: str, answer: str, shown: Sequence[Candidate]
) -> str | None:
    """The person the question names when neither its topic nor the answer is theirs.

    None when the check does not apply: the topic test does not fire
    (:func:`foreign_topic`), or the answer test does not (:func:`foreign_answer`).
    """
    foreign = foreign_topic(analysis, question, shown)
    if foreign is None or not foreign_answer(foreign, answer):
        return None
    return foreign.person


def premise_found(analysis: QueryAnalysis, question: str, shown: Sequence[Candidate]) -> bool:
    """Whether a turn that best matches the question's topic is about the named person.

    Asked after :func:`unfounded_premise` fired and the graph searched again: a new
    draft does not lift the doubt, only a turn tying the person to the topic does.
    """
    found = _topic(analysis, question, shown)
    if found is None:
        return True  # no single person: nothing to doubt
    person, _, others, topic, best = found
    return any(_about(t, topic, person, others) for t in best)


__all__ = [
    "TOPIC_MIN_TERMS",
    "TOPIC_RATIO",
    "ForeignTopic",
    "foreign_answer",
    "foreign_topic",
    "premise_found",
    "unfounded_premise",
]
