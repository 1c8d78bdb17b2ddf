"""Expired records (``MemoryRecord.expires_at``) are left out of every read.

A record past its ``expires_at`` is gone for readers at once, before any sweep: the
facade filters what it returns, and :class:`UnexpiredStore` is the store the memory
graph reads through, so ``answer`` never sees one either. The sweeper
(:meth:`lamina.Memory.sweep_expired`) then forgets them for good, through ``forget``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any, TypeVar, Unpack

from ..records.model import Granularity, MemoryRecord, utc_now
from .base import GetOptions, ScoredRecord, SearchAnswer, SearchByRequest, SearchRequest

R = TypeVar("R", MemoryRecord, ScoredRecord)

OVERFETCH = 8
"""Extra hits a search asks for, so that expired ones left out still leave ``k``."""


def is_expired(record: MemoryRecord, now: datetime) -> bool:
    """Whether ``record`` has an ``expires_at`` at or before ``now``."""
    return record.expires_at is not None and record.expires_at <= now


def unexpired(items: Iterable[R], now: datetime | None = None) -> list[R]:
    """``items`` (records or search hits) without the expired ones."""
    at = now or utc_now()
    return [i for i in items if not is_expired(i.record if isinstance(i, ScoredRecord) else i, at)]


def inherited_expiry(sources: Sequence[MemoryRecord]) -> datetime | None:
    """When a record derived from ``sources`` expires: with the last of them.

    None (never) when any source never expires, or there is no source.
    """
    ends = [s.expires_at for s in sources]
    if not ends or any(e is None for e in ends):
        return None
    return max(e for e in ends if e is not None)


def earliest_expiry(members: Sequence[MemoryRecord]) -> datetime | None:
    """When a scene stops being readable: as its first member expires (None: never).

    Its summary quotes every member, so it is hidden from then until the sweeper has
    rewritten it from the members left (see :meth:`lamina.Memory.sweep_expired`).
    """
    ends = [m.expires_at for m in members if m.expires_at is not None]
    return min(ends) if ends else None


class UnexpiredStore(SearchByRequest):
    """A :class:`~lamina.stores.base.MemoryStore` whose reads leave expired records out.

    ``get`` and ``search_many`` (``search`` too: its plain ranking) filter (searches ask
    :data:`OVERFETCH` more hits, then keep ``k``); every other call goes to the wrapped
    store unchanged.
    """

    def __init__(self, store: Any, clock: Callable[[], datetime] | None = None) -> None:
        self.inner = store
        self.clock = clock
        """What "now" is (default: the system clock)."""

    def _now(self) -> datetime:
        return self.clock() if self.clock is not None else utc_now()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def get(
        self,
        granularity: Granularity | str,
        namespace: str,
        ids: Sequence[str] | None = None,
        **options: Unpack[GetOptions],
    ) -> list[MemoryRecord]:
        """The wrapped store's ``get``, expired records left out."""
        return unexpired(self.inner.get(granularity, namespace, ids, **options), self._now())

    def search_many(self, request: SearchRequest) -> SearchAnswer:
        """The wrapped store's ``search_many``, expired hits left out of every ranking."""
        wider = replace(
            request,
            rankings={g: replace(r, k=r.k + OVERFETCH) for g, r in request.rankings.items()},
        )
        answer = self.inner.search_many(wider)
        now = self._now()
        keep = {str(getattr(g, "value", g)): r.k for g, r in request.rankings.items()}
        return {
            gran: {ch: unexpired(hits, now)[: keep.get(gran, len(hits))] for ch, hits in by.items()}
            for gran, by in answer.items()
        }
