"""``ChromaMemoryStore``: four Chroma collections, searched through per-namespace mirrors.

Chroma is the one source of truth. Searching a (granularity, namespace) pair loads its
mirror (BM25 postings beside exact dense vectors, :mod:`.mirror`, behind the
:mod:`.keyword` seam) from Chroma on first use; a change log in Chroma
(:mod:`.changelog`) tells every process which records any process changed since, so the
next search anywhere sees every write; a store alone on its folder skips it
(:mod:`.presence`). Client set-up: :mod:`.schema`; writes:
:mod:`.writes`; supersede with audit: :mod:`.audited`; search: :mod:`.search`.
"""

from __future__ import annotations

import threading
import uuid
import weakref
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

from chromadb.api import ClientAPI
from langchain_core.embeddings import Embeddings

from ..errors import RecordNotFoundError
from ..records.model import (
    FactRecord,
    Granularity,
    MemoryRecord,
    parse_granularity,
    validate_namespace,
)
from .arguments import (
    CheckedCalls,
    as_embeddings,
    as_ids,
    by_granularity,
    check_record,
    checked_records,
)
from .audited import Supersede, clear_pending, with_pending
from .base import Scope, SearchAnswer, SearchByRequest, SearchRequest
from .bm25 import BM25Index
from .changelog import ChangeLog
from .chroma_calls import ChromaCalls, describe_client
from .chroma_erasure import ChromaErasure
from .codec import from_metadata, row_id
from .filters import SearchFilter
from .fusion import FusionConfig
from .hnsw import hnsw_dense
from .indexing import IndexTextPolicy
from .journal import Journals, journals_for
from .keyed import KeyedDocuments, namespace_where
from .keyword import KeywordIndex, KeywordIndexFactory, KeywordSources
from .lexical import Analyzer
from .mirror import MirrorConfig
from .mirrors import MirrorCache
from .okapi import BM25Params
from .presence import Presence
from .profiles import ProfilesAndAudit
from .rows import PAGE, namespace_ids, rows_by_id
from .schema import (
    SCHEMA_VERSION,
    ephemeral_client,
    http_client,
    open_record_collections,
    persistent_client,
)
from .search import answer_request
from .traced import trace_store_calls
from .writes import Batch, WriteUnit, prepare, stored_vectors, unset_stale, upsert_page

__all__ = ["SCHEMA_VERSION", "ChromaMemoryStore"]


