"""A snapshot and the journal rows written after it, merged into one new snapshot.

A writer keeps its namespaces' snapshots fresh this way (:meth:`.journal.Journals.append`),
so a cold mirror anywhere maps one file and replays only a short journal tail. The
snapshot's rows are carried over as arrays: the rows a later write replaced or deleted
are masked out of the per-row CSR, the metadata blob, the vectors and the filter columns
at once, and only the new rows are encoded one by one. New terms extend the vocabulary
at its end, so the old term ids stay valid; the postings are rebuilt from the per-row
terms with one stable sort. Slots: the snapshot's surviving rows in their order, then the
new rows in record-id order.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .filters import OCCURRED_TS, value_key
from .mirror import MirrorRow, _code, row_cost, vocab_values
from .mirror_snapshot import _blob, _columns, _meta_bytes, _unblob, index_arrays

_EMPTY_BYTES = np.zeros(0, dtype=np.uint8)


def _gather(blob: np.ndarray, ptr: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The byte ranges ``ptr[r]:ptr[r + 1]`` of ``rows``, as a new blob and pointers."""
    starts, lengths = ptr[rows], np.diff(ptr)[rows]
    out_ptr = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(lengths, out=out_ptr[1:])
    if not out_ptr[-1]:
        return _EMPTY_BYTES, out_ptr
    index = np.repeat(starts - out_ptr[:-1], lengths) + np.arange(out_ptr[-1])
    return blob[index], out_ptr


def _empty_base() -> dict[str, np.ndarray]:
    zero = np.zeros(1, dtype=np.int64)
    return {
        "id_blob": _EMPTY_BYTES,
        "id_ptr": zero,
        "doc_len": np.zeros(0),
        "times": np.zeros(0),
        "cost": np.zeros(0, dtype=np.int64),
        "vocab_blob": _EMPTY_BYTES,
        "vocab_ptr": zero,
        "row_ptr": zero,
        "row_terms": np.zeros(0, dtype=np.int32),
        "row_tfs": np.zeros(0, dtype=np.int32),
        "meta_blob": _EMPTY_BYTES,
        "meta_ptr": zero,
    }


