"""``LaminaStore``: a LangGraph ``BaseStore`` over a lamina store.

Use it wherever LangGraph takes a store: ``graph.compile(store=...)``, ``get_store()``
inside a node, LangMem's memory tools. A ``put`` stores the value verbatim as a lamina
raw record (no LLM call); a ``search`` with a query ranks with lamina's hybrid (dense +
BM25, RRF-fused) search, or dense search alone with ``search_mode="dense"``, and scores
each hit by its cosine similarity to the query, as LangGraph's stores do; filters work on
the value's fields. Each namespace tuple maps to its own lamina namespace, so every
read and write is scoped to it.

Example:
    ```python
    store = LaminaStore(ChromaMemoryStore.persistent(".lamina/chroma"))
    graph = builder.compile(store=store)
    ```
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, get_args

from langgraph.store.base import (
    BaseStore,
    GetOp,
    IndexConfig,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchOp,
    TTLConfig,
)

from ..errors import InvalidInputError, InvalidTypeError
from ..records.model import (
    Granularity,
    MemoryRecord,
    require_encodable,
    utc_now,
    validate_namespace,
)
from ..stores.base import MemoryStore, SearchMode
from .store_ingest import Ingestor, add_conversation, check_ingestor, conversation
from .store_items import (
    ITEM,
    ITEMS,
    KEY,
    ROLE,
    IndexPaths,
    check_filter,
    dump_value,
    fields_of,
    index_paths,
    item_id,
    item_records,
    item_texts,
    registry_id,
    registry_record,
)
from .store_namespace import check_labels, check_writable, to_lamina
from .store_ops import check_depth, check_key, check_page, index_config, listed
from .store_reads import ItemReads
from .store_scores import QuerySimilarity
from .store_ttl import check_ttl, check_ttl_config, expiry

RAW = Granularity.RAW


@dataclass(frozen=True)
class _Put:
    """A validated write: ``text`` None deletes the item."""

    labels: tuple[str, ...]
    key: str
    value: dict[str, Any] | None
    text: str | None
    paths: IndexPaths
    turns: list[dict[str, str]] | None = None
    """The conversation to ingest, when the store ingests and the value has one."""
    ttl: float | None = None
    """Minutes the item lives after this write (None: no expiry)."""


class LaminaStore(ItemReads, BaseStore):
    """A LangGraph ``BaseStore`` whose items live in a lamina :class:`MemoryStore`.

    Every item is one raw record in the lamina namespace ``"<root>/<labels...>"``
    (see :meth:`lamina_namespace`); its indexed fields are embedded by the lamina
    store's own embeddings. Reads in a batch see the store as it was before the batch's
    writes, and the last write to a key in a batch wins, as in LangGraph's stores.
    Item TTLs work as in LangGraph's stores (:mod:`~lamina.integrations.store_ttl`).
    """

    supports_ttl = True

    def __init__(
        self,
        store: MemoryStore,
        *,
        index: IndexConfig | None = None,
        root: str = "lg",
        search_mode: SearchMode = "hybrid",
        ingest: Ingestor | None = None,
        ttl: TTLConfig | None = None,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        """Wrap a lamina store.

        Args:
            store: The lamina store the items live in (e.g. ``ChromaMemoryStore``).
            index: LangGraph's index config. ``fields`` (default ``["$"]``, the whole
                value) says what is embedded. Embeddings come from ``store``; an
                ``embed`` given here must be that same object.
            root: The lamina namespace every tuple is mapped under.
            search_mode: How a search with a query ranks items: ``"hybrid"`` (dense +
                BM25, RRF-fused) or ``"dense"``. In both, a hit's ``score`` is its cosine
                similarity to the query, as in LangGraph's stores (1.0 for identical
                text; see :mod:`~lamina.integrations.store_scores`).
            ingest: A ``Memory`` over the same store. A put whose value has a
                ``messages`` list is then also added to it (see
                :mod:`~lamina.integrations.store_ingest`), so its facts, episodes
                and scenes are built. Default: values are stored verbatim only.
            ttl: LangGraph's ``TTLConfig`` (``default_ttl`` and ``sweep_interval_minutes``
                in minutes, ``refresh_on_read``, ``omit_expired``). Default: items
                expire only when a put gives a ``ttl``.
            clock: The time TTLs are counted in (tests pass a fake one).

        Raises:
            InvalidTypeError: if ``store`` is not a lamina store or ``index`` is no dict.
            InvalidInputError: for an unknown ``search_mode``, bad ``fields``, or an
                ``embed`` other than the store's embeddings.
            NamespaceError: if ``root`` is not a valid lamina namespace.
        """
        if not isinstance(store, MemoryStore):
            raise InvalidTypeError(
                "store must be a lamina MemoryStore such as ChromaMemoryStore.persistent(...), "
                f"got {type(store).__name__}"
            )
        if search_mode not in get_args(SearchMode):
            raise InvalidInputError(
                f"search_mode must be one of {get_args(SearchMode)}, got {search_mode!r}"
            )
        self.store = store
        self.root = validate_namespace(root)
        self.registry = f"{self.root}.namespaces"
        self.search_mode: SearchMode = search_mode
        self.index_config, self._paths = index_config(store, index)
        self.ingest = check_ingestor(ingest, store)
        embeddings = getattr(store, "embeddings", None)
        self._similarity = QuerySimilarity(embeddings) if embeddings is not None else None
        self._lock = threading.RLock()
        self.ttl_config = check_ttl_config(ttl)
        self._clock = clock
        self._read_items: dict[tuple[tuple[str, ...], str], MemoryRecord] = {}

    def lamina_namespace(self, namespace: tuple[str, ...]) -> str:
        """The lamina namespace holding the items of a LangGraph namespace.

        Pass it to ``Memory`` or :class:`LaminaRetriever` to read the same records.
        """
        return to_lamina(self.root, check_writable(namespace))

    # ----------------------------------------------------------------- batch
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run Get, Search, ListNamespaces and Put ops; one result per op, in order.

        Every op is validated before anything runs, so a bad write (a value JSON cannot
        hold, a bad namespace) fails the batch with nothing written.
        """
        ops = list(ops)
        puts = self._validated(ops)
        results: list[Result] = [None] * len(ops)
        with self._lock:
            spaces: list[tuple[str, ...]] | None = None
            now = self._clock()
            for n, op in enumerate(ops):
                self._read_items.clear()
                if isinstance(op, GetOp):
                    results[n] = self._get(op, now)
                    self._refreshed(op.refresh_ttl, [results[n]], now)
                elif isinstance(op, SearchOp):
                    spaces = self._namespaces() if spaces is None else spaces
                    results[n] = self._search(op, spaces, now)
                    self._refreshed(op.refresh_ttl, results[n], now)
                elif isinstance(op, ListNamespacesOp):
                    spaces = self._namespaces() if spaces is None else spaces
                    results[n] = listed(op, self._live_namespaces(spaces, now))
            self._read_items.clear()
            by_space: dict[tuple[str, ...], dict[str, _Put]] = {}
            for put in puts:  # the last write to a key wins
                by_space.setdefault(put.labels, {})[put.key] = put
            for labels, latest in by_space.items():
                self._write(labels, list(latest.values()))
        if self.ingest is not None:  # after the verbatim writes, outside the lock
            for latest in by_space.values():
                for put in latest.values():
                    if put.turns:
                        namespace = to_lamina(self.root, put.labels)
                        add_conversation(self.ingest, namespace, put.key, put.turns)
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Async :meth:`batch` (the lamina store is synchronous; it runs in a thread)."""
        return await asyncio.to_thread(self.batch, list(ops))

    def _validated(self, ops: list[Op]) -> list[_Put]:
        puts: list[_Put] = []
        for op in ops:
            if isinstance(op, GetOp):
                check_labels(op.namespace)
                check_key(op.key)
            elif isinstance(op, SearchOp):
                check_labels(op.namespace_prefix, what="namespace_prefix")
                check_filter(op.filter)
                if op.query is not None and not isinstance(op.query, str):
                    raise InvalidTypeError(
                        f"a search query must be a str or None, got {type(op.query).__name__}"
                    )
                if isinstance(op.query, str):
                    require_encodable("query", op.query)
                check_page(op.limit, op.offset)
            elif isinstance(op, ListNamespacesOp):
                for condition in op.match_conditions or ():
                    check_labels(condition.path, what=f"{condition.match_type} condition")
                check_page(op.limit, op.offset)
                check_depth(op.max_depth)
            elif isinstance(op, PutOp):
                puts.append(self._checked_put(op))
            else:
                raise InvalidInputError(
                    f"unknown store operation {type(op).__name__}; use GetOp, PutOp, SearchOp "
                    "or ListNamespacesOp"
                )
        return puts

    def _checked_put(self, op: PutOp) -> _Put:
        labels = check_writable(op.namespace)
        to_lamina(self.root, labels)
        check_key(op.key)
        ttl = check_ttl(op.ttl)
        if op.value is None:
            return _Put(labels, op.key, None, None, [])
        text = dump_value(op.value)
        if op.index is False:
            paths: IndexPaths = []
        elif op.index is None:
            paths = self._paths
        elif isinstance(op.index, list):
            paths = index_paths(op.index)
        else:
            raise InvalidTypeError(
                f"index must be None, False or a list of field paths, got {op.index!r}"
            )
        turns = conversation(op.value) if self.ingest is not None else None
        return _Put(labels, op.key, dict(op.value), text, paths, turns, ttl)

    # ----------------------------------------------------------------- writes
    def _write(self, labels: tuple[str, ...], puts: list[_Put]) -> None:
        """Apply the latest writes to one namespace: items and fields first, then stale."""
        namespace = to_lamina(self.root, labels)
        keys = [put.key for put in puts]
        existing = {
            str(r.metadata[KEY]): r
            for r in self.store.get(RAW, namespace, [item_id(k) for k in keys])
            if r.metadata.get(ROLE) == ITEM
        }
        old_fields = self.store.get(RAW, namespace, where=fields_of(keys))
        now = self._clock()
        records = []
        for put in puts:
            if put.text is None or put.value is None:
                continue
            before = existing.get(put.key)
            item, *fields = item_records(
                namespace,
                put.key,
                put.text,
                item_texts(put.value, put.paths),
                created_at=before.occurred_at if before is not None else now,
                updated_at=now,
            )
            meta = {**item.metadata, **expiry(put.ttl, now)}
            records += [item.model_copy(update={"metadata": meta}), *fields]
        fresh = {r.id for r in records}
        stale = [r.id for r in old_fields if r.id not in fresh]
        stale += [item_id(p.key) for p in puts if p.text is None and p.key in existing]
        if records:
            if not self.store.get(RAW, self.registry, [registry_id(namespace)]):
                entry = registry_record(self.registry, namespace, labels, utc_now())
                self.store.add(self.registry, [entry])
            self.store.add(namespace, records)
        if stale:
            self.store.delete(RAW, namespace, stale)
            if not self.store.get(RAW, namespace, where=ITEMS, limit=1):
                self.store.delete(RAW, self.registry, [registry_id(namespace)])
