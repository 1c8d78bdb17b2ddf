"""A question asserts nothing: a note only a question supports is not memory (no LLM).

A 1.5B model turns a question into a fact about the one asked: "Have you ever
considered going back to acting?" (Kofi to Ines) becomes "Ines has considered going
back to acting". The words are all in the turn, so the support check passes it. In a
built memory, few notes lose their support once questions are set aside, and most of
those report the asking ("Maya asked Theo what his plans were"), which is what the
turn does say.

A note whose source turns support it only in their questions is dropped unless it says
that someone asked, or the next turn answers the question (:func:`answer_to`; it then
becomes a source too). The turns' statements, their shared images' captions and the
turns they answer still count: "Yes, last week!" after "Did you go camping?" supports
"went camping last week".
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ....records.model import RawTurn
from ...common.formatting import SENTENCE_BREAK
from .support import supported

_ASKING = re.compile(
    r"\b(?:ask|asks|asked|asking|wonder|wonders|wondered|wondering|inquired|curious|"
    r"want(?:s|ed)? to know|wanting to know)\b",
    re.IGNORECASE,
)
"""Words of a note that reports a question rather than a fact."""


_ASIDE = re.compile(r"\s+[-–—]\s+|\s*;\s*")
"""Where a question tacked onto a statement starts: "I finished it - want to see?"."""


def statements(text: str) -> str:
    """``text`` without its questions: "Got any projects planned?" says nobody's plans.

    Of a sentence that ends in a question but opens as a statement ("I finished another
    pottery project - want to see a pic?"), the part before the question stays.
    """
    kept = []
    for sentence in SENTENCE_BREAK.split(text):
        if sentence.rstrip().endswith("?"):
            sentence = " ".join(_ASIDE.split(sentence)[:-1])
        if sentence.strip():
            kept.append(sentence)
    return " ".join(kept)


def answer_to(asked: Sequence[RawTurn], turns: Sequence[RawTurn]) -> RawTurn | None:
    """The turn that answers the last of ``asked``, or None.

    It is the next turn of the excerpt, by someone else, and it asserts something ("Sure,
    happy to water the plants!" after "Can you water my plants?").
    """
    if not asked:
        return None
    at = next((n for n, t in enumerate(turns) if t.id == asked[-1].id), None)
    if at is None or at + 1 >= len(turns):
        return None
    reply = turns[at + 1]
    if reply.speaker == asked[-1].speaker or not statements(reply.text).strip():
        return None
    return reply


def only_asked(statement: str, turns: Sequence[RawTurn], people: Sequence[str]) -> bool:
    """Whether ``turns`` support ``statement`` only in their questions (and it reports none).

    ``turns``: the note's source turns. What they assert is their statements, their
    captions and the turns they answer (``context``); with their questions they must
    support the note, without them they must not.
    """
    if _ASKING.search(statement):
        return False
    extra = [x for t in turns for x in (t.media_caption or "", t.context or "")]
    with_questions = [t.text for t in turns] + extra
    asserted = [statements(t.text) for t in turns] + extra
    return supported(statement, with_questions, people) and not supported(
        statement, asserted, people
    )


__all__ = ["answer_to", "only_asked", "statements"]
