"""A note that tells of two people becomes one note per person (no LLM).

A 1.5B model often packs two people's news into one note: "Theo suggested going into
policymaking. Maya was considering going into policymaking." The whole note is then
filed under its first sentence's person, and Maya's plan is found only under Theo. A
later sentence that opens with another known person's name is split off as a note of
its own, with the same turn label and that person as its subject, so the owner check
weighs each sentence on its own.

A sentence that opens with a pronoun ("He is inspired by this") stays with the note
before it: it needs that note to say whom it means.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ...common.formatting import SENTENCE_BREAK
from ..schemas import FactLine

_LEAD = re.compile(r"^([A-Z][\w-]*)(?:['’]s)?\b")
_MIN_WORDS = 3
"""A split-off sentence has at least this many words ("Maya agreed." stays)."""


def _lead(sentence: str, people: dict[str, str]) -> str | None:
    """The known person a sentence opens with (their label), if any."""
    match = _LEAD.match(sentence)
    return people.get(match.group(1).casefold()) if match else None


def split_note(item: FactLine, people: Sequence[str]) -> list[FactLine]:
    """``item`` as one note per person its sentences open with (itself when there is one).

    ``people``: the namespace's speakers; a sentence is split off only when it opens with
    one of them (their first name) and that person is not the note's own subject.
    """
    known = {p.split()[0].casefold(): p for p in people if p.strip()}
    sentences = [s for s in SENTENCE_BREAK.split(item.statement.strip()) if s]
    if len(sentences) < 2:
        return [item]
    groups: list[tuple[str, list[str]]] = [(item.subject, [sentences[0]])]
    current = _lead(sentences[0], known) or item.subject
    for sentence in sentences[1:]:
        person = _lead(sentence, known)
        if person is not None and person != current and len(sentence.split()) >= _MIN_WORDS:
            groups.append((person, [sentence]))
            current = person
        else:
            groups[-1][1].append(sentence)
    if len(groups) == 1:
        return [item]
    return [
        item.model_copy(update={"subject": subject, "statement": " ".join(parts)})
        for subject, parts in groups
    ]


__all__ = ["split_note"]