@trace_store_calls
class ChromaMemoryStore(CheckedCalls, SearchByRequest, ProfilesAndAudit, ChromaErasure):
    """A :class:`~lamina.stores.base.MemoryStore` over an injected Chroma client.

    ``bm25``, ``analyzer`` and ``mirrors`` configure its default search engine, the BM25
    mirror; ``keyword_index`` builds another one instead (:mod:`.keyword`).
    """

    def __init__(
        self,
        client: ClientAPI,
        *,
        embeddings: Embeddings | None = None,
        collection_prefix: str = "lamina",
        index_policy: IndexTextPolicy | None = None,
        fusion: FusionConfig | None = None,
        bm25: BM25Params | None = None,
        analyzer: Analyzer | None = None,
        mirrors: MirrorConfig | None = None,
        keyword_index: KeywordIndexFactory | None = None,
    ) -> None:
        self.client = client
        self.embeddings = embeddings = as_embeddings(embeddings)
        self.index_policy = index_policy or IndexTextPolicy()
        self.fusion = fusion or FusionConfig()
        self._lock = threading.RLock()
        self._calls = ChromaCalls(describe_client(client), self._lock)
        self._max_batch: int | None = None
        prefix, calls = collection_prefix, self._calls
        with calls.guard():
            self._collections = open_record_collections(
                client, prefix, embeddings, self.index_policy
            )
            self._profiles = KeyedDocuments(client, f"{prefix}_profile", SCHEMA_VERSION, calls)
            self._audit = KeyedDocuments(client, f"{prefix}_audit", SCHEMA_VERSION, calls)
            self._settings = KeyedDocuments(client, f"{prefix}_settings", SCHEMA_VERSION, calls)
            self._log = ChangeLog(client, f"{prefix}_changes", calls)
        self._hnsw = {g: partial(hnsw_dense, calls, c) for g, c in self._collections.items()}
        self._analyzer = analyzer or Analyzer()
        self._journals = journals_for(
            client, prefix, self._collections, self._log, self._analyzer, self.index_policy
        )
        self._log.presence = _register(self._journals)
        if self._log.presence is not None:
            weakref.finalize(self, self._log.presence.close)
        sources = KeywordSources(
            self._collections, self._calls, self._log, embeddings, self.index_policy,
            self._analyzer, self._journals,
        )  # fmt: skip
        build = keyword_index or partial(
            MirrorCache.from_sources, bm25=bm25 or BM25Params(), config=mirrors or MirrorConfig()
        )
        self._mirrors: KeywordIndex = build(sources)
        self._unit = WriteUnit(self._log, self._mirrors, self._journals)

    @classmethod
    def persistent(cls, path: str | Path = ".lamina/chroma", **kwargs: Any) -> ChromaMemoryStore:
        """Open (or create) a store on disk at ``path``. This is the default deployment."""
        return cls(persistent_client(path), **kwargs)

    @classmethod
    def ephemeral(cls, **kwargs: Any) -> ChromaMemoryStore:
        """Open an in-memory store (for tests). Each call gets an isolated client."""
        prefix = kwargs.pop("collection_prefix", f"lamina_{uuid.uuid4().hex[:12]}")
        return cls(ephemeral_client(), collection_prefix=prefix, **kwargs)

    @classmethod
    def http(
        cls, host: str = "127.0.0.1", port: int = 8000, *, ssl: bool = False, **kwargs: Any
    ) -> ChromaMemoryStore:
        """Connect to a ``chroma run`` server.

        Raises:
            StoreUnavailableError: nothing answers at ``host:port``.
        """
        return cls(http_client(host, port, ssl=ssl), **kwargs)

    # ----------------------------------------------------------------- writes
    def add(self, namespace: str, records: Sequence[MemoryRecord]) -> list[str]:
        """Insert or replace ``records`` (idempotent by id).

        Every record is validated and embedded before the first write, so bad input or a
        failing embedding model leaves the store untouched.
        """
        checked = checked_records(namespace, records)
        batches = [self._prepare(g, namespace, rs) for g, rs in by_granularity(checked).items()]
        with self._lock:
            for batch in batches:
                self._write(batch)
        return [r.id for r in checked]

    def _prepare(self, gran: Granularity, namespace: str, records: list[MemoryRecord]) -> Batch:
        """Embed what changed; the rows' stale metadata keys are unset (:func:`unset_stale`)."""
        stored_keys: dict[str, frozenset[str]] = {}

        def stored(ids: list[str]) -> dict[str, tuple[str, list[float]]]:
            journals = self._journals
            if self._log.position(gran, namespace) == 0 and (
                journals is None or journals.stamp(gran, namespace) is None
            ):  # never written (a write alone leaves a journal): no vector to reuse, no read
                return {}
            return stored_vectors(
                self._calls,
                self._collections[gran],
                gran,
                self.index_policy,
                namespace,
                ids,
                keys=stored_keys,
            )

        batch = prepare(
            gran,
            namespace,
            records,
            policy=self.index_policy,
            embeddings=self.embeddings,
            stored=stored,
        )
        return unset_stale(batch, stored_keys)

    def _write(self, batch: Batch) -> None:
        """Write the rows page by page, then announce the whole batch in one change-log slot.

        A Chroma write costs a disk sync, so one claim per batch (not per page, let alone
        per record) keeps small batches cheap. Readers only see the slot once every page
        landed, so they see all of the batch or none of it.
        """
        if self._max_batch is None:
            self._max_batch = max(1, min(PAGE, self._calls.read(self.client.get_max_batch_size)))
        size, collection = self._max_batch, self._collections[batch.granularity]

        def land() -> None:
            for page in batch.pages(size):
                upsert_page(self._calls, collection, page)

        rows = batch.mirror_rows(self._analyzer if self._journals is not None else None)
        self._unit.commit(batch.granularity, batch.namespace, land, rows=rows)

    def vectors(
        self, granularity: Granularity | str, namespace: str, ids: Sequence[str]
    ) -> dict[str, list[float]]:
        """Return the stored embedding of each record id that exists in ``namespace``."""
        gran = parse_granularity(granularity)
        wanted, ns = as_ids(ids), validate_namespace(namespace)
        found = stored_vectors(
            self._calls, self._collections[gran], gran, self.index_policy, ns, wanted
        )
        lost = self.get(gran, ns, [i for i in wanted if i not in found])
        if lost:  # written by another process on this path: re-derive what its HNSW lacks
            fresh = self.embeddings.embed_documents([self.index_policy.render(r) for r in lost])
            found.update(
                (r.id, ("", [float(x) for x in v])) for r, v in zip(lost, fresh, strict=True)
            )
        return {rid: found[rid][1] for rid in wanted if rid in found}

    def update(self, namespace: str, record: MemoryRecord) -> MemoryRecord:
        """Replace an existing record; raise :class:`RecordNotFoundError` if it is missing."""
        checked = check_record(namespace, record)
        with self._lock:
            if not self.get(checked.granularity, namespace, [checked.id]):
                raise RecordNotFoundError(
                    f"no {checked.granularity.value} record {checked.id!r} in namespace "
                    f"{namespace!r}; use add() to create it"
                )
            self._write(self._prepare(checked.granularity, namespace, [checked]))
        return checked

    def _supersede(self, asked: Supersede) -> FactRecord:
        # an audit entry lands inside the fact's row first, then moves to the log (.audited)
        namespace, fact_id = asked.namespace, asked.fact_id
        with self._lock:
            found = self.get(Granularity.FACT, namespace, [fact_id])
            updated, entry = asked.close(found, self.get)
            batch = self._prepare(Granularity.FACT, namespace, [updated])
            if entry is not None:
                batch.metadatas[0] = with_pending(batch.metadatas[0], entry)
            self._write(batch)
            if entry is not None:
                self._audit.put(namespace, entry.id, entry, sort_key=entry.at.timestamp())
                facts = self._collections[Granularity.FACT]
                clear_pending(self._calls, facts, row_id(namespace, fact_id))
        return updated

    def _delete(
        self, gran: Granularity, namespace: str, ids: Sequence[str] | None, scope: Scope
    ) -> int:
        with self._lock:
            doomed = [r.id for r in self.get(gran, namespace, ids, **scope)]
            collection = self._collections[gran]

            def land() -> None:
                for i in range(0, len(doomed), PAGE):
                    page = doomed[i : i + PAGE]
                    self._calls.write(collection.delete, ids=[row_id(namespace, x) for x in page])

            if doomed:
                self._unit.commit(gran, namespace, land, deleted=doomed)
        return len(doomed)

    def delete_namespace(self, namespace: str) -> int:
        """Delete every record of ``namespace`` in every granularity; return the count."""
        validate_namespace(namespace)
        total = 0
        with self._lock:
            for gran in Granularity:
                collection = self._collections[gran]
                doomed = namespace_ids(self._calls, collection, namespace)
                if doomed:
                    land = partial(
                        self._calls.write, collection.delete, where=namespace_where(namespace)
                    )
                    self._unit.commit(gran, namespace, land, reset=True)
                total += len(doomed)
                self._mirrors.drop(gran, namespace)
            self._profiles.delete_namespace(namespace)
            self._audit.delete_namespace(namespace)
        return total

    # ------------------------------------------------------------------ reads
    def _get(
        self, gran: Granularity, namespace: str, ids: Sequence[str] | None, scope: Scope
    ) -> list[MemoryRecord]:
        flt = SearchFilter(namespace, scope.get("window"), scope.get("where") or {})
        collection = self._collections[gran]
        if ids is not None:
            wanted = as_ids(ids)
            test = flt.predicate(gran)
            rows = rows_by_id(self._calls, collection, namespace, wanted)
            records = [from_metadata(gran, r.metadata) for r in rows if test(r.metadata)]
            position = {rid: n for n, rid in enumerate(wanted)}
            records.sort(key=lambda r: position[r.id])
        else:
            found = self._calls.read(
                collection.get, where=flt.to_chroma_where(gran), include=["metadatas"]
            )
            test = flt.predicate(gran)  # Chroma's where takes 1 for 1.5 in an int field
            metas = [dict(m) for m in found["metadatas"] or []]
            records = [from_metadata(gran, m) for m in metas if test(m)]
            records.sort(key=lambda r: (r.occurred_at, r.id))
        return records

    def count(self, granularity: Granularity | str, namespace: str) -> int:
        """Return how many records of a granularity a namespace holds."""
        gran = parse_granularity(granularity)
        return len(
            namespace_ids(self._calls, self._collections[gran], validate_namespace(namespace))
        )

    def search_many(self, request: SearchRequest) -> SearchAnswer:
        """Every ranking of ``request``: ``dense``, ``bm25`` or ``hybrid`` (RRF of both).

        Exact over the namespace's mirrors, which first catch up with every write any
        process made (one change-log read for all of them); each query text is embedded
        once. A namespace with no records ranks nothing (``search`` returns ``[]``).
        """
        return answer_request(
            request,
            embed=self.embeddings.embed_query,
            mirrors=self._mirrors.get_many,
            hnsw=self._hnsw,
            fusion=self.fusion,
        )

    # ------------------------------------------------------------- mirrors
    def lexical_index(self, granularity: Granularity | str, namespace: str) -> BM25Index:
        """Return the BM25 mirror of one collection and namespace, up to date."""
        return self._mirrors.get(parse_granularity(granularity), validate_namespace(namespace))

    def refresh_lexical(self) -> None:
        """Drop every mirror; each is rebuilt from Chroma on next use.

        Not needed for coherence (every search catches up with other processes' writes);
        it frees the memory the mirrors hold.
        """
        self._mirrors.clear()


def _register(journals: Journals | None) -> Presence | None:
    """Register in a persistent folder (beside the journals), then let writes in flight end.

    None (always shared) for a store without journals (in memory, a server, a read-only
    folder) or when the registration cannot be made.
    """
    if journals is None:
        return None
    try:
        presence = Presence(journals.root.parents[1] / "lamina-processes" / journals.root.name)
    except OSError:
        return None
    with journals.writing_all():
        pass  # a write that did not see this registration has its journal entry now
    return presence
