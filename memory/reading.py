"""The read side of :class:`~lamina.Memory`: search, get_all, history, profile, inspect.

None of these calls an LLM. Every one reads a single namespace.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime

import numpy as np

from ..agents.common.names import with_speaker_names
from ..config import MemoryConfig
from ..errors import InvalidInputError, InvalidTypeError
from ..records.audit import AuditEntry
from ..records.model import MemoryRecord, ProfileRecord, parse_granularity
from ..stores.base import ScoredRecord
from ..stores.chroma import ChromaMemoryStore
from ..stores.filters import TimeWindow
from .filters import parse_filters, require_threshold
from .forget import history_of
from .hits import ALL_GRANULARITIES, merge_hits, visible_at
from .inputs import (
    ROLE_SPEAKERS,
    require_aware,
    require_namespace,
    require_positive_int,
    require_query,
    require_text,
    require_window,
    type_name,
)
from .lookup import known_ids, not_found
from .results import MemoryHit
from .twins import in_thread


def granularities_of(granularities: object) -> list[str]:
    """The granularities asked for (default all four), validated, without repeats."""
    if isinstance(granularities, str):
        granularities = [granularities]
    if granularities is not None and not isinstance(granularities, Sequence):
        raise InvalidTypeError(
            "granularities must be a list of 'raw', 'fact', 'episode', 'scene' or None, "
            f"got {type_name(granularities)}"
        )
    grans = [parse_granularity(g).value for g in (granularities or ALL_GRANULARITIES)]
    if not grans:
        raise InvalidInputError("granularities must name at least one granularity")
    return list(dict.fromkeys(grans))


DEFAULT_K = 10
"""Hits a search returns when neither ``k`` nor ``top_k`` is given."""


def _limit(k: object, top_k: object) -> int:
    """``k``, or mem0's ``top_k`` when given instead (default :data:`DEFAULT_K`)."""
    if k is not None and top_k is not None:
        raise InvalidInputError(f"give k or top_k, not both (got k={k!r}, top_k={top_k!r})")
    if top_k is not None:
        return require_positive_int("top_k", top_k)
    return DEFAULT_K if k is None else require_positive_int("k", k)


