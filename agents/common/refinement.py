"""Fact identity and deduplication for the Constructor.

Facts get deterministic ids from their normalised statement, and a fact is dropped when
the same statement, or one nearly identical (cosine >= ``duplicate_threshold``), is
already stored or was produced earlier in the same batch.
"""

from __future__ import annotations

import re

from ...core.context import MemoryContext
from ...records.model import FactRecord, stable_id
from .deps import StepLog

_SPACE = re.compile(r"\s+")


def fact_id(namespace: str, statement: str) -> str:
    """A deterministic id from the normalised statement."""
    normalised = _SPACE.sub(" ", statement.strip().lower().rstrip("."))
    return stable_id("fact", namespace, normalised)


def deduplicate(log: StepLog, ctx: MemoryContext, facts: list[FactRecord]) -> list[FactRecord]:
    """Drop facts already stored (same id or near-identical text) or repeated in ``facts``."""
    store, ns = log.deps.store, ctx.namespace
    seen: set[str] = {f.id for f in store.get("fact", ns, [f.id for f in facts])}
    kept: list[FactRecord] = []
    for fact in facts:
        if fact.id in seen:
            continue
        seen.add(fact.id)
        hits = store.search(fact.text, "fact", ns, k=1, mode="dense")
        if hits and hits[0].channel_scores["dense"] >= ctx.duplicate_threshold:
            continue
        kept.append(fact)
    return kept
