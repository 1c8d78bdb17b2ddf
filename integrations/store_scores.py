"""The ``score`` of a :class:`LaminaStore` search hit: its similarity to the query.

A search with a query ranks items with lamina's search (hybrid, dense + BM25 fused with
RRF, or dense), but each hit's ``score`` is what LangGraph documents and
``InMemoryStore`` computes: the cosine similarity of the query's embedding and the
embedding of the item's best indexed text (max pooling over its vectors), so a text
identical to the query scores 1.0 and a threshold on ``score`` means what it means on
LangGraph's own stores. The texts are the ones LangGraph embeds: the value as
``json.dumps(value, sort_keys=True, ensure_ascii=False)`` for the whole value (``"$"``),
else each indexed field's text. They are embedded with the lamina store's own embeddings
(documents with ``embed_documents``, the query with ``embed_query``, as
``InMemoryStore`` does) and kept in a bounded cache, so a repeated search embeds only
its query; the rank fusion's own scores never reach the caller.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from langgraph.store.base import Item, get_text_at_path

from ..records.model import Granularity
from ..stores.base import MemoryStore
from .store_items import KEY, WHOLE, fields_of
from .store_namespace import to_lamina

CACHE_SIZE = 4096
"""Texts whose embedding is kept (the oldest used is dropped first)."""


@dataclass(frozen=True)
class Ranked:
    """An item a query search ranked: its rank key (the lamina search's score) and vectors."""

    rank: float
    item: Item
    whole: bool
    """The whole value is one of the item's vectors."""
    fields: int
    """How many indexed-field records the item has."""


def page_scores(
    similarity: QuerySimilarity | None,
    store: MemoryStore,
    root: str,
    query: str,
    page: Sequence[Ranked],
) -> list[float | None]:
    """Each ranked item's cosine similarity to the query (max over its vectors).

    A lamina store without ``embeddings`` (``similarity`` None) cannot embed the texts:
    its hits keep the search's own score.
    """
    if similarity is None or not page:
        return [r.rank for r in page]
    fields = field_texts(store, root, [r for r in page if r.fields])
    texts = [
        ([get_text_at_path(r.item.value, WHOLE)[0]] if r.whole else [])  # as LangGraph does
        + fields.get((r.item.namespace, r.item.key), [])
        for r in page
    ]
    return similarity.best(query, texts)


def field_texts(
    store: MemoryStore, root: str, page: Sequence[Ranked]
) -> dict[tuple[tuple[str, ...], str], list[str]]:
    """The indexed-field texts of ``page``'s items: one read per namespace."""
    keys: dict[tuple[str, ...], list[str]] = {}
    for r in page:
        keys.setdefault(r.item.namespace, []).append(r.item.key)
    out: dict[tuple[tuple[str, ...], str], list[str]] = {}
    for labels, wanted in keys.items():
        namespace = to_lamina(root, labels)
        for record in store.get(Granularity.RAW, namespace, where=fields_of(wanted)):
            out.setdefault((labels, str(record.metadata[KEY])), []).append(record.text)
    return out


class QuerySimilarity:
    """Cosine similarities of a query and items' texts, with the texts' embeddings cached.

    Args:
        embeddings: The lamina store's embeddings (a LangChain ``Embeddings``).
    """

    def __init__(self, embeddings: Any) -> None:
        self.embeddings = embeddings
        self._cache: OrderedDict[str, np.ndarray[Any, Any]] = OrderedDict()
        self._lock = threading.Lock()

    def best(self, query: str, items: Sequence[Sequence[str]]) -> list[float | None]:
        """For each item's texts, the best cosine similarity with ``query``.

        An item with no text gets None. Vectors of norm zero score 0.0, as in
        ``InMemoryStore``.
        """
        if not any(items):
            return [None] * len(items)
        q = _unit(self.embeddings.embed_query(query))
        vectors = self._vectors({t for texts in items for t in texts})
        return [
            max(float(np.dot(q, vectors[t])) for t in texts) if texts else None for texts in items
        ]

    def _vectors(self, texts: set[str]) -> dict[str, np.ndarray[Any, Any]]:
        with self._lock:
            known = {t: self._cache[t] for t in texts if t in self._cache}
            for t in known:
                self._cache.move_to_end(t)
        missing = sorted(texts - known.keys())
        if missing:
            fresh = [_unit(v) for v in self.embeddings.embed_documents(missing)]
            with self._lock:
                for text, vector in zip(missing, fresh, strict=True):
                    self._cache[text] = vector
                    known[text] = vector
                while len(self._cache) > CACHE_SIZE:
                    self._cache.popitem(last=False)
        return known


def _unit(vector: Sequence[float]) -> np.ndarray[Any, Any]:
    array = np.asarray(vector, dtype=np.float64)
    norm = float(np.linalg.norm(array))
    return array / norm if norm > 0 else np.zeros_like(array)
