"""A namespace mirror to snapshot arrays and back (the file format is :mod:`.snapshot`).

:func:`snapshot_arrays` lays a mirror's live records out in record-id order, as a build
from Chroma orders them: ids, document lengths, times, per-row terms and the postings by
term (CSR), the rows' metadata as JSON, unit vectors, memory costs, and a code column for
every metadata field with scalar values. :func:`mirror_from_snapshot` hands those arrays
to an empty mirror (:meth:`~lamina.stores.bm25.BM25Index._adopt`), so its first search
decodes nothing but the rows it returns, and scores exactly as the mirror that was saved.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import orjson

from ..records.model import Granularity
from .codec import RECORD_KEY
from .filters import value_key
from .frozen import FrozenBase
from .lexical import Analyzer
from .mirror import NamespaceMirror, _code, vocab_values
from .okapi import BM25Params

_SCALARS = (str, int, float, bool)
_FEW = 64
"""A field with at most this many values always gets a filter column."""


def _blob(items: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
    ptr = np.zeros(len(items) + 1, dtype=np.int64)
    np.cumsum([len(b) for b in items], out=ptr[1:])
    return np.frombuffer(b"".join(items), dtype=np.uint8), ptr


def _unblob(blob: np.ndarray, ptr: np.ndarray) -> list[str]:
    raw = blob.tobytes()
    bounds = ptr.tolist()
    text = raw.decode()
    if len(text) == len(raw):  # ASCII (ids, most terms): byte offsets are character offsets
        return [text[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    return [raw[a:b].decode() for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


def index_arrays(
    row_terms: np.ndarray, row_tfs: np.ndarray, lengths: np.ndarray, vocab_size: int
) -> dict[str, np.ndarray]:
    """The BM25 arrays of a snapshot from its per-row terms (term ids, in row order).

    Per row: ``row_ptr`` and the document length; per term: ``term_ptr`` and the
    postings, whose slots ascend within a term.
    """
    n = len(lengths)
    row_ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths, out=row_ptr[1:])
    row_of = np.repeat(np.arange(n, dtype=np.int32), lengths)
    by_term = np.argsort(row_terms, kind="stable")
    term_ptr = np.zeros(vocab_size + 1, dtype=np.int64)
    np.cumsum(np.bincount(row_terms, minlength=vocab_size), out=term_ptr[1:])
    doc_len = np.zeros(n, dtype=np.float64)
    np.add.at(doc_len, row_of, row_tfs)
    return {
        "doc_len": doc_len,
        "term_ptr": term_ptr,
        "post_slots": row_of[by_term],
        "post_tfs": row_tfs[by_term],
        "row_ptr": row_ptr,
        "row_terms": row_terms,
        "row_tfs": row_tfs,
    }


def _meta_bytes(meta: Mapping[str, Any]) -> bytes:
    """JSON of one row's metadata.

    ``json`` writes a row holding NaN or infinity, which orjson would turn into null.
    """
    if any(isinstance(v, float) and not math.isfinite(v) for v in meta.values()):
        return json.dumps(dict(meta)).encode()
    return orjson.dumps(dict(meta))


def _columns(
    metas: Sequence[Mapping[str, Any]],
) -> tuple[dict[str, list[Any]], dict[str, np.ndarray]]:
    """A code column per metadata field whose values are all scalars (or missing)."""
    keys = sorted({k for m in metas for k in m} - {RECORD_KEY})
    values: dict[str, list[Any]] = {}
    codes: dict[str, np.ndarray] = {}
    for key in keys:
        column = [m.get(key) for m in metas]
        if any(v is not None and not isinstance(v, _SCALARS) for v in column):
            continue  # built from the metadata if a filter ever asks for it
        vocab: dict[Any, int] = {}
        coded = np.fromiter((_code(vocab, v) for v in column), np.int32, len(column))
        if len(vocab) > max(_FEW, len(column) // 4):
            continue  # nearly one value per row (ids, times): no filter works by code
        codes[key], values[key] = coded, vocab_values(vocab)
    return values, codes


def snapshot_arrays(mirror: NamespaceMirror) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The mirror's live records as snapshot header fields and arrays."""
    with mirror._lock:
        order = sorted(mirror._slot_of.items())
        slots = np.fromiter((s for _, s in order), np.int64, len(order))
        terms = [mirror._terms_at(int(s)) for s in slots]
        metas = [mirror._meta_at(int(s)) for s in slots]
        times = mirror._times[slots].copy()
        cost = mirror._cost[slots].copy()
        vectors = None if mirror._vectors is None else mirror._vectors[slots].copy()
        position = mirror.position
    assert all(t is not None for t in terms) and all(m is not None for m in metas)
    vocab = sorted({t for counts in terms for t in counts})  # type: ignore[union-attr]
    term_id = {t: i for i, t in enumerate(vocab)}
    lengths = np.fromiter((len(c) for c in terms), np.int64, len(terms))  # type: ignore[arg-type]
    total = int(lengths.sum())
    row_terms = np.fromiter((term_id[t] for c in terms for t in c), np.int32, total)  # type: ignore[union-attr]
    row_tfs = np.fromiter((n for c in terms for n in c.values()), np.int32, total)  # type: ignore[union-attr]
    id_blob, id_ptr = _blob([rid.encode() for rid, _ in order])
    vocab_blob, vocab_ptr = _blob([t.encode() for t in vocab])
    meta_blob, meta_ptr = _blob([_meta_bytes(m) for m in metas])  # type: ignore[arg-type]
    values, codes = _columns(metas)  # type: ignore[arg-type]
    arrays = {
        "id_blob": id_blob,
        "id_ptr": id_ptr,
        "times": times,
        "cost": cost,
        "vocab_blob": vocab_blob,
        "vocab_ptr": vocab_ptr,
        **index_arrays(row_terms, row_tfs, lengths, len(vocab)),
        "meta_blob": meta_blob,
        "meta_ptr": meta_ptr,
        **{f"column:{key}": c for key, c in codes.items()},
    }
    if vectors is not None and mirror.has_vectors:
        arrays["vectors"] = vectors
    header = {"position": position, "rows": len(order), "columns": values}
    return header, arrays


