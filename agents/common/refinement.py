"""Fact identity and deduplication for the Constructor.

Facts get deterministic ids from their normalised statement, and a fact is dropped when
the same statement, or one nearly identical (cosine >= ``DUPLICATE_THRESHOLD``), is
already stored or was produced earlier in the same batch.

A small model also restates one turn twice in other words ("Theo will host a dance
competition next month" and "Theo is hosting a dance competition next month"), or once
whole and once cut off at its output cap. Such a fact is a repeat of an earlier one
about the same person from a shared source turn when their stemmed words overlap by at
least :data:`REPEAT_OVERLAP` (Jaccard), or when all the words of one are in the other.
At 0.7 this catches a built memory's restatements; at 0.6 a question about a program
and joining it begin to count as one.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ...core.context import MemoryContext
from ...records.model import FactRecord, stable_id
from ...stores.lexical import Analyzer

if TYPE_CHECKING:  # a type only: importing the pure text rules loads no LLM client
    from .deps import StepLog

_SPACE = re.compile(r"\s+")
_ANALYZER = Analyzer()
DUPLICATE_THRESHOLD = 0.95
"""A new fact this close (cosine) to a stored one is a duplicate and is dropped."""
REPEAT_OVERLAP = 0.7
"""Share of two facts' stemmed words (Jaccard) at which the later one repeats the earlier."""


def fact_id(namespace: str, statement: str) -> str:
    """A deterministic id from the normalised statement."""
    normalised = _SPACE.sub(" ", statement.strip().lower().rstrip("."))
    return stable_id("fact", namespace, normalised)


def _words(fact: FactRecord) -> frozenset[str]:
    return frozenset(_ANALYZER(fact.text))


def repeats(fact: FactRecord, earlier: FactRecord) -> bool:
    """Whether two facts say one thing: same person, a shared source, words alike.

    Alike: a Jaccard overlap of :data:`REPEAT_OVERLAP`, or every word of one in the other
    (a note cut off at the output cap, "Alice will host a dance"). A relation read from
    the turn without the model ("Alice's cat is Tom.", agents/ingest/ownership/relations.py) is
    never a repeat: later turns end or change it.
    """
    if any(f.metadata.get("derived_by") == "relations" for f in (fact, earlier)):
        return False  # "Alice's cat is Tom." is read from the turn on purpose: it stays
    if (fact.subject or "").casefold() != (earlier.subject or "").casefold():
        return False
    if not set(fact.source_ids) & set(earlier.source_ids):
        return False
    a, b = _words(fact), _words(earlier)
    if not a or not b:
        return False
    return len(a & b) / len(a | b) >= REPEAT_OVERLAP or a <= b or b <= a


def deduplicate(log: StepLog, ctx: MemoryContext, facts: list[FactRecord]) -> list[FactRecord]:
    """Drop facts already stored or repeated in ``facts``.

    Stored means the same id, a near-identical text, or a repeat of a fact of one of its
    turns (:func:`repeats`, counted ``repeat_merged``). Of two repeats in one batch the
    one with more words stays.
    """
    store, ns = log.deps.store, ctx.namespace
    seen: set[str] = {f.id for f in store.get("fact", ns, [f.id for f in facts])}
    kept: list[FactRecord] = []
    for fact in facts:
        if fact.id in seen:
            continue
        seen.add(fact.id)
        hits = store.search(fact.text, "fact", ns, k=3, mode="dense")
        if hits and hits[0].channel_scores["dense"] >= DUPLICATE_THRESHOLD:
            continue
        stored = [h.record for h in hits if isinstance(h.record, FactRecord)]
        if any(repeats(fact, earlier) for earlier in stored):
            log.count("repeat_merged")
            continue
        twin = next((n for n, earlier in enumerate(kept) if repeats(fact, earlier)), None)
        if twin is not None:
            log.count("repeat_merged")
            if len(_words(fact)) > len(_words(kept[twin])):
                kept[twin] = fact
            continue
        kept.append(fact)
    return kept
