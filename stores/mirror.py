"""The in-memory mirror of one (granularity, namespace): both search channels, one slot space.

A :class:`NamespaceMirror` is a :class:`~lamina.stores.bm25.BM25Index` whose slots also
hold each record's unit-length vector and a code per filtered metadata value. So a search
filters with array masks (time window, speaker, ...) and ranks the dense channel exactly
with one matrix-vector product, and the BM25 channel over the same mask. Exact ranking
is never worse than Chroma's approximate HNSW. A mirror built without vectors (a
namespace larger than :attr:`MirrorConfig.exact_limit`) leaves the dense channel to
Chroma's HNSW index.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..records.model import Granularity, MemoryRecord
from .bm25 import BM25Index, grown
from .codec import RECORD_KEY, from_metadata
from .filters import SearchFilter, value_key
from .frozen import FrozenBase
from .lexical import Analyzer
from .okapi import BM25Params

_MISSING = -1


@dataclass(frozen=True, kw_only=True)
class MirrorConfig:
    """Sizing of the per-namespace mirrors."""

    budget_bytes: int = 1 << 30
    """Estimated memory all mirrors may hold; least recently used ones are dropped first."""
    exact_limit: int = 200_000
    """Namespaces with at most this many records keep vectors and rank dense exactly;
    larger ones use Chroma's HNSW index for the dense channel."""

    def __post_init__(self) -> None:
        if self.budget_bytes < 0 or self.exact_limit < 0:
            raise ValueError("MirrorConfig budget_bytes and exact_limit must be >= 0")


@dataclass(frozen=True)
class MirrorRow:
    """One record as the mirror takes it: id, index text, stored metadata, vector."""

    record_id: str
    text: str
    metadata: Mapping[str, Any]
    vector: Any | None = None
    terms: tuple[str, ...] | None = None
    """The text's BM25 terms when already known (a journal keeps them): not re-analysed."""


@dataclass(frozen=True)
class WriteEvent:
    """One write a store made, as its keyword index and its journal are told of it.

    The write landed in Chroma and claimed change-log ``slot`` of (``granularity``,
    ``namespace``): ``rows`` were put, ``deleted`` (record ids) are gone. Unless
    ``claimed`` is False: a store alone on its folder claimed nothing, and ``slot`` is
    the log's end that the write follows (:mod:`.presence`).
    """

    granularity: Granularity
    namespace: str
    slot: int
    rows: Sequence[MirrorRow] = ()
    deleted: Sequence[str] = ()
    claimed: bool = True