def mirror_from_snapshot(
    granularity: Granularity,
    namespace: str,
    header: Mapping[str, Any],
    arrays: Mapping[str, np.ndarray],
    *,
    analyzer: Analyzer,
    params: BM25Params,
    vectors: bool,
) -> NamespaceMirror | None:
    """A mirror holding the snapshot's records; None when it lacks the vectors asked for."""
    if vectors and "vectors" not in arrays:
        return None
    ids = _unblob(arrays["id_blob"], arrays["id_ptr"])
    base = FrozenBase(
        vocab=_unblob(arrays["vocab_blob"], arrays["vocab_ptr"]),
        term_ptr=arrays["term_ptr"],
        post_slots=arrays["post_slots"],
        post_tfs=arrays["post_tfs"],
        row_ptr=arrays["row_ptr"],
        row_terms=arrays["row_terms"],
        row_tfs=arrays["row_tfs"],
        meta_ptr=arrays["meta_ptr"],
        meta_blob=arrays["meta_blob"],
    )
    mirror = NamespaceMirror(
        granularity, namespace, analyzer=analyzer, params=params, vectors=vectors
    )
    columns = {
        key: (
            np.array(arrays[f"column:{key}"], dtype=np.int32),
            {value_key(v): i for i, v in enumerate(vals)},
        )
        for key, vals in header["columns"].items()
    }
    mirror._adopt_snapshot(
        ids,
        arrays["doc_len"],
        arrays["times"],
        base,
        cost=arrays["cost"],
        columns=columns,
        vectors=arrays["vectors"] if vectors else None,
    )
    mirror.position = int(header["position"])
    return mirror


__all__ = ["index_arrays", "mirror_from_snapshot", "snapshot_arrays"]
