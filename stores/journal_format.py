"""The entries of a mirror journal file: how a write is encoded, and how a file replays.

A journal file is one JSON header line (what the journal was written for) followed by
entries. Each entry is a fixed frame (magic, head length, body length, CRC-32 of head
and body), a JSON head (the change-log slots ``(lo, hi]`` it covers, whether it holds a
whole namespace, deleted ids, row ids, metadata and BM25 terms) and a body of float32
vectors. Replay trusts an entry only when its frame and CRC check out and its slots
follow on from the entries before it.
"""

from __future__ import annotations

import json
import struct
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import orjson

from .mirror import MirrorRow

_FRAME = struct.Struct("<4sIQI")  # magic, head length, body length, CRC-32
_MAGIC = b"MSJ1"


@dataclass(frozen=True)
class Replay:
    """A journal read back: the rows it proves, up to which slot, and what it cost."""

    rows: dict[str, MirrorRow]
    position: int
    entries: int
    stamp: tuple[int, int] | None
    """(inode, size) of the file read, so a snapshot can tell nobody appended since."""
    deleted: set[str] = field(default_factory=set)
    """Ids deleted (and not written again) by the entries read."""
    based: bool = False
    """Whether an entry held a whole namespace (the rows are then all there is)."""
    trusted: bool = True
    """False when the replay stopped before an entry the change log cannot serve (one
    written alone, ``lo == hi``) or before bytes it cannot read: load from Chroma instead."""


def encode_entry(
    lo: int, hi: int, rows: Sequence[MirrorRow], deleted: Sequence[str], *, base: bool
) -> bytes:
    """One entry: the write that moved the namespace from slot ``lo`` to ``hi``.

    ``base``: the rows are the whole namespace as of ``hi`` (versions before snapshots
    compacted a journal so; such files are still replayed).
    """
    with_vectors = bool(rows) and all(r.vector is not None for r in rows)
    vectors = (
        np.asarray([r.vector for r in rows], dtype=np.float32).reshape(len(rows), -1)
        if with_vectors
        else np.zeros((0, 0), dtype=np.float32)
    )
    head = {
        "lo": lo,
        "hi": hi,
        "base": base,
        "deleted": list(deleted),
        "ids": [r.record_id for r in rows],
        "metas": [dict(r.metadata) for r in rows],
        "terms": [" ".join(r.terms or ()) for r in rows],
        "dim": int(vectors.shape[1]) if with_vectors else 0,
    }
    head_bytes = json.dumps(head).encode()
    body = vectors.tobytes()
    crc = zlib.crc32(head_bytes + body)
    return _FRAME.pack(_MAGIC, len(head_bytes), len(body), crc) + head_bytes + body


def replay_entries(
    data: bytes,
    at: int,
    namespace: str,
    start: int | None,
    stamp: tuple[int, int] | None,
) -> Replay:
    """Replay the entries of ``data`` from offset ``at`` up to the first gap or bad entry.

    ``start``: the change-log slot a snapshot already covers; entries up to it are
    skipped and the replay begins with the entry after it. Without a snapshot nothing
    is covered: a whole-namespace entry first in the file is replayed even at slot 0
    (a namespace compacted before any write was logged).
    """
    rows: dict[str, MirrorRow] = {}
    deleted: set[str] = set()
    position, entries, based = start or 0, 0, False
    while (found := _entry(data, at)) is not None:  # torn or corrupt: the rest from Chroma
        meta, body, stop = found
        if _alone(meta):  # written alone: it follows slot ``hi`` and claimed none
            if meta["hi"] < position and not entries:
                at = stop
                continue  # before the snapshot's slot: covered
            if meta["hi"] != position:
                break  # out of order: not trusted (below)
            # At the snapshot's own slot it may be covered too: replaying it again, in
            # order, gives the same rows (every entry puts or deletes whole rows).
            _apply(rows, deleted, meta, data[body:stop], namespace)
            entries, at = entries + 1, stop
            continue
        if meta["hi"] <= position and (start is not None or entries or not meta["base"]):
            at = stop
            continue  # already covered
        if meta["lo"] != position and not (meta["base"] and entries == 0):
            break  # a slot gap: the change log serves the rest
        _apply(rows, deleted, meta, data[body:stop], namespace)
        based = based or bool(meta["base"])
        position, entries, at = meta["hi"], entries + 1, stop
    return Replay(rows, position, entries, stamp, deleted, based, _servable(data, at))


def _alone(meta: dict[str, Any]) -> bool:
    return bool(meta["lo"] == meta["hi"] and not meta["base"])


def _entry(data: bytes, at: int) -> tuple[Any, int, int] | None:
    """The entry at offset ``at``: its head, where its body starts and where it ends.

    None when no whole entry is there (the end of the file, or torn or corrupt bytes).
    """
    if at + _FRAME.size > len(data):
        return None
    magic, head_len, body_len, crc = _FRAME.unpack_from(data, at)
    begin, stop = at + _FRAME.size, at + _FRAME.size + head_len + body_len
    if magic != _MAGIC or stop > len(data) or zlib.crc32(data[begin:stop]) != crc:
        return None
    return _decode(data[begin : begin + head_len]), begin + head_len, stop


def _servable(data: bytes, at: int) -> bool:
    """Whether the change log can serve every entry from ``at`` on (none written alone)."""
    while at < len(data):
        found = _entry(data, at)
        if found is None or _alone(found[0]):
            return False
        at = found[2]
    return True


def _decode(head: bytes) -> Any:
    """An entry's JSON head: orjson (twice as fast on a large replay), json for what it refuses.

    The heads are written by ``json`` (:func:`encode_entry`), which may write NaN; orjson
    reads every other head to the same values.
    """
    try:
        return orjson.loads(head)
    except orjson.JSONDecodeError:
        return json.loads(head)


def _apply(
    rows: dict[str, MirrorRow],
    deleted: set[str],
    meta: dict[str, Any],
    body: bytes,
    namespace: str,
) -> None:
    if meta["base"]:
        rows.clear()
        deleted.clear()
    for rid in meta["deleted"]:
        rows.pop(rid, None)
        deleted.add(rid)
    dim = meta["dim"]
    vectors = np.frombuffer(body, dtype=np.float32).reshape(-1, dim) if dim else None
    for n, (rid, md, terms) in enumerate(
        zip(meta["ids"], meta["metas"], meta["terms"], strict=True)
    ):
        if md.get("namespace") != namespace:
            continue  # never another tenant's row, whatever the file says
        vector = None if vectors is None else vectors[n]
        rows[rid] = MirrorRow(rid, "", md, vector, tuple(terms.split()))  # terms stand for the text
        deleted.discard(rid)