def merge_rows(
    header: Mapping[str, Any] | None,
    arrays: Mapping[str, np.ndarray] | None,
    rows: Sequence[MirrorRow],
    deleted: set[str],
    position: int,
) -> tuple[dict[str, Any], dict[str, np.ndarray]] | None:
    """The snapshot with ``rows`` written and ``deleted`` removed, as of ``position``.

    ``header``/``arrays``: the snapshot, or None for none. ``rows`` must carry their
    terms (journal rows do).

    None when the result could not keep vectors consistently (some rows have one, some
    not): the caller then leaves the journal as it is.
    """
    base = dict(arrays) if arrays is not None else _empty_base()
    columns_in: dict[str, list[Any]] = dict(header["columns"]) if header else {}
    base_ids = _unblob(base["id_blob"], base["id_ptr"])
    gone = deleted | {r.record_id for r in rows}
    keep_mask = np.fromiter((rid not in gone for rid in base_ids), bool, len(base_ids))
    keep = np.flatnonzero(keep_mask)
    new = sorted(rows, key=lambda r: r.record_id)
    # every row of the result has a vector, or none has
    flags = {r.vector is not None for r in new}
    if len(keep):
        flags.add("vectors" in base)
    if len(flags) > 1:
        return None
    vectors_wanted = flags == {True}

    # ---- the snapshot's surviving rows, as arrays
    row_lengths = np.diff(base["row_ptr"])
    entry_mask = np.repeat(keep_mask, row_lengths)
    row_terms = [base["row_terms"][entry_mask]]
    row_tfs = [base["row_tfs"][entry_mask]]
    lengths = [row_lengths[keep]]
    ids_blob, ids_ptr = _gather(base["id_blob"], base["id_ptr"], keep)
    meta_blob, meta_ptr = _gather(base["meta_blob"], base["meta_ptr"], keep)

    # ---- the new rows, one by one
    vocab = _unblob(base["vocab_blob"], base["vocab_ptr"])
    term_id = {t: i for i, t in enumerate(vocab)}
    metas = [dict(r.metadata) for r in new]
    counts = [Counter(r.terms or ()) for r in new]
    for c in counts:
        for t in c:
            if t not in term_id:
                term_id[t] = len(vocab)
                vocab.append(t)
    total = sum(len(c) for c in counts)
    row_terms.append(np.fromiter((term_id[t] for c in counts for t in c), np.int32, total))
    row_tfs.append(np.fromiter((n for c in counts for n in c.values()), np.int32, total))
    lengths.append(np.fromiter((len(c) for c in counts), np.int64, len(counts)))
    new_ids_blob, new_ids_ptr = _blob([r.record_id.encode() for r in new])
    new_meta_blob, new_meta_ptr = _blob([_meta_bytes(m) for m in metas])
    times = np.fromiter((float(m.get(OCCURRED_TS, np.nan)) for m in metas), np.float64, len(new))
    costs = (row_cost(m, len(r.terms or ())) for m, r in zip(metas, new, strict=True))
    cost = np.fromiter(costs, np.int64, len(new))

    # ---- together
    all_lengths = np.concatenate(lengths)
    n = len(all_lengths)
    vocab_blob, vocab_ptr = _blob([t.encode() for t in vocab])
    out: dict[str, np.ndarray] = {
        "id_blob": np.concatenate([ids_blob, new_ids_blob]),
        "id_ptr": np.concatenate([ids_ptr, new_ids_ptr[1:] + ids_ptr[-1]]),
        "times": np.concatenate([base["times"][keep], times]),
        "cost": np.concatenate([base["cost"][keep], cost]),
        "vocab_blob": vocab_blob,
        "vocab_ptr": vocab_ptr,
        **index_arrays(np.concatenate(row_terms), np.concatenate(row_tfs), all_lengths, len(vocab)),
        "meta_blob": np.concatenate([meta_blob, new_meta_blob]),
        "meta_ptr": np.concatenate([meta_ptr, new_meta_ptr[1:] + meta_ptr[-1]]),
    }
    if vectors_wanted and n:
        fresh = np.asarray([r.vector for r in new], dtype=np.float32).reshape(len(new), -1)
        norms = np.linalg.norm(fresh, axis=1, keepdims=True)
        fresh /= np.where(norms > 0, norms, 1.0)
        out["vectors"] = np.concatenate([base["vectors"][keep], fresh]) if len(keep) else fresh
    columns: dict[str, list[Any]] = {}
    for key, values in columns_in.items():
        new_values = [m.get(key) for m in metas]
        if any(v is not None and not isinstance(v, str | int | float | bool) for v in new_values):
            continue  # left to be built from the metadata if a filter asks for it
        codes_vocab = {value_key(v): i for i, v in enumerate(values)}
        fresh_codes = np.fromiter((_code(codes_vocab, v) for v in new_values), np.int32, len(new))
        out[f"column:{key}"] = np.concatenate([base[f"column:{key}"][keep], fresh_codes])
        columns[key] = vocab_values(codes_vocab)
    if header is None:  # a first snapshot: a column for every scalar field
        columns, codes = _columns(metas)
        out.update({f"column:{key}": c for key, c in codes.items()})
    return {"position": position, "rows": n, "columns": columns}, out


def pruned(
    header: Mapping[str, Any], arrays: Mapping[str, np.ndarray]
) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The snapshot without the terms and filter values that no row holds any more.

    A merge keeps every term and metadata value it ever saw (so old ids stay valid); after
    a forget those would still spell out the forgotten words, so an erasure drops them and
    renumbers the rest.
    """
    out = dict(arrays)
    vocab = _unblob(arrays["vocab_blob"], arrays["vocab_ptr"])
    used = np.unique(arrays["row_terms"])
    renumber = np.full(len(vocab), -1, dtype=np.int32)
    renumber[used] = np.arange(len(used), dtype=np.int32)
    row_terms = renumber[arrays["row_terms"]] if len(used) else arrays["row_terms"]
    out["vocab_blob"], out["vocab_ptr"] = _blob([vocab[int(t)].encode() for t in used])
    lengths = np.diff(arrays["row_ptr"])
    out.update(index_arrays(row_terms, np.asarray(arrays["row_tfs"]), lengths, len(used)))
    columns: dict[str, list[Any]] = {}
    for key, values in header["columns"].items():
        codes = np.asarray(arrays[f"column:{key}"], dtype=np.int32)
        kept = np.unique(codes[codes >= 0])
        recode = np.full(len(values) + 1, -1, dtype=np.int32)  # the last slot maps -1 to -1
        recode[kept] = np.arange(len(kept), dtype=np.int32)
        out[f"column:{key}"] = recode[codes]
        columns[key] = [values[int(c)] for c in kept]
    return {**header, "columns": columns}, out


__all__ = ["merge_rows", "pruned"]
