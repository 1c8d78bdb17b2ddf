"""The ``MemoryStore`` protocol that every node talks to, and its result type."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, Protocol, TypedDict, Unpack, runtime_checkable

from ..errors import InvalidInputError
from ..records.audit import AuditEntry
from ..records.model import (
    FactRecord,
    Granularity,
    MemoryRecord,
    MetadataValue,
    ProfileRecord,
    parse_granularity,
)
from .filters import TimeWindow
from .indexing import IndexTextPolicy

SearchMode = Literal["hybrid", "dense", "bm25"]
Where = Mapping[str, MetadataValue | Sequence[MetadataValue]]

DEFAULT_SEARCH_K = 10
"""How many hits a search returns when ``k`` is not given."""
DEFAULT_SEARCH_MODE: SearchMode = "hybrid"
"""The retrieval a search uses when ``mode`` is not given."""


class Scope(TypedDict, total=False):
    """The filters of :meth:`MemoryStore.delete`, ``get`` and ``search``; each may be left out."""

    window: TimeWindow | None
    """Keep only records whose time lies in this window."""
    where: Where | None
    """Keep only records whose metadata match these values."""


class GetOptions(Scope, total=False):
    """The keyword options of :meth:`MemoryStore.get`."""

    limit: int | None
    """At most this many records, the first ones."""


class SearchOptions(Scope, total=False):
    """The keyword options of :meth:`MemoryStore.search`."""

    k: int
    """How many hits at most (default :data:`DEFAULT_SEARCH_K`, 10)."""
    mode: SearchMode
    """``dense``, ``bm25`` or ``hybrid`` (default, :data:`DEFAULT_SEARCH_MODE`)."""


class SupersedeOptions(TypedDict, total=False):
    """The keyword options of :meth:`MemoryStore.mark_superseded` beside ``superseded_by``."""

    at: datetime | None
    """When the fact stopped holding (default: the replacing fact's event time)."""
    audit: AuditEntry | None
    """An entry that lands in the audit log with the supersede, or neither lands."""


@dataclass(frozen=True)
class ScoredRecord:
    """A search result: the record, its fused score, and each channel's rank and score."""

    record: MemoryRecord
    score: float
    ranks: dict[str, int] = field(default_factory=dict)
    """1-based rank per channel (``dense``, ``bm25``); absent if that channel missed it."""
    channel_scores: dict[str, float] = field(default_factory=dict)
    """Raw score per channel: cosine similarity for ``dense``, Okapi score for ``bm25``."""


PLAIN = "plain"
"""The channel of a :class:`SearchRequest` that only its granularity's own filter narrows."""


@dataclass(frozen=True, kw_only=True)
class Ranking:
    """What every ranking of one granularity in a :class:`SearchRequest` shares."""

    k: int = DEFAULT_SEARCH_K
    """How many hits at most, in each channel."""
    window: TimeWindow | None = None
    """Keep only records whose time lies in this window, in each channel."""
    where: Where | None = None
    """Keep only records whose metadata match these values, in each channel."""


@dataclass(frozen=True, kw_only=True)
class Channel:
    """A filtered ranking asked beside the plain one, in the same :class:`SearchRequest`.

    Its ``where`` adds to each granularity's own (its keys win); its ``window`` is the
    window when the granularity has none of its own (both at once is refused).
    """

    window: TimeWindow | None = None
    where: Where | None = None
    query: str | None = None
    """Searched instead of the request's query (None: the request's)."""
    only: tuple[str, ...] | None = None
    """The granularities it ranks (None: every one the request asks)."""


@dataclass(frozen=True)
class Search:
    """One ranking of a request, spelled out: what one :meth:`MemoryStore.search` asks."""

    granularity: Granularity
    channel: str
    query: str
    k: int
    window: TimeWindow | None
    where: Where | None


@dataclass(frozen=True, kw_only=True)
class SearchRequest:
    """One query over several granularities of one namespace, with filtered channels.

    Each granularity of ``rankings`` is ranked in the :data:`PLAIN` channel and in each
    of ``channels`` that applies to it. A store answers the whole request at once: each
    distinct query text embedded once, its indexes brought up to date once.
    """

    query: str
    namespace: str
    rankings: Mapping[str, Ranking]
    """The granularities asked (names or :class:`Granularity`), each with what its
    rankings share."""
    channels: Mapping[str, Channel] = field(default_factory=dict)
    mode: SearchMode = DEFAULT_SEARCH_MODE

    def searches(self) -> list[Search]:
        """Every ranking asked, granularity by granularity, each plain one first."""
        out: list[Search] = []
        for granularity, own in self.rankings.items():
            gran = parse_granularity(granularity)
            out.append(Search(gran, PLAIN, self.query, own.k, own.window, own.where))
            for name, ch in self.channels.items():
                if name == PLAIN:
                    raise InvalidInputError(f"{PLAIN!r} names the unfiltered channel already")
                if ch.only is not None and gran.value not in ch.only:
                    continue
                if ch.window is not None and own.window is not None:
                    raise InvalidInputError(
                        f"channel {name!r} sets a window and {gran.value} has its own"
                    )
                where = {**(own.where or {}), **ch.where} if ch.where else own.where
                query, window = ch.query or self.query, ch.window or own.window
                out.append(Search(gran, name, query, own.k, window, where))
        return out


SearchAnswer = dict[str, dict[str, list[ScoredRecord]]]
"""A request's hits: ``{granularity: {channel: hits, best first}}``."""


class SearchByRequest:
    """A store's ``search`` as a request of one ranking, for a store that answers requests."""

    def search_many(self, request: SearchRequest) -> SearchAnswer:
        """Every ranking of ``request`` (see :meth:`MemoryStore.search_many`)."""
        raise NotImplementedError

    def search(
        self,
        query: str,
        granularity: Granularity | str,
        namespace: str,
        **options: Unpack[SearchOptions],
    ) -> list[ScoredRecord]:
        """Rank records for ``query`` with dense, lexical or fused (RRF) retrieval.

        The options (:class:`SearchOptions`) are keywords: ``k`` (default 10), ``window``,
        ``where`` and ``mode`` (default ``"hybrid"``). Answered as the plain ranking of a
        one-granularity :meth:`search_many` request.
        """
        gran, request = plain_request(query, granularity, namespace, options)
        return self.search_many(request)[gran.value][PLAIN]


def keywords(call: str, given: Mapping[str, object], options: Any) -> None:
    """Refuse a keyword that the TypedDict ``options`` does not name, as a signature would."""
    unknown = sorted(set(given) - options.__optional_keys__ - options.__required_keys__)
    if unknown:
        raise TypeError(f"{call}() got an unexpected keyword argument {unknown[0]!r}")


def plain_request(
    query: str, granularity: Granularity | str, namespace: str, options: SearchOptions
) -> tuple[Granularity, SearchRequest]:
    """The request whose plain ranking of ``granularity`` is what ``search`` returns.

    A keyword that :class:`SearchOptions` does not name is refused, as ``get`` refuses one.
    """
    keywords("search", options, SearchOptions)
    gran = parse_granularity(granularity)
    own = Ranking(
        k=options.get("k", DEFAULT_SEARCH_K),
        window=options.get("window"),
        where=options.get("where"),
    )
    mode = options.get("mode", DEFAULT_SEARCH_MODE)
    request = SearchRequest(query=query, namespace=namespace, rankings={gran: own}, mode=mode)
    return gran, request


@runtime_checkable
class LexicalView(Protocol):
    """What callers read of one granularity and namespace's keyword index, up to date.

    Chroma's answer is its BM25 mirror (:class:`~lamina.stores.bm25.BM25Index`);
    Postgres answers each call with a query on the table.
    """

    def ids(self) -> set[str]:
        """The ids the namespace holds in this granularity."""
        ...

    def scores(self, query: str) -> dict[str, float]:
        """The keyword score of every document that shares a term with ``query``."""
        ...

    def distinct(self, key: str, limit: int = 64) -> list[Any]:
        """Distinct values of a metadata field, last-written documents first."""
        ...

    def latest(self) -> float | None:
        """The latest ``occurred_at`` (POSIX seconds), or None when empty."""
        ...

    def __len__(self) -> int: ...

    def __contains__(self, record_id: object) -> bool: ...


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
        **options: Unpack[GetOptions],
    ) -> list[MemoryRecord]:
        """Return records by id and/or filter (:class:`GetOptions`)."""
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
        **options: Unpack[SupersedeOptions],
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
        **scope: Unpack[Scope],
    ) -> int:
        """Delete records by id and/or filter (:class:`Scope`); return how many were deleted."""
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

    def search_many(self, request: SearchRequest) -> SearchAnswer:
        """Every ranking of ``request``: each granularity, plain and in each channel.

        Each ranking is what :meth:`search` returns for it. A store answers the whole
        request at once; this default, for a store that subclasses the protocol, calls
        :meth:`search` once per ranking.
        """
        answer: SearchAnswer = {}
        for s in request.searches():
            hits = self.search(
                s.query,
                s.granularity,
                request.namespace,
                k=s.k,
                window=s.window,
                where=s.where,
                mode=request.mode,
            )
            answer.setdefault(s.granularity.value, {})[s.channel] = hits
        return answer

    def vectors(
        self, granularity: Granularity | str, namespace: str, ids: Sequence[str]
    ) -> dict[str, list[float]]:
        """Return the stored embedding of each record id that exists in ``namespace``."""
        ...

    def lexical_index(self, granularity: Granularity | str, namespace: str) -> LexicalView:
        """Return the keyword index of one granularity and namespace, up to date."""
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
