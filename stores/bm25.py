"""An incremental BM25 index: an inverted index feeding rank-bm25's Okapi scoring.

``rank_bm25.BM25Okapi`` scores every document on every query (a Python loop over the
whole corpus per query term), which is far too slow at 100k records. This index keeps
postings per term, so a query touches only the documents that contain its terms, and
keeps rank-bm25's IDF (``_calc_idf``, with its epsilon floor) and its Okapi formula, so
scores equal ``BM25Okapi.get_scores`` for every matching document. Writes mark the
index dirty; IDF and the per-term posting arrays are recomputed lazily on the next query.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .filters import OCCURRED_TS, value_key
from .frozen import LAZY, FrozenBase
from .lexical import Analyzer
from .okapi import BM25Params, OkapiScorer


@dataclass(frozen=True)
class LexicalHit:
    """One BM25 result."""

    record_id: str
    score: float


class BM25Index:
    """BM25 over the documents of one collection and namespace.

    Thread-safe. ``metadata`` given with each document is kept so search-time filters
    (time window, speaker...) run on the same fields as Chroma's ``where``.
    """

    def __init__(self, analyzer: Analyzer | None = None, params: BM25Params | None = None) -> None:
        self.analyzer = analyzer or Analyzer()
        self._scorer = OkapiScorer(params or BM25Params())
        self._lock = threading.RLock()
        self._reset()

    def _reset(self) -> None:
        self._slot_of: dict[str, int] = {}
        self._ids: list[str | None] = []
        self._terms: list[Counter[str] | None] = []
        self._meta: list[Mapping[str, Any] | None] = []
        self._doc_len = np.zeros(0, dtype=np.float64)
        self._times = np.zeros(0, dtype=np.float64)  # occurred_at per slot; NaN when dead
        self._postings: dict[str, dict[int, int]] = {}
        self._arrays: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._total_len = 0
        self._dirty = True
        self._frozen: FrozenBase | None = None
        """Documents adopted from a snapshot, decoded only where touched (see :meth:`_adopt`)."""

    def _adopt(
        self, ids: list[str], doc_len: np.ndarray, times: np.ndarray, base: FrozenBase
    ) -> None:
        """Take a snapshot's documents as this empty index's: slot ``i`` holds ``ids[i]``.

        ``ids`` is taken over, not copied.

        Nothing is decoded per document: terms and metadata stay in ``base`` until a
        read or a write touches them (:meth:`_terms_at`, :meth:`_meta_at`,
        :meth:`_term_postings`).
        """
        assert not self._ids, "only an empty index adopts a snapshot"
        n = len(ids)
        self._ids = ids  # type: ignore[assignment]  # list[str] is a list[str | None] here
        self._slot_of = dict(zip(ids, range(n), strict=True))
        self._terms = [LAZY] * n
        self._meta = [LAZY] * n
        self._doc_len = np.array(doc_len, dtype=np.float64)
        self._times = np.array(times, dtype=np.float64)
        self._total_len = int(self._doc_len.sum())
        self._frozen = base
        self._dirty = True

    def _terms_at(self, slot: int) -> Counter[str] | None:
        """A slot's terms (None for a dead slot), decoded from the snapshot on first use."""
        terms = self._terms[slot]
        if terms is LAZY:
            assert self._frozen is not None
            terms = self._terms[slot] = self._frozen.terms(slot)
        return terms

    def _meta_at(self, slot: int) -> Mapping[str, Any] | None:
        """A slot's metadata (None for a dead slot), decoded from the snapshot on first use."""
        meta = self._meta[slot]
        if meta is LAZY:
            assert self._frozen is not None
            meta = self._meta[slot] = self._frozen.meta(slot)
        return meta

    def __len__(self) -> int:
        return len(self._slot_of)

    def __contains__(self, record_id: object) -> bool:
        return record_id in self._slot_of

    def ids(self) -> set[str]:
        """Return the ids currently indexed."""
        with self._lock:
            return set(self._slot_of)

    def upsert(self, docs: Iterable[tuple[str, str, Mapping[str, Any]]]) -> None:
        """Add or replace ``(record_id, index_text, metadata)`` documents."""
        analysed = [(rid, Counter(self.analyzer(text)), meta) for rid, text, meta in docs]
        with self._lock:
            for rid, terms, meta in analysed:
                self._remove(rid)
                self._insert(rid, terms, meta)
            self._dirty = True
            self._maybe_compact()

    def _insert(self, rid: str, terms: Counter[str], meta: Mapping[str, Any]) -> None:
        slot = len(self._ids)
        self._ids.append(rid)
        self._terms.append(terms)
        self._meta.append(meta)
        self._slot_of[rid] = slot
        self._reserve(slot + 1)
        self._times[slot] = float(meta.get(OCCURRED_TS, np.nan))
        length = sum(terms.values())
        self._doc_len[slot] = length
        self._total_len += length
        postings, arrays = self._postings, self._arrays
        for term, tf in terms.items():
            found = postings.get(term)
            if found is None:
                postings[term] = {slot: tf}
            else:
                found[slot] = tf
            if arrays:
                arrays.pop(term, None)

    def _reserve(self, size: int) -> None:
        """Room for at least ``size`` slots in the per-slot arrays.

        They grow at least twofold, so one-by-one inserts copy them O(log n) times, and a
        bulk load that asks for its whole size up front allocates once.
        """
        if size <= len(self._doc_len):
            return
        size = max(size, 16, 2 * len(self._doc_len))
        self._doc_len = grown(self._doc_len, size, 0.0)
        self._times = grown(self._times, size, np.nan)

    def delete(self, record_ids: Iterable[str]) -> None:
        """Remove documents; unknown ids are ignored."""
        with self._lock:
            for rid in record_ids:
                self._remove(rid)
            self._dirty = True
            self._maybe_compact()

    def _remove(self, rid: str) -> None:
        slot = self._slot_of.pop(rid, None)
        if slot is None:
            return
        frozen = self._frozen
        if frozen is not None and slot < frozen.size:  # a snapshot slot: only marked dead
            for term in frozen.remove(slot):
                self._arrays.pop(term, None)
        else:
            terms = self._terms[slot]
            assert terms is not None and terms is not LAZY
            for term in terms:
                postings = self._postings[term]
                del postings[slot]
                if not postings:
                    del self._postings[term]
                self._arrays.pop(term, None)
        self._total_len -= int(self._doc_len[slot])
        self._doc_len[slot] = 0
        self._times[slot] = np.nan
        self._ids[slot] = self._terms[slot] = self._meta[slot] = None

    def _maybe_compact(self) -> None:
        """Drop dead slots once they outnumber the live ones."""
        dead = len(self._ids) - len(self._slot_of)
        if dead <= 1024 or dead <= len(self._slot_of):
            return
        order = sorted(self._slot_of.items(), key=lambda kv: kv[1])
        live = [(rid, self._terms_at(slot), self._meta_at(slot)) for rid, slot in order]
        self._reset()
        for rid, terms, meta in live:
            assert terms is not None and meta is not None
            self._insert(rid, terms, meta)
        self._moved(np.fromiter((slot for _, slot in order), dtype=np.int64, count=len(order)))

    def _moved(self, old_slots: np.ndarray) -> None:
        """Hook run after compaction: new slot ``i`` holds what was in ``old_slots[i]``."""

    def _refit(self) -> None:
        if not self._dirty:
            return
        n = len(self._slot_of)
        if self._frozen is None:
            doc_freq = {term: len(p) for term, p in self._postings.items()}
        else:  # the snapshot's live documents, then the ones written since
            doc_freq = self._frozen.doc_freq()
            for term, p in self._postings.items():
                doc_freq[term] = doc_freq.get(term, 0) + len(p)
        self._scorer.refit(doc_freq, n, self._total_len / n if n else 0.0)
        self._dirty = False

    def _posting_arrays(self, term: str) -> tuple[np.ndarray, np.ndarray] | None:
        """A term's postings as (slots, term frequencies), cached until a write changes it.

        The snapshot's live postings, if any, then those in the dictionaries.
        """
        arrays = self._arrays.get(term)
        if arrays is not None:
            return arrays
        parts = []
        if self._frozen is not None:
            base = self._frozen.arrays(term)
            if base is not None:
                parts.append(base)
        postings = self._postings.get(term)
        if postings:
            slots = np.fromiter(postings.keys(), dtype=np.int64, count=len(postings))
            tfs = np.fromiter(postings.values(), dtype=np.float64, count=len(postings))
            parts.append((slots, tfs))
        if not parts:
            return None
        if len(parts) == 1:
            arrays = parts[0]
        else:
            arrays = (np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]))
        self._arrays[term] = arrays
        return arrays

    def scores(self, query: str) -> dict[str, float]:
        """Return the Okapi score of every document that shares a term with ``query``."""
        with self._lock:
            slots, values = self._score_slots(self.analyzer(query))
            return {
                str(self._ids[s]): float(v) for s, v in zip(slots.tolist(), values, strict=True)
            }

    def _score_slots(self, terms: list[str]) -> tuple[np.ndarray, np.ndarray]:
        self._refit()
        sc = self._scorer
        if not self._slot_of or not terms:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        acc = np.zeros(len(self._ids), dtype=np.float64)
        touched = np.zeros(len(self._ids), dtype=bool)
        for term in terms:  # duplicates count twice, as in rank-bm25
            arrays = self._posting_arrays(term)
            if arrays is None:
                continue
            slots, tf = arrays
            norm = sc.k1 * (1 - sc.b + sc.b * self._doc_len[slots] / sc.avgdl)
            acc[slots] += sc.idf.get(term, 0.0) * (tf * (sc.k1 + 1) / (tf + norm))
            touched[slots] = True
        hit = np.flatnonzero(touched)
        return hit, acc[hit]

    def latest(self) -> float | None:
        """The latest indexed time (POSIX seconds), or None when nothing carries one."""
        with self._lock:
            times = self._times[: len(self._ids)]
            if not len(times) or bool(np.all(np.isnan(times))):
                return None
            return float(np.nanmax(times))

    def distinct(self, key: str, limit: int = 64) -> list[Any]:
        """Distinct values of a metadata field, newest documents first, at most ``limit``."""
        seen: dict[Any, Any] = {}  # by value_key: True and 1 are two values
        with self._lock:
            for slot in range(len(self._meta) - 1, -1, -1):
                meta = self._meta_at(slot)
                if meta is None or key not in meta:
                    continue
                seen.setdefault(value_key(meta[key]), meta[key])
                if len(seen) >= limit:
                    break
        return list(seen.values())

    def search(
        self,
        query: str,
        k: int,
        predicate: Callable[[Mapping[str, Any]], bool] | None = None,
        *,
        allowed: np.ndarray | None = None,
    ) -> list[LexicalHit]:
        """Return the ``k`` best documents that pass ``predicate`` (score order).

        ``allowed``, a boolean array over this index's slots, filters at once instead
        of document by document (see :class:`~lamina.stores.mirror.NamespaceMirror`).
        """
        if k <= 0:
            return []
        terms = self.analyzer(query)
        with self._lock:
            slots, values = self._score_slots(terms)
            if allowed is not None:
                keep = allowed[slots]
                slots, values = slots[keep], values[keep]
            hits: list[LexicalHit] = []
            want = k if predicate is None else 4 * k
            while True:
                if len(slots) > want:
                    # everything tied with the want-th score, so ties break by id below
                    cutoff = -np.partition(-values, want - 1)[want - 1]
                    chosen = np.flatnonzero(values >= cutoff)
                else:
                    chosen = np.arange(len(slots))
                order = sorted(chosen.tolist(), key=lambda i: (-values[i], self._ids[slots[i]]))
                hits = []
                for i in order:
                    slot = int(slots[i])
                    meta = self._meta_at(slot)
                    if predicate is not None and (meta is None or not predicate(meta)):
                        continue
                    rid = self._ids[slot]
                    assert rid is not None
                    hits.append(LexicalHit(rid, float(values[i])))
                    if len(hits) >= k:
                        return hits
                if len(chosen) >= len(slots):
                    return hits
                want *= 8


def grown(array: np.ndarray, size: int, fill: Any) -> np.ndarray:
    """``array`` at least ``size`` long, the new slots holding ``fill``."""
    if len(array) >= size:
        return array
    out = np.full(size, fill, dtype=array.dtype)
    out[: len(array)] = array
    return out
