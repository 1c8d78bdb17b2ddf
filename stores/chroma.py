"""``ChromaMemoryStore``: four Chroma collections plus a BM25 mirror of each.

Chroma is the one source of truth. The BM25 index of a (granularity, namespace) pair is
built from Chroma on first use and then kept in step with every add, update and delete
made through this store. Another process writing to the same Chroma is not seen by this
store's BM25 mirror until :meth:`ChromaMemoryStore.refresh_lexical` is called.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, cast

import chromadb
from chromadb.api import ClientAPI
from chromadb.api.models.Collection import Collection
from chromadb.config import Settings
from chromadb.errors import InternalError
from langchain_core.embeddings import Embeddings
from pydantic import ValidationError

from ..errors import (
    InvalidInputError,
    InvalidTypeError,
    RecordNotFoundError,
    StoreConfigurationError,
)
from .arguments import as_ids, as_records, dedupe
from .audit import AuditEntry
from .base import ScoredRecord, SearchMode, Where
from .bm25 import BM25Index, BM25Params
from .codec import RECORD_KEY, from_metadata, row_id, to_metadata
from .embedding_identity import chroma_function_for, embedding_name
from .filters import SearchFilter, TimeWindow
from .fusion import FusionConfig, reciprocal_rank_fusion
from .indexing import IndexTextPolicy
from .keyed import KeyedDocuments, checked_model, namespace_where
from .lexical import Analyzer
from .records import (
    RECORD_TYPES,
    FactRecord,
    Granularity,
    MemoryRecord,
    ProfileRecord,
    parse_granularity,
    utc_now,
    validate_namespace,
)

SCHEMA_VERSION = 1
_PAGE = 2000
"""Ids per Chroma call: SQLite caps the number of variables in one statement."""
_OVERSAMPLE_CAP = 4096
"""Largest unfiltered ``n_results`` tried before Chroma's own filtering takes over."""
_WINDOW_EXACT_CAP = _PAGE
"""A time window holding at most this many records is searched exactly, by id."""
_MODES = ("hybrid", "dense", "bm25")


