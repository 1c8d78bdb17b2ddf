"""A BM25 index's documents as read from a snapshot: arrays, decoded only where touched.

A mirror loaded from a snapshot (:mod:`.snapshot`) must answer its first query without
per-document Python work. :class:`FrozenBase` keeps the snapshot's postings in CSR form
(per term: slots and term frequencies) and its per-document terms and metadata as
encoded blobs. The index reads a term's postings as array slices (less the slots
removed since), a document's terms or metadata by decoding that one document, and puts
every later write in new slots with ordinary dictionaries, so no write ever converts
the snapshot's postings. Scores are the same as an index built document by document:
the same document frequencies and lengths.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import orjson

LAZY: Any = object()
"""Stands in a slot list for what the frozen base still holds encoded."""


@dataclass
class FrozenBase:
    """The snapshot's documents: CSR postings by term, terms and metadata by slot.

    The snapshot's slots come first in the index; a write never changes them in place:
    it marks a snapshot slot dead (:meth:`remove`) and puts the new version in a new
    slot, whose postings the index keeps in its ordinary dictionaries.
    """

    vocab: list[str]
    """Term of each term id."""
    term_ptr: np.ndarray
    """Postings of term ``t``: ``post_slots[term_ptr[t]:term_ptr[t + 1]]``."""
    post_slots: np.ndarray
    post_tfs: np.ndarray
    row_ptr: np.ndarray
    """Terms of slot ``s``: ``row_terms[row_ptr[s]:row_ptr[s + 1]]`` (term ids)."""
    row_terms: np.ndarray
    row_tfs: np.ndarray
    meta_ptr: np.ndarray
    """Metadata of slot ``s``: JSON in ``meta_blob[meta_ptr[s]:meta_ptr[s + 1]]``."""
    meta_blob: Any
    term_id: dict[str, int] = field(init=False)
    df: np.ndarray = field(init=False)
    """Live documents per term (the snapshot's, less the dead slots')."""
    dead: np.ndarray = field(init=False)
    """Snapshot slots removed since it was mapped."""

    def __post_init__(self) -> None:
        self.term_id = {term: i for i, term in enumerate(self.vocab)}
        self.df = np.diff(self.term_ptr)
        self.dead = np.zeros(self.size, dtype=bool)

    @property
    def size(self) -> int:
        """Slots the snapshot holds."""
        return len(self.row_ptr) - 1

    def arrays(self, term: str) -> tuple[np.ndarray, np.ndarray] | None:
        """A term's live postings in the snapshot as (slots, term frequencies)."""
        t = self.term_id.get(term)
        if t is None or not self.df[t]:
            return None
        lo, hi = int(self.term_ptr[t]), int(self.term_ptr[t + 1])
        slots = self.post_slots[lo:hi].astype(np.int64)
        tfs = self.post_tfs[lo:hi].astype(np.float64)
        if self.df[t] < hi - lo:
            live = ~self.dead[slots]
            slots, tfs = slots[live], tfs[live]
        return slots, tfs

    def remove(self, slot: int) -> list[str]:
        """Mark a snapshot slot dead; return its terms (their postings changed)."""
        if self.dead[slot]:
            return []
        self.dead[slot] = True
        ids = self.row_terms[int(self.row_ptr[slot]) : int(self.row_ptr[slot + 1])]
        self.df[ids] -= 1
        return [self.vocab[t] for t in ids.tolist()]

    def doc_freq(self) -> dict[str, int]:
        """Live document frequency of every snapshot term still in a live document."""
        counts = self.df.tolist()
        return {t: n for t, n in zip(self.vocab, counts, strict=True) if n}

    def terms(self, slot: int) -> Counter[str]:
        """The terms of a snapshot slot, with their frequencies."""
        lo, hi = int(self.row_ptr[slot]), int(self.row_ptr[slot + 1])
        ids = self.row_terms[lo:hi].tolist()
        tfs = self.row_tfs[lo:hi].tolist()
        return Counter({self.vocab[t]: tf for t, tf in zip(ids, tfs, strict=True)})

    def meta(self, slot: int) -> Mapping[str, Any]:
        """The stored metadata of a snapshot slot."""
        raw = bytes(self.meta_blob[int(self.meta_ptr[slot]) : int(self.meta_ptr[slot + 1])])
        try:
            return dict(orjson.loads(raw))
        except orjson.JSONDecodeError:  # written by json: NaN, which orjson refuses
            return dict(json.loads(raw))


__all__ = ["LAZY", "FrozenBase"]
