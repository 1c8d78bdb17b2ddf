"""Whether an answer rests on the words of the person the question names (no LLM).

An adversarial question swaps the speaker: "What did Maya realize after the race?"
when it was Lena who ran it. A small model answers it anyway, from the other person's
turns. Two deterministic checks catch such a draft, each calibrated without an LLM on
the gold evidence of benchmark conversations:

- **citations**: the draft cites only turns said by someone else, none mentioning the
  person.
- **grounding**: the memories whose words best match the draft answer are all someone
  else's (turns they said, or derived memories that do not name the person). A model
  often cites the named person's own reply ("That's great!") while its answer comes
  from the other speaker's story; this check looks at the answer's words instead.

A name said to someone ("Thanks, Maya! This necklace is from my grandma") is not a
mention of them: speakers often address each other by name. With such vocatives left
out, each check fires on most swapped-speaker questions and on few answerable ones.

A draft failing either check is not sufficient: the graph retries, then refuses.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ...core.state import Candidate
from ...stores.lexical import Analyzer
from .names import match_speakers
from .query_analysis import QueryAnalysis

_ANALYZER = Analyzer()
_VOCATIVE = re.compile(
    r"(?:^|(?<=[.!?,;:]))\s*"
    r"(?:(?:hey|hi|hello|thanks|thank\s+you|oh|wow|yeah|yes|no|aw+|congrats|"
    r"congratulations|sure|great|dear|ok|okay)[\s,]+)?"
    r"([^\W\d_][\w'’-]*)\s*(?=[,!.?;:]|$)",
    re.IGNORECASE,
)
"""A word said to someone: after a sentence start, a comma or a greeting, before a stop."""


def mentions(text: str, person: str) -> bool:
    """Whether ``text`` names ``person`` other than by addressing them."""
    spoken_to = [
        m.span(1) for m in _VOCATIVE.finditer(text) if match_speakers(m.group(1), [person])
    ]
    for start, end in reversed(spoken_to):
        text = text[:start] + text[end:]
    return bool(match_speakers(text, [person]))


def _theirs(memory: Candidate, person: str) -> bool:
    """Said by ``person`` (a raw turn) or naming them (any memory)."""
    spoken = memory.granularity == "raw" and memory.speaker == person
    return spoken or mentions(memory.text, person)


def unsupported_person(analysis: QueryAnalysis, cited: Sequence[Candidate]) -> str | None:
    """The person the question names when no cited turn is theirs or mentions them.

    None when the check does not apply: the question names no speaker or several, or
    the answer cites no conversation turn (then nothing says whose words they were).
    """
    if len(analysis.persons) != 1:
        return None
    person = analysis.persons[0]
    turns = [c for c in cited if c.granularity == "raw"]
    if not turns:
        return None
    if any(_theirs(turn, person) for turn in turns):
        return None
    return person


def ungrounded_person(
    analysis: QueryAnalysis, answer: str, shown: Sequence[Candidate]
) -> str | None:
    """The person the question names when the answer's best-matching memories are others'.

    The memories shown to the model are scored by how many of the answer's terms (stop
    words and the person's name left out) they contain. None when the check does not
    apply: the question names no speaker or several, or no memory shares a term with
    the answer (a bare date or "yes" says nothing about whose story it is).
    """
    if len(analysis.persons) != 1:
        return None
    person = analysis.persons[0]
    terms = set(_ANALYZER(answer)) - set(_ANALYZER(person))
    if not terms:
        return None
    overlap = [(len(terms.intersection(_ANALYZER(m.text))), m) for m in shown]
    best = max((n for n, _ in overlap), default=0)
    if best == 0:
        return None
    if any(_theirs(m, person) for n, m in overlap if n == best):
        return None
    return person


__all__ = ["mentions", "ungrounded_person", "unsupported_person"]
