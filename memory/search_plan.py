"""What a search or a listing of the facade asks for, checked once for its sync and async forms.

``search`` and ``asearch`` (and ``get_all`` and ``aget_all``) validate their arguments
here, before any store call, and read the same plan: so both forms refuse the same bad
input with the same message and ask the store the same questions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TypedDict

from ..errors import InvalidInputError, InvalidTypeError
from ..records.model import MemoryRecord, parse_granularity
from ..stores.base import ScoredRecord, Where
from ..stores.filters import TimeWindow
from .filters import parse_filters, require_threshold
from .hits import ALL_GRANULARITIES
from .inputs import (
    require_aware,
    require_namespace,
    require_positive_int,
    require_query,
    require_window,
    type_name,
)

DEFAULT_K = 10
"""Hits a search returns when neither ``k`` nor ``top_k`` is given."""


def granularities_of(granularities: object) -> list[str]:
    """The granularities asked for (default all four), validated, without repeats."""
    if isinstance(granularities, str):
        granularities = [granularities]
    if granularities is not None and not isinstance(granularities, Sequence):
        raise InvalidTypeError(
            "granularities must be a list of 'raw', 'fact', 'episode', 'scene' or None, "
            f"got {type_name(granularities)}"
        )
    asked = ALL_GRANULARITIES if granularities is None else granularities
    grans = [parse_granularity(g).value for g in asked]
    if not grans:
        raise InvalidInputError("granularities must name at least one granularity")
    return list(dict.fromkeys(grans))


def _limit(k: object, top_k: object) -> int:
    """``k``, or mem0's ``top_k`` when given instead (default :data:`DEFAULT_K`)."""
    if k is not None and top_k is not None:
        raise InvalidInputError(f"give k or top_k, not both (got k={k!r}, top_k={top_k!r})")
    if top_k is not None:
        return require_positive_int("top_k", top_k)
    return DEFAULT_K if k is None else require_positive_int("k", k)


class SearchArgs(TypedDict, total=False):
    """``Memory.search``'s keyword arguments besides ``namespace``; ``asearch`` takes them."""

    k: int | None
    granularities: Sequence[str] | None
    window: TimeWindow | None
    as_of: datetime | None
    filters: Mapping[str, object] | None
    top_k: int | None
    threshold: float | None


@dataclass(frozen=True)
class SearchPlan:
    """A checked search: its size, time window, similarity floor and per-granularity filter."""

    k: int
    window: TimeWindow | None
    minimum: float | None
    wheres: list[tuple[str, Where | None]]
    """Each granularity searched, with its metadata filter (facts: current ones only)."""

    def similar_enough(self, hits: list[ScoredRecord]) -> list[ScoredRecord]:
        """The hits whose cosine similarity to the query reaches :attr:`minimum`."""
        if self.minimum is None:
            return hits
        return [h for h in hits if h.channel_scores.get("dense", -1.0) >= self.minimum]


def search_plan(
    query: object,
    namespace: object,
    k: object = None,
    granularities: object = None,
    window: TimeWindow | None = None,
    as_of: datetime | None = None,
    filters: Mapping[str, object] | None = None,
    top_k: object = None,
    threshold: object = None,
) -> SearchPlan:
    """The plan of ``search``'s arguments; a bad one raises before any store call."""
    require_query("query", query)
    require_namespace(namespace)
    size = _limit(k, top_k)
    require_window(window)
    require_aware("as_of", as_of)
    parsed = parse_filters(filters)
    window = parsed.with_window(window)
    minimum = require_threshold(threshold)
    wheres: list[tuple[str, Where | None]] = []
    for gran in granularities_of(granularities):
        current = {"superseded": False} if gran == "fact" and as_of is None else None
        wheres.append((gran, parsed.store_where(current)))
    return SearchPlan(size, window, minimum, wheres)


def listing_plan(
    namespace: object,
    filters: Mapping[str, object] | None,
    granularities: object,
    limit: object,
) -> tuple[TimeWindow | None, list[tuple[str, Where | None]]]:
    """The time window and per-granularity filters of ``get_all`` (facts: current ones)."""
    require_namespace(namespace)
    if limit is not None:
        require_positive_int("limit", limit)
    parsed = parse_filters(filters)
    wheres: list[tuple[str, Where | None]] = [
        (g, parsed.store_where({"superseded": False} if g == "fact" else None))
        for g in granularities_of(granularities)
    ]
    return parsed.window, wheres


def in_time_order(found: list[list[MemoryRecord]], limit: int | None) -> list[MemoryRecord]:
    """Every granularity's records, oldest first; only the ``limit`` most recent if given."""
    order = {g: n for n, g in enumerate(ALL_GRANULARITIES)}
    records = [r for group in found for r in group]
    records.sort(key=lambda r: (r.occurred_at, order[r.granularity.value], r.id))
    return records[-limit:] if limit is not None else records


__all__ = [
    "DEFAULT_K",
    "SearchPlan",
    "granularities_of",
    "in_time_order",
    "listing_plan",
    "search_plan",
]
