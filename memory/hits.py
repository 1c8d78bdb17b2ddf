"""Map store hits and recall candidates to the facade's :class:`MemoryHit`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from ..core.state import Candidate
from ..records.model import FactRecord, Granularity, RawTurn
from ..stores.base import ScoredRecord
from .results import MemoryHit

ALL_GRANULARITIES: tuple[str, ...] = tuple(g.value for g in Granularity)


def hit_from_scored(hit: ScoredRecord) -> MemoryHit:
    """A store search result as a :class:`MemoryHit`."""
    record = hit.record
    return MemoryHit(
        granularity=record.granularity.value,
        id=record.id,
        text=record.text,
        score=hit.score,
        occurred_at=record.occurred_at,
        speaker=record.speaker if isinstance(record, RawTurn) else None,
        ranks=dict(hit.ranks),
        similarity=hit.channel_scores.get("dense"),
        metadata=dict(record.metadata),
    )


def hit_from_candidate(candidate: Candidate) -> MemoryHit:
    """A recall candidate as a :class:`MemoryHit`."""
    return MemoryHit(
        granularity=candidate.granularity,
        id=candidate.id,
        text=candidate.text,
        score=candidate.score,
        occurred_at=candidate.occurred_at,
        speaker=candidate.speaker,
        ranks=dict(candidate.ranks),
        via=candidate.via,
    )


def visible_at(hit: ScoredRecord, as_of: datetime | None) -> bool:
    """Current facts only; with ``as_of``, what was known and valid at that time."""
    record = hit.record
    if as_of is None:
        return not (isinstance(record, FactRecord) and record.superseded_by is not None)
    if record.occurred_at > as_of:
        return False
    return not isinstance(record, FactRecord) or record.is_valid_at(as_of)


def merge_hits(per_granularity: Mapping[str, Sequence[ScoredRecord]], k: int) -> list[MemoryHit]:
    """One ranked list: by fused score, then by cosine, granularity order and id.

    Fused (RRF) scores come from ranks within each granularity, so the top hits of two
    granularities tie; the dense cosine, comparable across collections, breaks the tie.
    """
    order = {g: n for n, g in enumerate(ALL_GRANULARITIES)}
    scored = [h for hits in per_granularity.values() for h in hits]
    scored.sort(
        key=lambda h: (
            -h.score,
            -h.channel_scores.get("dense", -2.0),
            order.get(h.record.granularity.value, 99),
            h.record.id,
        )
    )
    return [hit_from_scored(h) for h in scored[:k]]
