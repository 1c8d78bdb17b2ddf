"""A reranking stage over the fused top-N of a store's search (off unless you wrap a store).

A cross-encoder reads the query and each candidate together, so it can rank better than
the fused dense + BM25 order, at a cost per candidate. :func:`rerank_hits` re-orders the
head of a ranked list; :class:`RerankingStore` wraps any
:class:`~lamina.stores.base.MemoryStore` so every ``search`` (the recall graph's
included) goes through it::

    store = RerankingStore(ChromaMemoryStore.persistent(path), OnnxCrossEncoder(model_dir))

With ``adaptive_margin`` set, a search whose fused top hit already leads the second by
that relative margin is not reranked (the cost is paid only when the top is close).

A reranker that fails degrades the search to the fused order (logged and counted); it
never fails the search or touches what is stored.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Protocol, runtime_checkable

from ..errors import InvalidInputError
from ..records.model import EpisodeRecord, FactRecord, MemoryRecord, RawTurn, SceneRecord
from .base import MemoryStore, ScoredRecord, SearchAnswer, SearchRequest
from .search import checked_searches
from .wrapping import WrappedStore

logger = logging.getLogger(__name__)

RERANK_CHANNEL = "rerank"
"""Key of the reranker's rank and score in ``ScoredRecord.ranks`` / ``channel_scores``."""


@runtime_checkable
class Reranker(Protocol):
    """Scores (query, passage) pairs; higher is more relevant. Any scale; only order counts."""

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        """Return one relevance score per passage, in the passages' order."""
        ...


@dataclass(frozen=True, kw_only=True)
class RerankConfig:
    """How much of a ranked list is reranked, and when."""

    top_n: int = 30
    """Fused hits the reranker scores; a search asks the store for at least this many."""
    adaptive_margin: float | None = None
    """Skip reranking when ``(top1 - top2) / top1`` of the fused scores is at least this
    (None: always rerank)."""

    def __post_init__(self) -> None:
        if not isinstance(self.top_n, int) or self.top_n < 2:
            raise InvalidInputError(f"top_n must be an int >= 2, got {self.top_n!r}")
        if self.adaptive_margin is not None and not 0 < self.adaptive_margin <= 1:
            raise InvalidInputError(
                f"adaptive_margin must be in (0, 1] or None, got {self.adaptive_margin!r}"
            )


def passage_text(record: MemoryRecord) -> str:
    """The text a reranker reads for ``record``: who said it, what, and any caption."""
    if isinstance(record, RawTurn):
        caption = f" [image: {record.media_caption}]" if record.media_caption else ""
        return f"{record.speaker}: {record.display_text()}{caption}"
    if isinstance(record, EpisodeRecord | SceneRecord):
        return f"{record.title}. {record.text}" if record.title else record.text
    if isinstance(record, FactRecord) and record.subject:
        text = record.text
        if text.lower().startswith(record.subject.lower()):
            return text
        return f"{record.subject}: {text}"
    return record.display_text()


def confident(hits: Sequence[ScoredRecord], margin: float | None) -> bool:
    """True when the fused top hit leads the second by at least ``margin`` (relative)."""
    if margin is None or len(hits) < 2 or hits[0].score <= 0:
        return False
    return (hits[0].score - hits[1].score) / hits[0].score >= margin


def rerank_hits(
    query: str, hits: Sequence[ScoredRecord], reranker: Reranker, config: RerankConfig
) -> list[ScoredRecord]:
    """Re-order the first ``config.top_n`` hits by the reranker; the tail keeps its order.

    Each reranked hit keeps its fused ``score`` and gains ``ranks["rerank"]`` and
    ``channel_scores["rerank"]``; ties keep the fused order.

    Raises:
        ValueError: the reranker returned a different number of scores than passages.
    """
    head, tail = list(hits[: config.top_n]), list(hits[config.top_n :])
    if len(head) < 2 or confident(head, config.adaptive_margin):
        return list(hits)
    scores = [float(s) for s in reranker.score(query, [passage_text(h.record) for h in head])]
    if len(scores) != len(head):
        raise ValueError(f"the reranker returned {len(scores)} scores for {len(head)} passages")
    order = sorted(range(len(head)), key=lambda i: (-scores[i], i))
    out = [
        replace(
            head[i],
            ranks={**head[i].ranks, RERANK_CHANNEL: rank},
            channel_scores={**head[i].channel_scores, RERANK_CHANNEL: scores[i]},
        )
        for rank, i in enumerate(order, start=1)
    ]
    return out + tail


class RerankingStore(WrappedStore):
    """A :class:`MemoryStore` whose searches rerank the inner store's fused top-N.

    Every other call goes to the inner store unchanged (store-specific methods too).
    """

    def __init__(
        self, inner: MemoryStore, reranker: Reranker, config: RerankConfig | None = None
    ) -> None:
        if not isinstance(reranker, Reranker):
            raise InvalidInputError(
                f"reranker must have a score(query, passages) method, got {type(reranker).__name__}"
            )
        super().__init__(inner)
        self.reranker = reranker
        self.config = config or RerankConfig()
        self.failures = 0
        """Rankings that fell back to the fused order because the reranker failed."""
        self.reranked = 0
        """Rankings the reranker re-ordered."""

    def search_many(self, request: SearchRequest) -> SearchAnswer:
        """The inner store's answer at depth ``max(k, top_n)``, each head reranked, cut to ``k``.

        Each ranking is reranked for its own query; ``search`` asks for one ranking.
        """
        searches, _ = checked_searches(request)  # the reranker reads the queries too
        top = self.config.top_n
        rankings = {g: replace(r, k=max(r.k, top)) for g, r in request.rankings.items()}
        answer = self.inner.search_many(replace(request, rankings=rankings))
        out: SearchAnswer = {}
        for s in searches:
            hits = answer[s.granularity.value][s.channel]
            out.setdefault(s.granularity.value, {})[s.channel] = self._reranked(s.query, hits, s.k)
        return out

    def _reranked(self, query: str, hits: list[ScoredRecord], k: int) -> list[ScoredRecord]:
        try:
            ranked = rerank_hits(query, hits, self.reranker, self.config)
        except Exception as e:  # a broken reranker must not fail retrieval
            self.failures += 1
            logger.warning("reranker failed (%s); using the fused order", e)
            return hits[:k]
        if ranked and RERANK_CHANNEL in ranked[0].ranks:
            self.reranked += 1
        return ranked[:k]
