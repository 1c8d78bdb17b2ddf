"""How :class:`~lamina.integrations.LaminaStore` reads items: get, list and search.

An item is read from its record (:mod:`.store_items`); one a TTL hides is not read
(:mod:`.store_ttl`), and the records a read returned are kept for the op's TTL
refresh. A search ranks with the lamina store's own search and scores the page by
cosine similarity, as LangGraph's stores do (:mod:`.store_scores`).
"""

from __future__ import annotations

import threading
from datetime import datetime
from typing import Any

from langgraph.store.base import GetOp, Item, SearchItem, SearchOp

from ..records.model import Granularity, MemoryRecord
from ..stores.base import MemoryStore, SearchMode
from .store_items import (
    ITEMS,
    KEY,
    NAMESPACE,
    ROLE,
    VECTOR,
    VECTORS,
    check_filter,
    item_id,
    passes,
    registry_labels,
    to_item,
)
from .store_namespace import to_lamina
from .store_ops import search_hit
from .store_scores import QuerySimilarity, Ranked, page_scores
from .store_ttl import TTLMethods

RAW = Granularity.RAW
_FIRST_DEPTH = 10

__all__ = ["ItemReads"]


class ItemReads(TTLMethods):
    """Get, list and search, mixed into :class:`~lamina.integrations.LaminaStore`."""

    store: MemoryStore
    root: str
    registry: str
    search_mode: SearchMode
    _similarity: QuerySimilarity | None
    _lock: threading.RLock
    _read_items: dict[tuple[tuple[str, ...], str], MemoryRecord]

    def _item(self, record: MemoryRecord, labels: tuple[str, ...], now: datetime) -> Item | None:
        """The item a record holds, unless a TTL hides it; kept for a refresh."""
        item = None if self._hidden(record, now) else to_item(record, labels)
        if item is not None:
            self._read_items[(labels, item.key)] = record
        return item

    def _get(self, op: GetOp, now: datetime) -> Item | None:
        if not op.namespace:
            return None
        namespace = to_lamina(self.root, op.namespace)
        for record in self.store.get(RAW, namespace, [item_id(op.key)]):
            item = self._item(record, tuple(op.namespace), now)
            if item is not None and item.key == op.key:
                return item
        return None

    def _namespaces(self) -> list[tuple[str, ...]]:
        """Every namespace tuple that holds at least one item (from the registry)."""
        records = self.store.get(RAW, self.registry, where={f"metadata.{ROLE}": NAMESPACE})
        return [labels for labels in map(registry_labels, records) if labels is not None]

    def _search(
        self, op: SearchOp, spaces: list[tuple[str, ...]], now: datetime
    ) -> list[SearchItem]:
        """Ranked items first, then the unranked ones.

        The lamina search's order (hybrid or dense) decides which ranked items make the
        page; within the page they are ordered by their score, as LangGraph's stores
        return them (scores descending within each page).

        With a query only the items the vector search reaches are read (about twice
        the page, whatever the namespace's size). The whole namespace is read only when
        there is no query, or when fewer items than asked for are ranked (the unranked
        ones, items without vectors, then fill the page, oldest first, scored None).
        The ranked items of the page are scored by their similarity to the query.
        """
        prefix = tuple(op.namespace_prefix)
        flt = check_filter(op.filter)
        chosen = sorted(ns for ns in spaces if ns[: len(prefix)] == prefix)
        query = op.query.strip() if isinstance(op.query, str) else ""
        need = op.offset + op.limit
        scored: list[Ranked] = []
        ranked_keys: dict[tuple[str, ...], set[str]] = {}
        for labels in chosen if query else ():
            ranked = self._ranked(labels, query, flt, need, now)
            scored.extend(ranked)
            ranked_keys[labels] = {r.item.key for r in ranked}
        unscored: list[Item] = []
        if len(scored) < need:
            for labels in chosen:  # every item of the namespace
                skip = ranked_keys.get(labels, set())
                for record in self.store.get(RAW, to_lamina(self.root, labels), where=ITEMS):
                    item = self._item(record, labels, now)
                    if item is not None and item.key not in skip and passes(item.value, flt):
                        unscored.append(item)
        scored.sort(key=lambda r: -r.rank)  # across namespaces, by the search's own score
        unscored.sort(key=lambda i: i.created_at)
        page = scored[op.offset : need]
        scores = page_scores(self._similarity, self.store, self.root, query, page)
        hits = [search_hit(r.item, score) for r, score in zip(page, scores, strict=True)]
        hits.sort(key=lambda hit: -(hit.score or 0.0))  # stable: ties keep the search's order
        rest = max(0, op.offset - len(scored))
        return hits + [search_hit(i, None) for i in unscored[rest : rest + op.limit - len(hits)]]

    def _ranked(
        self, labels: tuple[str, ...], query: str, flt: dict[str, Any], need: int, now: datetime
    ) -> list[Ranked]:
        """The items that pass ``flt``, ranked by their best vector.

        The lamina search is deepened until ``need`` items are ranked or no vector is
        left; only the items its hits name are read.
        """
        namespace = to_lamina(self.root, labels)
        found: dict[str, tuple[Item, bool, int] | None] = {}  # None: gone or filtered out
        best: dict[str, float] = {}
        depth = max(_FIRST_DEPTH, 2 * need)
        by_dense = self.search_mode == "dense"
        while True:
            hits = self.store.search(
                query, RAW, namespace, k=depth, where={f"metadata.{VECTOR}": True},
                mode=self.search_mode,
            )  # fmt: skip
            keys = [str(h.record.metadata.get(KEY)) for h in hits]
            found |= self._read(namespace, labels, [k for k in keys if k not in found], flt, now)
            for key, hit in zip(keys, hits, strict=True):  # best first: a key's first is best
                if found.get(key) is not None and key not in best:  # ranked by its search score
                    score = hit.channel_scores.get("dense", hit.score) if by_dense else hit.score
                    best[key] = float(score)
            if len(best) >= need or len(hits) < depth:
                break
            depth *= 4
        return [Ranked(rank, *entry) for key, rank in best.items() if (entry := found[key])]

    def _read(
        self,
        namespace: str,
        labels: tuple[str, ...],
        keys: list[str],
        flt: dict[str, Any],
        now: datetime,
    ) -> dict[str, tuple[Item, bool, int] | None]:
        """The items of ``keys`` that exist and pass ``flt``; None for the others.

        Each comes with its whole-value flag and its number of indexed-field records.
        """
        out: dict[str, tuple[Item, bool, int] | None] = dict.fromkeys(keys)
        if keys:
            ids = sorted({item_id(k) for k in keys})
            for record in self.store.get(RAW, namespace, ids):
                item = self._item(record, labels, now)
                if item is not None and item.key in out and passes(item.value, flt):
                    whole = bool(record.metadata.get(VECTOR))
                    count = record.metadata.get(VECTORS)
                    fields = int(count) - whole if isinstance(count, int) else 1
                    out[item.key] = (item, whole, fields)
        return out
