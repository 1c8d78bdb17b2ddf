"""Whether a fact's source turns support it: its content words, counted (no LLM).

A small model sometimes writes a note its excerpt does not say ("Theo will visit the
bakery" from a turn about visiting Porto, or a sentence borrowed from another turn).
A fact is supported when at least :data:`SUPPORT_THRESHOLD` of its content words
(stemmed, stop words and the people's names left out) occur in its source turns, their
shared images' captions or the turn just before them.

At that threshold nearly all hand-written observations pass against their own evidence
turns and few against a random other turn.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ....stores.lexical import Analyzer
from ...common.names import match_speakers

SUPPORT_THRESHOLD = 0.25
"""Share of a fact's content words its sources must hold (see the module docstring)."""
SOURCE_MARGIN = 0.5
"""Share of a fact's content words by which another turn of its excerpt must beat the
turn the model cited to become the fact's source.

A 1.5B model often cites the turn next to the one it read ("Priya goes on adventures
with her dogs" under "I got new collars for my dogs"), which still passes the support
threshold. Moving such sources raised owner accuracy; a smaller margin moved too many."""
_ANALYZER = Analyzer()


def content_terms(statement: str, people: Sequence[str]) -> set[str]:
    """The statement's stemmed content words, the people's names left out."""
    return {t for t in _ANALYZER(statement) if not match_speakers(t, list(people))}


def source_terms(sources: Iterable[str]) -> set[str]:
    """Every stemmed word of ``sources``, as the statements' words are stemmed."""
    return {term for text in sources for term in _ANALYZER(text)}


def support_ratio(statement: str, sources: Iterable[str], people: Sequence[str]) -> float:
    """Share of the statement's content words found in ``sources`` (1.0: none to check)."""
    terms = content_terms(statement, people)
    if not terms:
        return 1.0
    return len(terms & source_terms(sources)) / len(terms)


def supported(
    statement: str,
    sources: Iterable[str],
    people: Sequence[str],
    threshold: float = SUPPORT_THRESHOLD,
) -> bool:
    """Whether ``sources`` hold enough of the statement's content words."""
    return support_ratio(statement, sources, people) >= threshold


__all__ = [
    "SOURCE_MARGIN",
    "SUPPORT_THRESHOLD",
    "content_terms",
    "source_terms",
    "support_ratio",
    "supported",
]
