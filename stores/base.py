"""The ``MemoryStore`` protocol that every node talks to, and its result type."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal, Protocol, TypedDict, Unpack, runtime_checkable

from .audit import AuditEntry
from .bm25 import BM25Index
from .filters import TimeWindow
from .indexing import IndexTextPolicy
from .records import FactRecord, Granularity, MemoryRecord, MetadataValue, ProfileRecord

SearchMode = Literal["hybrid", "dense", "bm25"]
Where = Mapping[str, MetadataValue | Sequence[MetadataValue]]

DEFAULT_SEARCH_K = 10
"""How many hits a search returns when ``k`` is not given."""
DEFAULT_SEARCH_MODE: SearchMode = "hybrid"
"""The retrieval a search uses when ``mode`` is not given."""


class SearchOptions(TypedDict, total=False):
    """The keyword options of :meth:`MemoryStore.search`; each one may be left out."""

    k: int
    """How many hits at most (default :data:`DEFAULT_SEARCH_K`, 10)."""
    window: TimeWindow | None
    """Keep only records whose time lies in this window."""
    where: Where | None
    """Keep only records whose metadata match these values."""
    mode: SearchMode
    """``dense``, ``bm25`` or ``hybrid`` (default, :data:`DEFAULT_SEARCH_MODE`)."""


@dataclass(frozen=True)
class ScoredRecord:
    """A search result: the record, its fused score, and each channel's rank and score."""

    record: MemoryRecord
    score: float
    ranks: dict[str, int] = field(default_factory=dict)
    """1-based rank per channel (``dense``, ``bm25``); absent if that channel missed it."""
    channel_scores: dict[str, float] = field(default_factory=dict)
    """Raw score per channel: cosine similarity for ``dense``, Okapi score for ``bm25``."""


@runtime_checkable
class MemoryStore(Protocol):
    """Storage for the four granularities. Every call is scoped to one namespace."""

    @property
    def index_policy(self) -> IndexTextPolicy:
        """How a record's text is rendered for indexing (both search channels)."""
        ...

    def add(self, namespace: str, records: Sequence[MemoryRecord]) -> list[str]:
        """Insert or replace records (idempotent by id); return their ids."""
        ...

    def get(
        self,
        granularity: Granularity | str,
        namespace: str,
        ids: Sequence[str] | None = None,
        *,
        window: TimeWindow | None = None,
        where: Where | None = None,
        limit: int | None = None,
    ) -> list[MemoryRecord]:
        """Return records by id and/or filter."""
        ...

    def update(self, namespace: str, record: MemoryRecord) -> MemoryRecord:
        """Replace an existing record; raise if it does not exist."""
        ...

    def mark_superseded(
        self,
        namespace: str,
        fact_id: str,
        *,
        superseded_by: str,
        at: datetime | None = None,
        audit: AuditEntry | None = None,
    ) -> FactRecord:
        """Close a fact's validity and point it at its replacement, keeping it.

        ``valid_to`` is ``at``, else the replacing fact's event time; the clock only
        when neither is known (the audit entry then says so).
        With ``audit``, that entry lands in the audit log with the supersede, or neither
        lands.
        """
        ...

    def delete(
        self,
        granularity: Granularity | str,
        namespace: str,
        ids: Sequence[str] | None = None,
        *,
        window: TimeWindow | None = None,
        where: Where | None = None,
    ) -> int:
        """Delete records by id and/or filter; return how many were deleted."""
        ...

    def search(
        self,
        query: str,
        granularity: Granularity | str,
        namespace: str,
        **options: Unpack[SearchOptions],
    ) -> list[ScoredRecord]:
        """Rank records for ``query`` with dense, lexical or fused (RRF) retrieval.

        The options (:class:`SearchOptions`) are keywords: ``k`` (default 10), ``window``,
        ``where`` and ``mode`` (default ``"hybrid"``).
        """
        ...

    def vectors(
        self, granularity: Granularity | str, namespace: str, ids: Sequence[str]
    ) -> dict[str, list[float]]:
        """Return the stored embedding of each record id that exists in ``namespace``."""
        ...

    def lexical_index(self, granularity: Granularity | str, namespace: str) -> BM25Index:
        """Return the BM25 mirror of one collection and namespace."""
        ...

    def count(self, granularity: Granularity | str, namespace: str) -> int:
        """Return how many records of a granularity a namespace holds."""
        ...

    def put_profile(self, profile: ProfileRecord) -> ProfileRecord:
        """Store a namespace's profile, replacing the previous one."""
        ...

    def get_profile(self, namespace: str) -> ProfileRecord | None:
        """Return a namespace's profile, or None."""
        ...

    def append_audit(self, entry: AuditEntry) -> AuditEntry:
        """Append one entry to a namespace's audit log."""
        ...

    def list_audit(self, namespace: str) -> list[AuditEntry]:
        """Return a namespace's audit log, oldest first."""
        ...