class ChromaMemoryStore:
    """A :class:`~memstrata.stores.base.MemoryStore` over an injected Chroma client."""

    def __init__(
        self,
        client: ClientAPI,
        *,
        embeddings: Embeddings | None = None,
        collection_prefix: str = "memstrata",
        index_policy: IndexTextPolicy | None = None,
        fusion: FusionConfig | None = None,
        bm25: BM25Params | None = None,
        analyzer: Analyzer | None = None,
    ) -> None:
        if embeddings is None:
            from .embeddings import MiniLMEmbeddings

            embeddings = MiniLMEmbeddings()
        if not isinstance(embeddings, Embeddings):
            raise InvalidTypeError(
                "embeddings must be a langchain_core Embeddings, e.g. "
                f"memstrata.stores.MiniLMEmbeddings(); got {type(embeddings).__name__}"
            )
        self.client = client
        self.embeddings = embeddings
        self.index_policy = index_policy or IndexTextPolicy()
        self.fusion = fusion or FusionConfig()
        self._bm25_params = bm25 or BM25Params()
        self._analyzer = analyzer or Analyzer()
        self._lock = threading.RLock()
        self._lexical: dict[tuple[Granularity, str], BM25Index] = {}
        self._max_batch: int | None = None
        expected = {
            "memstrata_schema": SCHEMA_VERSION,
            "embedding": embedding_name(embeddings),
            "index_policy": json.dumps(asdict(self.index_policy), sort_keys=True),
        }
        function = chroma_function_for(embeddings)
        self._collections: dict[Granularity, Collection] = {}
        for granularity in Granularity:
            collection = client.get_or_create_collection(
                f"{collection_prefix}_{granularity.value}",
                configuration={"hnsw": {"space": "cosine"}},
                metadata=expected,
                embedding_function=function,  # type: ignore[arg-type]
            )
            stored = {k: (collection.metadata or {}).get(k) for k in expected}
            if stored != expected:
                raise StoreConfigurationError(
                    f"collection {collection.name!r} was written with {stored}, but this store "
                    f"is configured with {expected}. Open it with the same embeddings and "
                    "index_policy, or use another collection_prefix and re-ingest."
                )
            self._collections[granularity] = collection
        self._profiles = KeyedDocuments(client, f"{collection_prefix}_profile", SCHEMA_VERSION)
        self._audit = KeyedDocuments(client, f"{collection_prefix}_audit", SCHEMA_VERSION)

    @classmethod
    def persistent(cls, path: str | Path = ".memstrata/chroma", **kwargs: Any) -> ChromaMemoryStore:
        """Open (or create) a store on disk at ``path``. This is the default deployment."""
        return cls(chromadb.PersistentClient(path=str(path)), **kwargs)

    @classmethod
    def ephemeral(cls, **kwargs: Any) -> ChromaMemoryStore:
        """Open an in-memory store (for tests). Each call gets an isolated client."""
        import uuid

        settings = Settings(allow_reset=True, anonymized_telemetry=False)
        client = chromadb.EphemeralClient(settings=settings)
        prefix = kwargs.pop("collection_prefix", f"memstrata_{uuid.uuid4().hex[:12]}")
        return cls(client, collection_prefix=prefix, **kwargs)

    @classmethod
    def http(
        cls, host: str = "127.0.0.1", port: int = 8000, *, ssl: bool = False, **kwargs: Any
    ) -> ChromaMemoryStore:
        """Connect to a ``chroma run`` server."""
        return cls(chromadb.HttpClient(host=host, port=port, ssl=ssl), **kwargs)

    # ----------------------------------------------------------------- writes
    def add(self, namespace: str, records: Sequence[MemoryRecord]) -> list[str]:
        """Insert or replace ``records`` (idempotent by id).

        Every record is validated and embedded before the first write, so bad input or a
        failing embedding model leaves the store untouched.
        """
        validate_namespace(namespace)
        checked = [self._checked(namespace, r) for r in as_records(records)]
        if not checked:
            return []
        by_granularity: dict[Granularity, list[MemoryRecord]] = {}
        for record in checked:
            by_granularity.setdefault(record.granularity, []).append(record)
        batches = [
            self._prepare(granularity, namespace, dedupe(group))
            for granularity, group in by_granularity.items()
        ]
        with self._lock:
            for batch in batches:
                self._write(namespace, batch)
        return [r.id for r in checked]

    def _prepare(
        self, granularity: Granularity, namespace: str, records: list[MemoryRecord]
    ) -> _Batch:
        """Render and embed ``records``.

        A stored record whose index text is unchanged keeps its vector, so re-adding a
        record or updating only its metadata costs no embedding call.
        """
        texts = [self.index_policy.render(r) for r in records]
        stored = self._stored_vectors(granularity, namespace, [r.id for r in records])
        vectors: list[list[float] | None] = []
        for record, text in zip(records, texts, strict=True):
            old_text, old_vector = stored.get(record.id, ("", None))
            vectors.append(old_vector if old_text == text else None)
        todo = [i for i, v in enumerate(vectors) if v is None]
        if todo:
            fresh = self.embeddings.embed_documents([texts[i] for i in todo])
            if len(fresh) != len(todo):
                raise InvalidInputError(
                    f"the embeddings returned {len(fresh)} vectors for {len(todo)} texts"
                )
            for i, vector in zip(todo, fresh, strict=True):
                vectors[i] = list(vector)
        return _Batch(
            granularity,
            records,
            texts,
            [v for v in vectors if v is not None],
            [to_metadata(r) for r in records],
        )

    def vectors(
        self, granularity: Granularity | str, namespace: str, ids: Sequence[str]
    ) -> dict[str, list[float]]:
        """Return the stored embedding of each record id that exists in ``namespace``."""
        gran = parse_granularity(granularity)
        found = self._stored_vectors(gran, validate_namespace(namespace), as_ids(ids))
        return {rid: vector for rid, (_, vector) in found.items()}

    def _rows_by_id(
        self, granularity: Granularity, namespace: str, ids: Sequence[str], include: list[str]
    ) -> list[tuple[dict[str, Any], Any]]:
        """``(metadata, embedding or None)`` of the stored rows among ``ids``, in pages.

        Row ids carry the namespace, so no ``where`` is needed; the namespace in each
        row's metadata is checked again all the same.
        """
        out: list[tuple[dict[str, Any], Any]] = []
        collection = self._collections[granularity]
        for i in range(0, len(ids), _PAGE):
            rows = self._read(
                collection.get,
                ids=[row_id(namespace, x) for x in ids[i : i + _PAGE]],
                include=cast(Any, ["metadatas", *include]),
            )
            vectors = rows.get("embeddings")
            for n, meta in enumerate(rows["metadatas"] or []):
                if meta.get("namespace") == namespace:
                    out.append((dict(meta), None if vectors is None else vectors[n]))
        return out

    def _stored_vectors(
        self, granularity: Granularity, namespace: str, ids: list[str]
    ) -> dict[str, tuple[str, list[float]]]:
        """Return ``{id: (index text, vector)}`` of the records that already exist."""
        found: dict[str, tuple[str, list[float]]] = {}
        for meta, vector in self._rows_by_id(granularity, namespace, ids, ["embeddings"]):
            record = from_metadata(granularity, meta)
            found[record.id] = (self.index_policy.render(record), [float(x) for x in vector])
        return found

    def _write(self, namespace: str, batch: _Batch) -> None:
        collection = self._collections[batch.granularity]
        if self._max_batch is None:
            self._max_batch = max(1, self.client.get_max_batch_size())
        step = self._max_batch
        for i in range(0, len(batch.records), step):
            collection.upsert(
                ids=[row_id(namespace, r.id) for r in batch.records[i : i + step]],
                embeddings=cast(Any, batch.vectors[i : i + step]),
                documents=[r.text for r in batch.records[i : i + step]],
                metadatas=cast(Any, batch.metadatas[i : i + step]),
            )
        index = self._lexical.get((batch.granularity, namespace))
        if index is not None:
            index.upsert(
                (r.id, text, _lexical_meta(meta))
                for r, text, meta in zip(batch.records, batch.texts, batch.metadatas, strict=True)
            )

    def update(self, namespace: str, record: MemoryRecord) -> MemoryRecord:
        """Replace an existing record; raise :class:`RecordNotFoundError` if it is missing."""
        checked = self._checked(namespace, record)
        with self._lock:
            if not self.get(checked.granularity, namespace, [checked.id]):
                raise RecordNotFoundError(
                    f"no {checked.granularity.value} record {checked.id!r} in namespace "
                    f"{namespace!r}; use add() to create it"
                )
            self._write(namespace, self._prepare(checked.granularity, namespace, [checked]))
        return checked

    def mark_superseded(
        self, namespace: str, fact_id: str, *, superseded_by: str, at: datetime | None = None
    ) -> FactRecord:
        """Set ``superseded_by`` and close ``valid_to`` (default now); the fact is kept."""
        if not isinstance(superseded_by, str) or not superseded_by.strip():
            raise InvalidInputError("superseded_by must be the id of the replacing fact")
        if superseded_by == fact_id:
            raise InvalidInputError("a fact cannot supersede itself")
        when = at if at is not None else utc_now()
        TimeWindow(before=when)  # validates awareness
        with self._lock:
            found = self.get(Granularity.FACT, namespace, [fact_id])
            if not found:
                raise RecordNotFoundError(f"no fact {fact_id!r} in namespace {namespace!r}")
            fact = found[0]
            assert isinstance(fact, FactRecord)
            valid_to = fact.valid_to if fact.valid_to is not None and fact.valid_to < when else when
            if fact.valid_from is not None and valid_to < fact.valid_from:
                valid_to = fact.valid_from
            updated = fact.model_copy(update={"superseded_by": superseded_by, "valid_to": valid_to})
            updated = FactRecord.model_validate(updated.model_dump())
            self._write(namespace, self._prepare(Granularity.FACT, namespace, [updated]))
        return updated

    def delete(
        self,
        granularity: Granularity | str,
        namespace: str,
        ids: Sequence[str] | None = None,
        *,
        window: TimeWindow | None = None,
        where: Where | None = None,
    ) -> int:
        """Delete matching records of one namespace; return how many were deleted."""
        gran = parse_granularity(granularity)
        if ids is None and window is None and not where:
            raise InvalidInputError(
                "delete() needs ids, a window or where; to wipe a namespace use delete_namespace()"
            )
        with self._lock:
            doomed = [r.id for r in self.get(gran, namespace, ids, window=window, where=where)]
            if doomed:
                self._collections[gran].delete(ids=[row_id(namespace, i) for i in doomed])
                index = self._lexical.get((gran, namespace))
                if index is not None:
                    index.delete(doomed)
        return len(doomed)

    def delete_namespace(self, namespace: str) -> int:
        """Delete every record of ``namespace`` in every granularity; return the count."""
        validate_namespace(namespace)
        total = 0
        with self._lock:
            for gran in Granularity:
                doomed = self._all_ids(gran, namespace)
                if doomed:
                    self._collections[gran].delete(where=namespace_where(namespace))
                total += len(doomed)
                self._lexical.pop((gran, namespace), None)
            self._profiles.delete_namespace(namespace)
            self._audit.delete_namespace(namespace)
        return total

    # ------------------------------------------------------ profile and audit
    def put_profile(self, profile: ProfileRecord) -> ProfileRecord:
        """Store the profile of ``profile.namespace``, replacing the previous one."""
        checked = checked_model(profile, ProfileRecord, "profile")
        with self._lock:
            self._profiles.put(checked.namespace, "profile", checked, text=checked.render())
        return checked

    def get_profile(self, namespace: str) -> ProfileRecord | None:
        """Return the stored profile of ``namespace``, or None."""
        return self._profiles.get(namespace, "profile", ProfileRecord)

    def delete_profile(self, namespace: str) -> bool:
        """Delete the profile of ``namespace``; return whether there was one."""
        with self._lock:
            existed = self.get_profile(namespace) is not None
            if existed:
                self._profiles.delete(namespace, "profile")
        return existed

    def replace_audit(self, entry: AuditEntry) -> AuditEntry:
        """Overwrite a stored audit entry (same id), e.g. to redact forgotten content."""
        return self.append_audit(entry)

    def append_audit(self, entry: AuditEntry) -> AuditEntry:
        """Append one entry to the namespace's audit log."""
        checked = checked_model(entry, AuditEntry, "audit entry")
        with self._lock:
            self._audit.put(checked.namespace, checked.id, checked, sort_key=checked.at.timestamp())
        return checked

    def list_audit(self, namespace: str) -> list[AuditEntry]:
        """Return the namespace's audit log, oldest first."""
        return self._audit.list(namespace, AuditEntry)

    # ------------------------------------------------------------------ reads
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
        """Return records by id (in the order asked) or by filter (in time order)."""
        gran = parse_granularity(granularity)
        flt = SearchFilter(namespace, window, where or {})
        if limit is not None and limit < 1:
            raise InvalidInputError(f"limit must be >= 1, got {limit}")
        if ids is not None:
            wanted = as_ids(ids)
            test = flt.predicate(gran)
            metas = [m for m, _ in self._rows_by_id(gran, namespace, wanted, []) if test(m)]
            records = [from_metadata(gran, m) for m in metas]
            position = {rid: n for n, rid in enumerate(wanted)}
            records.sort(key=lambda r: position[r.id])
        else:
            rows = self._read(
                self._collections[gran].get, where=flt.to_chroma_where(gran), include=["metadatas"]
            )
            records = [from_metadata(gran, dict(m)) for m in rows["metadatas"] or []]
            records.sort(key=lambda r: (r.occurred_at, r.id))
        return records[:limit] if limit is not None else records

    def count(self, granularity: Granularity | str, namespace: str) -> int:
        """Return how many records of a granularity a namespace holds."""
        gran = parse_granularity(granularity)
        return len(self._all_ids(gran, validate_namespace(namespace)))

    def _all_ids(self, gran: Granularity, namespace: str) -> list[str]:
        rows = self._read(self._collections[gran].get, where=namespace_where(namespace), include=[])
        return [rid.split("|", 1)[1] for rid in rows["ids"]]

    def search(
        self,
        query: str,
        granularity: Granularity | str,
        namespace: str,
        *,
        k: int = 10,
        window: TimeWindow | None = None,
        where: Where | None = None,
        mode: SearchMode = "hybrid",
    ) -> list[ScoredRecord]:
        """Rank records for ``query``: ``dense``, ``bm25`` or ``hybrid`` (RRF of both)."""
        gran = parse_granularity(granularity)
        flt = SearchFilter(namespace, window, where or {})
        if not isinstance(query, str) or not query.strip():
            raise InvalidInputError("query must be a non-empty string")
        if mode not in _MODES:
            raise InvalidInputError(f"unknown search mode {mode!r}; use one of {_MODES}")
        if not isinstance(k, int) or k < 1:
            raise InvalidInputError(f"k must be a positive int, got {k!r}")
        depth = max(k, self.fusion.candidates) if mode == "hybrid" else k
        rankings: dict[str, list[str]] = {}
        channel_scores: dict[str, dict[str, float]] = {}
        records: dict[str, MemoryRecord] = {}
        if mode in ("hybrid", "dense"):
            hits = self._dense(query, gran, flt, depth)
            rankings["dense"] = [r.id for r, _ in hits]
            channel_scores["dense"] = {r.id: s for r, s in hits}
            records.update((r.id, r) for r, _ in hits)
        if mode in ("hybrid", "bm25"):
            lexical = self.lexical_index(gran, namespace).search(query, depth, flt.predicate(gran))
            rankings["bm25"] = [h.record_id for h in lexical]
            channel_scores["bm25"] = {h.record_id: h.score for h in lexical}
        fused = reciprocal_rank_fusion(rankings, self.fusion)[:k]
        missing = [h.record_id for h in fused if h.record_id not in records]
        if missing:
            records.update((r.id, r) for r in self.get(gran, namespace, missing))
        return [
            ScoredRecord(
                record=records[h.record_id],
                score=h.score,
                ranks=h.ranks,
                channel_scores={
                    ch: s[h.record_id] for ch, s in channel_scores.items() if h.record_id in s
                },
            )
            for h in fused
            if h.record_id in records
        ]

    def _dense(
        self, query: str, gran: Granularity, flt: SearchFilter, depth: int
    ) -> list[tuple[MemoryRecord, float]]:
        """Nearest neighbours of ``query`` that pass ``flt``.

        Chroma evaluates a ``where`` clause row by row before its vector search, which
        costs O(rows) per query. So the HNSW index is queried without one, the namespace
        and filters are checked on the returned rows, and the query is repeated with a
        larger ``n_results`` while too few pass; only when a filter is very selective
        (fewer than 1 in ~``_OVERSAMPLE_CAP / depth`` rows) does Chroma filter instead.
        """
        vector = cast(Any, [self.embeddings.embed_query(query)])
        collection = self._collections[gran]
        test = flt.predicate(gran)
        if flt.window is not None:
            exact = self._dense_in_window(vector, gran, flt, depth)
            if exact is not None:
                return exact
        n = depth
        while True:
            result = self._read(
                collection.query,
                query_embeddings=vector,
                n_results=n,
                include=["metadatas", "distances"],
            )
            metas = (result["metadatas"] or [[]])[0]
            dists = (result["distances"] or [[]])[0]
            passing = [(dict(m), d) for m, d in zip(metas, dists, strict=True) if test(m)]
            if len(passing) >= depth or len(metas) < n:  # enough, or all rows seen
                break
            if n >= _OVERSAMPLE_CAP:
                result = self._read(
                    collection.query,
                    query_embeddings=vector,
                    n_results=depth,
                    where=flt.to_chroma_where(gran),
                    include=["metadatas", "distances"],
                )
                metas = (result["metadatas"] or [[]])[0]
                dists = (result["distances"] or [[]])[0]
                passing = [(dict(m), d) for m, d in zip(metas, dists, strict=True) if test(m)]
                break
            rate = max(len(passing), 1) / max(len(metas), 1)
            n = min(_OVERSAMPLE_CAP, max(2 * n, int(1.5 * depth / rate)))
        hits = [(from_metadata(gran, m), 1.0 - float(d)) for m, d in passing[:depth]]
        hits.sort(key=lambda h: (-h[1], h[0].id))
        return hits

    def _dense_in_window(
        self, vector: Any, gran: Granularity, flt: SearchFilter, depth: int
    ) -> list[tuple[MemoryRecord, float]] | None:
        """Exact nearest neighbours among the records of a time window, or None.

        A window is where oversampling the HNSW index fails (a narrow window passes few
        of the nearest rows) and Chroma's own ``where`` is slow (it tests every row). The
        namespace's BM25 mirror holds each record's time, so it names the records inside
        the window at once; when there are at most ``_WINDOW_EXACT_CAP`` of them, Chroma
        ranks just those ids. None means the window is too wide for that: oversample.
        """
        assert flt.window is not None
        after, before = flt.window.after, flt.window.before
        test = flt.predicate(gran)
        ids = self.lexical_index(gran, flt.namespace).select(
            test,
            after=None if after is None else after.timestamp(),
            before=None if before is None else before.timestamp(),
            limit=_WINDOW_EXACT_CAP,
        )
        if ids is None:
            return None
        if not ids:
            return []
        result = self._collections[gran].query(
            query_embeddings=vector,
            n_results=min(depth, len(ids)),
            ids=[row_id(flt.namespace, x) for x in ids],
            include=["metadatas", "distances"],
        )
        metas = (result["metadatas"] or [[]])[0]
        dists = (result["distances"] or [[]])[0]
        hits = [
            (from_metadata(gran, dict(m)), 1.0 - float(d))
            for m, d in zip(metas, dists, strict=True)
            if test(m)  # the mirror may lag another process's writes; Chroma decides
        ]
        hits.sort(key=lambda h: (-h[1], h[0].id))
        return hits

    # ------------------------------------------------------------- lexical
    def lexical_index(self, granularity: Granularity | str, namespace: str) -> BM25Index:
        """Return the BM25 mirror of one collection and namespace, building it if needed."""
        gran = parse_granularity(granularity)
        key = (gran, validate_namespace(namespace))
        index = self._lexical.get(key)
        if index is None:
            with self._lock:
                index = self._lexical.get(key)
                if index is None:
                    index = self._build_lexical(gran, namespace)
                    self._lexical[key] = index
        return index

    def _build_lexical(self, gran: Granularity, namespace: str) -> BM25Index:
        index = BM25Index(self._analyzer, self._bm25_params)
        docs = []
        for meta, _ in self._rows_by_id(gran, namespace, self._all_ids(gran, namespace), []):
            record = from_metadata(gran, meta)
            docs.append((record.id, self.index_policy.render(record), _lexical_meta(meta)))
        docs.sort(key=lambda d: d[0])
        index.upsert(docs)
        return index

    def refresh_lexical(self) -> None:
        """Drop every BM25 mirror; each is rebuilt from Chroma on next use."""
        with self._lock:
            self._lexical.clear()

    # --------------------------------------------------------------- helpers
    def _read(self, call: Any, **kwargs: Any) -> Any:
        """Run a Chroma read; if it fails, retry it once while writes are held off.

        A persistent client can report a missing HNSW segment ("Nothing found on disk",
        chroma-core/chroma#4212) when a read races another thread's write to the same
        collection; the retry under the store lock cannot race a write of this store.
        """
        try:
            return call(**kwargs)
        except InternalError:
            with self._lock:
                return call(**kwargs)

    def _checked(self, namespace: str, record: object) -> MemoryRecord:
        if not isinstance(record, MemoryRecord) or type(record) not in RECORD_TYPES.values():
            raise InvalidTypeError(
                "records must be RawTurn, FactRecord, EpisodeRecord or SceneRecord instances, "
                f"got {type(record).__name__}"
            )
        # re-validate: model_construct() or attribute tricks must not smuggle bad data in
        try:
            checked = type(record).model_validate(record.model_dump())
        except ValidationError as e:
            raise InvalidInputError(f"invalid {record.granularity.value} record: {e}") from e
        if checked.namespace != namespace:
            raise InvalidInputError(
                f"record {checked.id!r} belongs to namespace {checked.namespace!r}, "
                f"not {namespace!r}; one call writes to one namespace"
            )
        return checked


@dataclass(frozen=True)
class _Batch:
    """Records of one granularity, embedded and encoded, ready to write."""

    granularity: Granularity
    records: list[MemoryRecord]
    texts: list[str]
    vectors: list[list[float]]
    metadatas: list[dict[str, Any]]


def _lexical_meta(meta: Any) -> dict[str, Any]:
    return {k: v for k, v in dict(meta).items() if k != RECORD_KEY}
