"""The seam between :class:`~lamina.stores.chroma.ChromaMemoryStore` and its search engine.

The store tells a :class:`KeywordIndex` of each write and each deleted namespace, and asks
it for the up-to-date :class:`RankedIndex` of a namespace's granularities, which a search
(:func:`~lamina.stores.search.search_mirror`) and the HNSW fallback (:mod:`.hnsw`) read.
:class:`~lamina.stores.mirrors.MirrorCache` is the implementation; another engine plugs in
through ``ChromaMemoryStore(keyword_index=...)`` (see docs/concepts/storage.md, "The seam").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from chromadb.api.models.Collection import Collection
from langchain_core.embeddings import Embeddings

from ..records.model import Granularity, MemoryRecord
from .bm25 import BM25Index, LexicalHit
from .changelog import ChangeLog
from .chroma_calls import ChromaCalls
from .filters import SearchFilter
from .indexing import IndexTextPolicy
from .journal import Journals
from .lexical import Analyzer
from .mirror import WriteEvent


class RankedIndex(Protocol):
    """One namespace and granularity as a search ranks it: filter, both channels, records."""

    granularity: Granularity
    has_vectors: bool
    """False: the dense channel is left to Chroma's HNSW index."""

    @property
    def lock(self) -> AbstractContextManager[Any]:
        """Held while one search reads the index (filter, channels, records together)."""
        ...

    def allowed(self, flt: SearchFilter) -> np.ndarray:
        """A boolean mask over the index's slots: the records ``flt`` lets through."""
        ...

    def window_ids(self, allowed: np.ndarray) -> list[str]:
        """The record ids of the allowed slots."""
        ...

    def dense(self, query: Sequence[float], k: int, allowed: np.ndarray) -> list[tuple[str, float]]:
        """The ``k`` allowed records nearest to ``query``: (id, cosine similarity)."""
        ...

    def search(self, query: str, k: int, *, allowed: np.ndarray | None = None) -> list[LexicalHit]:
        """The ``k`` best allowed records by BM25."""
        ...

    def record(self, record_id: str) -> MemoryRecord | None:
        """The record with that id, or None."""
        ...


@dataclass(frozen=True)
class KeywordSources:
    """What a ``ChromaMemoryStore`` hands its keyword index.

    Where the records live and how they were written: its collections, their change log
    and journals, its embeddings, index text policy and analyzer.
    """

    collections: dict[Granularity, Collection]
    calls: ChromaCalls
    changelog: ChangeLog
    embeddings: Embeddings
    policy: IndexTextPolicy
    analyzer: Analyzer
    journals: Journals | None


class KeywordIndex(Protocol):
    """The search engine behind a ``ChromaMemoryStore``: told of writes, asked for indexes."""

    def applied(self, write: WriteEvent) -> None:
        """The store's own write, after it claimed its change-log slot."""
        ...

    def drop(self, gran: Granularity, namespace: str) -> None:
        """The namespace's records of ``gran`` were all deleted."""
        ...

    def get(self, gran: Granularity, namespace: str) -> BM25Index:
        """The namespace's index of ``gran``, up to date with every process's writes."""
        ...

    def get_many(
        self, grans: Sequence[Granularity], namespace: str
    ) -> Mapping[Granularity, RankedIndex]:
        """Several granularities' indexes of a namespace, brought up to date together."""
        ...

    def load(self, gran: Granularity, namespace: str) -> BM25Index:
        """An index built from Chroma alone, not cached (to compare with the live one)."""
        ...

    def clear(self) -> None:
        """Forget every index held in memory; each is rebuilt on next use."""
        ...


KeywordIndexFactory = Callable[[KeywordSources], KeywordIndex]
"""Builds a store's keyword index from its sources (``ChromaMemoryStore(keyword_index=)``)."""


__all__ = ["KeywordIndex", "KeywordIndexFactory", "KeywordSources", "RankedIndex"]