class ReadMethods:
    """Search, get_all, history, profile and inspect, mixed into :class:`~lamina.Memory`."""

    store: ChromaMemoryStore
    config: MemoryConfig

    def search(
        self,
        query: str,
        *,
        namespace: str,
        k: int | None = None,
        granularities: Sequence[str] | None = None,
        window: TimeWindow | None = None,
        as_of: datetime | None = None,
        filters: Mapping[str, object] | None = None,
        top_k: int | None = None,
        threshold: float | None = None,
    ) -> list[MemoryHit]:
        """Hybrid search over the granularities (default all four); no LLM is used.

        Facts are current ones only, unless ``as_of`` asks for what held at that time.
        A namespace with no memories gives an empty list. A speaker the query names by a
        nickname, short form or other spelling ("Kate", "Max", "Jose") is also searched
        for by their label ("Katherine", "Maxine", "José").

        Args:
            query: What to look for.
            namespace: The scope searched.
            k: How many hits at most (default 10).
            granularities: Any of raw, fact, episode, scene (default all).
            window: Only memories that happened in this time window.
            as_of: What memory held at that time (superseded facts included).
            filters: Metadata conditions and an ``occurred_at`` time range; see
                :mod:`lamina.memory.filters`. Only memories carrying the metadata
                match, which are the raw turns it was added with.
            top_k: mem0's name for ``k``; give one of the two.
            threshold: Minimum cosine similarity (0-1) of query and memory.
        """
        require_query("query", query)
        require_namespace(namespace)
        k = _limit(k, top_k)
        require_window(window)
        require_aware("as_of", as_of)
        parsed = parse_filters(filters)
        window = parsed.with_window(window)
        minimum = require_threshold(threshold)
        query = self._with_speaker_names(query, namespace)
        found: dict[str, list[ScoredRecord]] = {}
        for gran in granularities_of(granularities):
            current = {"superseded": False} if gran == "fact" and as_of is None else None
            where = parsed.store_where(current)
            hits = self.store.search(query, gran, namespace, k=k, window=window, where=where)
            hits = [h for h in hits if visible_at(h, as_of)]
            if minimum is not None:
                hits = self._similar(query, gran, namespace, hits)
                hits = [h for h in hits if h.channel_scores.get("dense", -1.0) >= minimum]
            found[gran] = hits
        return merge_hits(found, k)

    def _with_speaker_names(self, query: str, namespace: str) -> str:
        """The query with the speakers it names by a nickname or short form spelled out.

        "Where did Kate go hiking?" also searches for the speaker "Katherine", as her turns
        and the memories about her write it.
        """
        speakers = self.store.lexical_index("raw", namespace).distinct("speaker")
        names = [s for s in speakers if isinstance(s, str) and s not in ROLE_SPEAKERS]
        return with_speaker_names(query, names)

    def _similar(
        self, query: str, gran: str, namespace: str, hits: list[ScoredRecord]
    ) -> list[ScoredRecord]:
        """``hits`` with the query's cosine similarity filled in where the search had none."""
        missing = [h.record.id for h in hits if "dense" not in h.channel_scores]
        if not missing:
            return hits
        vectors = self.store.vectors(gran, namespace, missing)
        q = np.asarray(self.store.embeddings.embed_query(query), dtype=float)
        out = []
        for hit in hits:
            vector = vectors.get(hit.record.id)
            if "dense" not in hit.channel_scores and vector is not None:
                v = np.asarray(vector, dtype=float)
                cos = float(q @ v / ((np.linalg.norm(q) * np.linalg.norm(v)) or 1.0))
                hit = replace(hit, channel_scores={**hit.channel_scores, "dense": cos})
            out.append(hit)
        return out

    asearch = in_thread(search)

    def get_all(
        self,
        *,
        namespace: str,
        filters: Mapping[str, object] | None = None,
        granularities: Sequence[str] | None = None,
        limit: int | None = None,
    ) -> list[MemoryRecord]:
        """Every current memory of ``namespace`` that passes ``filters``, oldest first.

        Superseded facts are left out (:meth:`history` shows them). No LLM is used.

        Args:
            namespace: The scope listed.
            filters: Metadata conditions and an ``occurred_at`` time range, as in
                :meth:`search`.
            granularities: Any of raw, fact, episode, scene (default all).
            limit: Keep only the ``limit`` most recent.
        """
        require_namespace(namespace)
        if limit is not None:
            require_positive_int("limit", limit)
        parsed = parse_filters(filters)
        order = {g: n for n, g in enumerate(ALL_GRANULARITIES)}
        records: list[MemoryRecord] = []
        for gran in granularities_of(granularities):
            where = parsed.store_where({"superseded": False} if gran == "fact" else None)
            records += self.store.get(gran, namespace, window=parsed.window, where=where)
        records.sort(key=lambda r: (r.occurred_at, order[r.granularity.value], r.id))
        return records[-limit:] if limit is not None else records

    aget_all = in_thread(get_all)

    def history(self, memory_id: str, *, namespace: str) -> list[AuditEntry]:
        """The audit entries of a memory, with its facts' supersession chain, oldest first.

        A stored memory that never changed has an empty history; a forgotten one keeps
        its tombstone.

        Raises:
            RecordNotFoundError: ``memory_id`` names no memory of ``namespace``, stored
                or forgotten.
        """
        require_text("memory_id", memory_id)
        require_namespace(namespace)
        entries = history_of(self.store, namespace, memory_id)
        if not entries and not known_ids(self.store, namespace, [memory_id]):
            raise not_found(namespace, [memory_id])
        return entries

    ahistory = in_thread(history)

    def profile(self, *, namespace: str) -> ProfileRecord | None:
        """The namespace's profile (distilled from scene summaries), or None."""
        return self.store.get_profile(require_namespace(namespace))

    aprofile = in_thread(profile)

    def inspect(
        self, *, namespace: str, granularity: str | None = None, limit: int = 50
    ) -> dict[str, list[MemoryRecord]]:
        """The most recent ``limit`` records per granularity (or of one), oldest first."""
        require_namespace(namespace)
        require_positive_int("limit", limit)
        if granularity is not None:
            require_text("granularity", granularity)
        grans = [parse_granularity(granularity).value] if granularity else ALL_GRANULARITIES
        return {g: self.store.get(g, namespace)[-limit:] for g in grans}
