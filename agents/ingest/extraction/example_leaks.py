"""What a small model copies from the construction prompt's example into real notes.

The example teaches ``Omar, Priya's cousin, joined a chess club`` and ``Jonas loves
chess``. A 1.5B model then writes "Lena, Kofi's cousin, told Kofi ..." about two
friends, and "Kofi loves chess" under a turn about adoption. The support check passes
both, because the rest of the note is in the turn ("loving" matches "loves"). In a
built memory, about one fact in thirty called one speaker the other's cousin, and none
of their source turns said "cousin".

Two checks, no LLM. Each change is counted by the caller:

* :func:`cut_unsaid_relations`: an appositive relation, ``<Name>, <Name>'s <relation>,``,
  whose relation word the sources do not hold is cut out, and the note keeps the rest;
* :func:`copies_example`: a note whose content words, names aside, are all words of one
  of the example's notes, one of them missing from its sources, is a copy of the
  example. It is dropped.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import cache

from ....prompts.construction import CONSTRUCT_LINES
from ...common.lexicon import RELATION_WORDS
from ..evidence.support import content_terms, source_terms
from .lines import parse_lines

_RELATIONS = "|".join(re.escape(w) for w in sorted(RELATION_WORDS, key=len, reverse=True))
"""The relation words an appositive may state (a modifier such as "best" may precede them)."""
_NAME = r"[A-Z][\w'’-]*"
_APPOSITIVE = re.compile(rf"\b({_NAME}), ({_NAME})['’]s ((?:[a-z]+ )?(?:{_RELATIONS}))\b,\s*")


def _terms(statement: str, people: Sequence[str]) -> frozenset[str]:
    """The statement's content words without the people's names, stemmed as the text is."""
    return frozenset(content_terms(statement, people) - source_terms(people))


def cut_unsaid_relations(statement: str, sources: Iterable[str]) -> tuple[str, int]:
    """``statement`` without the appositive relations its sources do not state; how many.

    ``Lena, Kofi's cousin, went camping.`` becomes ``Lena went camping.`` unless
    a source says "cousin". An appositive the sources do state is kept.
    """
    said = source_terms(sources)
    cut = 0

    def repair(match: re.Match[str]) -> str:
        nonlocal cut
        relation = match.group(3).split()[-1]
        if source_terms([relation]) <= said:
            return match.group(0)
        cut += 1
        return f"{match.group(1)} "

    return _APPOSITIVE.sub(repair, statement), cut


@cache
def example_notes() -> tuple[frozenset[str], ...]:
    """The content words of each note of the construction prompt's example (names aside)."""
    system = str(getattr(getattr(CONSTRUCT_LINES.messages[0], "prompt", None), "template", ""))
    block = system.split("Example notes", 1)[-1].split("Rules:", 1)[0]
    draft = parse_lines(block.split("\n", 1)[-1]).draft
    speakers = re.findall(r"\[t\d+\] (\w+):", system)
    people = list(dict.fromkeys([*speakers, *(f.subject for f in draft.facts)]))
    notes = (_terms(f.statement, people) for f in draft.facts)
    return tuple(n for n in notes if n)


def copies_example(statement: str, people: Sequence[str], sources: Iterable[str]) -> bool:
    """Whether the note only repeats one of the example's notes, unsaid by its sources."""
    terms = _terms(statement, people)
    if not terms:
        return False
    said = source_terms(sources)
    return any(terms <= note and not terms <= said for note in example_notes())


__all__ = ["copies_example", "cut_unsaid_relations", "example_notes"]