class NamespaceMirror(BM25Index):
    """Records of one granularity and namespace, searchable on both channels."""

    def __init__(
        self,
        granularity: Granularity,
        namespace: str,
        *,
        analyzer: Analyzer | None = None,
        params: BM25Params | None = None,
        vectors: bool = True,
    ) -> None:
        self.granularity = granularity
        self.namespace = namespace
        self.has_vectors = vectors
        """False: the dense channel is left to Chroma's HNSW index."""
        self.position = 0
        """The last change-log slot applied."""
        self._vectors: np.ndarray | None = None
        self._live = np.zeros(0, dtype=bool)
        self._cost = np.zeros(0, dtype=np.int64)
        self._cost_total = 0
        self._columns: dict[str, tuple[np.ndarray, dict[Any, int]]] = {}
        super().__init__(analyzer, params)

    def _adopt_snapshot(
        self,
        ids: list[str],
        doc_len: np.ndarray,
        times: np.ndarray,
        base: FrozenBase,
        *,
        cost: np.ndarray,
        columns: dict[str, tuple[np.ndarray, dict[Any, int]]],
        vectors: np.ndarray | None,
    ) -> None:
        """Take a snapshot's records (see :mod:`.mirror_snapshot`); the mirror must be empty.

        ``vectors`` may be a read-only view of the mapped file: the first write copies it.
        """
        with self._lock:
            self._adopt(ids, doc_len, times, base)
            n = len(ids)
            self._live = np.ones(n, dtype=bool)
            self._cost = np.array(cost, dtype=np.int64)
            self._cost_total = int(self._cost.sum())
            self._columns = dict(columns)
            self._vectors = vectors if self.has_vectors else None

    # ----------------------------------------------------------------- writes
    def upsert_rows(self, rows: Iterable[MirrorRow]) -> None:
        """Add or replace records. Rows of another namespace are ignored."""
        todo = [r for r in rows if r.metadata.get("namespace") == self.namespace]
        analysed = [self.analyzer(r.text) if r.terms is None else r.terms for r in todo]
        with self._lock:
            self._reserve(len(self._ids) + len(todo))
            slots = []
            for row, terms in zip(todo, analysed, strict=True):
                self._remove(row.record_id)
                self._insert(row.record_id, Counter(terms), dict(row.metadata))
                slot = self._slot_of[row.record_id]
                self._place(slot, row, len(terms))
                slots.append(slot)
            self._place_vectors(slots, [r.vector for r in todo])
            self._dirty = True
            self._maybe_compact()

    def upsert(self, docs: Iterable[tuple[str, str, Mapping[str, Any]]]) -> None:
        """Add or replace ``(record_id, index_text, metadata)`` documents, without vectors."""
        self.upsert_rows(MirrorRow(rid, text, meta) for rid, text, meta in docs)

    def _place(self, slot: int, row: MirrorRow, n_terms: int) -> None:
        size = len(self._doc_len)
        if len(self._live) < size:
            self._live = grown(self._live, size, False)
            self._cost = grown(self._cost, size, 0)
            for key, (codes, vocab) in self._columns.items():
                self._columns[key] = (grown(codes, size, _MISSING), vocab)
        self._live[slot] = True
        cost = row_cost(row.metadata, n_terms)
        self._cost[slot] = cost
        self._cost_total += cost
        for key, (codes, vocab) in self._columns.items():
            codes[slot] = _code(vocab, row.metadata.get(key))

    def _place_vectors(self, slots: list[int], vectors: list[Any | None]) -> None:
        """Store the unit-length vectors of ``slots`` (rows without one are skipped)."""
        pairs = [(s, v) for s, v in zip(slots, vectors, strict=True) if v is not None]
        if not self.has_vectors or not pairs:
            return
        matrix = np.asarray([v for _, v in pairs], dtype=np.float32).reshape(len(pairs), -1)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        matrix /= np.where(norms > 0, norms, 1.0)
        size = len(self._doc_len)
        if self._vectors is None:
            self._vectors = np.zeros((size, matrix.shape[1]), dtype=np.float32)
        elif len(self._vectors) < size or not self._vectors.flags.writeable:
            grown = np.zeros((size, self._vectors.shape[1]), dtype=np.float32)
            grown[: len(self._vectors)] = self._vectors
            self._vectors = grown
        self._vectors[np.asarray([s for s, _ in pairs])] = matrix

    def _remove(self, rid: str) -> None:
        slot = self._slot_of.get(rid)
        super()._remove(rid)
        if slot is not None and slot < len(self._live):
            self._live[slot] = False
            self._cost_total -= int(self._cost[slot])
            self._cost[slot] = 0

    def _moved(self, old_slots: np.ndarray) -> None:
        size = len(self._doc_len)
        n = len(old_slots)
        self._live = grown(self._live[old_slots], size, False)
        self._cost = grown(self._cost[old_slots], size, 0)
        for key, (codes, vocab) in self._columns.items():
            self._columns[key] = (grown(codes[old_slots], size, _MISSING), vocab)
        if self._vectors is not None:
            moved = np.zeros((size, self._vectors.shape[1]), dtype=np.float32)
            moved[:n] = self._vectors[old_slots]
            self._vectors = moved

    # ----------------------------------------------------------------- reads
    def nbytes(self) -> int:
        """Estimated memory held (vectors, postings, metadata)."""
        vectors = 0 if self._vectors is None else self._vectors.nbytes
        return vectors + self._cost_total + 24 * len(self._doc_len) + 2048

    @property
    def lock(self) -> AbstractContextManager[Any]:
        """Held while one search reads the mirror (filter, channels, records together)."""
        return self._lock

    def allowed(self, flt: SearchFilter) -> np.ndarray:
        """Boolean mask over slots: live records that pass ``flt``."""
        with self._lock:
            n = len(self._ids)
            mask = self._live[:n].copy()
            if flt.namespace != self.namespace:
                mask[:] = False
                return mask
            if flt.window is not None:
                times = self._times[:n]
                if flt.window.after is not None:
                    mask &= times >= flt.window.after.timestamp()
                if flt.window.before is not None:
                    mask &= times < flt.window.before.timestamp()
            for key, values in flt.metadata_conditions(self.granularity):
                codes, vocab = self._column(key)
                keys = [value_key(v) for v in values]
                wanted = [vocab[key] for key in keys if key in vocab]
                mask &= np.isin(codes[:n], np.asarray(wanted, dtype=np.int32))
            return mask

    def _column(self, key: str) -> tuple[np.ndarray, dict[Any, int]]:
        column = self._columns.get(key)
        if column is None:
            vocab: dict[Any, int] = {}
            codes = np.full(len(self._doc_len), _MISSING, dtype=np.int32)
            for slot in range(len(self._meta)):
                meta = self._meta_at(slot)
                if meta is not None:
                    codes[slot] = _code(vocab, meta.get(key))
            column = self._columns[key] = (codes, vocab)
        return column

    def distinct(self, key: str, limit: int = 64) -> list[Any]:
        """Distinct values of a metadata field, newest documents first, at most ``limit``.

        Read from the field's filter column (built once, then kept up to date by every
        write), so a search can ask for a namespace's speakers each time at little cost.
        """
        with self._lock:
            codes, vocab = self._column(key)
            n = len(self._ids)
            slots = np.flatnonzero(self._live[:n] & (codes[:n] != _MISSING))
            if not len(slots):
                return []
            newest = np.full(len(vocab), -1, dtype=np.int64)
            np.maximum.at(newest, codes[slots], slots)
            values = vocab_values(vocab)  # a value's code is its position in the vocabulary
        present = np.flatnonzero(newest >= 0)
        order = present[np.argsort(-newest[present], kind="stable")][:limit]
        return [values[int(c)] for c in order]

    def dense(self, query: Sequence[float], k: int, allowed: np.ndarray) -> list[tuple[str, float]]:
        """The ``k`` records most cosine-similar to ``query`` among ``allowed`` (exact)."""
        with self._lock:
            candidates = np.flatnonzero(allowed)
            if not len(candidates) or self._vectors is None:
                return []
            q = np.asarray(query, dtype=np.float32).ravel()
            norm = float(np.linalg.norm(q))
            q = q / norm if norm > 0 else q
            n = len(self._ids)
            if len(candidates) * 4 > n:
                scores = (self._vectors[:n] @ q)[candidates]
            else:
                scores = self._vectors[candidates] @ q
            if len(candidates) > k:
                cutoff = -np.partition(-scores, k - 1)[k - 1]
                chosen = np.flatnonzero(scores >= cutoff)  # ties at the cut break by id
            else:
                chosen = np.arange(len(candidates))
            hits = [(str(self._ids[int(candidates[i])]), float(scores[i])) for i in chosen]
            hits.sort(key=lambda h: (-h[1], h[0]))
            return hits[:k]

    def window_ids(self, allowed: np.ndarray) -> list[str]:
        """Record ids of the allowed slots."""
        with self._lock:
            return [str(self._ids[int(s)]) for s in np.flatnonzero(allowed)]

    def record(self, record_id: str) -> MemoryRecord | None:
        """The stored record with this id, or None."""
        with self._lock:
            slot = self._slot_of.get(record_id)
            meta = None if slot is None else self._meta_at(slot)
        return None if meta is None else from_metadata(self.granularity, dict(meta))

    def rows(self) -> list[MirrorRow]:
        """Every live record as a row with its terms (and unit vector), e.g. to persist."""
        with self._lock:
            out = []
            for rid, slot in sorted(self._slot_of.items()):
                terms, meta = self._terms_at(slot), self._meta_at(slot)
                assert terms is not None and meta is not None
                vector = None if self._vectors is None else self._vectors[slot]
                out.append(MirrorRow(rid, "", meta, vector, tuple(terms.elements())))
            return out

    def vector(self, record_id: str) -> list[float] | None:
        """The unit-length vector of a record, when this mirror keeps vectors."""
        with self._lock:
            slot = self._slot_of.get(record_id)
            if slot is None or self._vectors is None:
                return None
            return [float(x) for x in self._vectors[slot]]


def row_cost(metadata: Mapping[str, Any], n_terms: int) -> int:
    """Estimated bytes a row holds in a mirror (metadata, record, terms, fixed overhead)."""
    return 64 * len(metadata) + len(str(metadata.get(RECORD_KEY, ""))) + 120 * n_terms + 200


def vocab_values(vocab: dict[Any, int]) -> list[Any]:
    """The values of a filter column's vocabulary, in code order."""
    return [key[1] if isinstance(key, tuple) else key for key in vocab]


def _code(vocab: dict[Any, int], value: Any) -> int:
    """The code of ``value`` in a filter column's ``vocab`` (keyed by :func:`value_key`)."""
    if value is None:
        return _MISSING
    try:
        return vocab.setdefault(value_key(value), len(vocab))
    except TypeError:  # an unhashable value (a list) never equals a filter scalar
        return _MISSING
