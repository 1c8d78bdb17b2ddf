"""Mirror snapshots: a namespace mirror as arrays in one file, mapped back without decoding.

Replaying a journal decodes every row (JSON, terms, vectors) before the first query can
run: seconds for a namespace of 100,000 turns. A snapshot holds the same mirror as
arrays (CSR postings, per-row terms, document lengths, times, unit vectors, the filter
columns, and the rows' metadata as JSON blobs), so a cold mirror maps the file, checks
it, and answers; a row's metadata is decoded only when a search returns that row.

File layout: one JSON header line (the journal identity, granularity, namespace, change
log position, and each array's dtype, shape, offset, size and CRC-32), then the arrays,
each at a 64-byte aligned offset. The file is written whole to a temporary name and
renamed into place. It is never trusted beyond what it proves: a header that names
other collections, another analyser or another namespace, a wrong size, or any array
whose CRC-32 differs, and the snapshot is ignored (the journal and Chroma serve).
"""

from __future__ import annotations

import json
import mmap
import os
import zlib
from pathlib import Path
from typing import Any

import numpy as np

FORMAT = 2
"""The snapshot layout; 2: a filter column codes ``True`` and ``1`` apart (1 merged them)."""
_ALIGN = 64


def write_snapshot(path: Path, header: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
    """Write ``arrays`` under ``header`` to ``path`` (whole, by rename)."""
    manifest: dict[str, Any] = {}
    offset = 0
    parts: list[tuple[int, bytes]] = []
    for name, array in arrays.items():
        data = np.ascontiguousarray(array)
        raw = data.tobytes()
        manifest[name] = {
            "dtype": data.dtype.str,
            "shape": list(data.shape),
            "offset": offset,
            "nbytes": len(raw),
            "crc": zlib.crc32(raw),
        }
        parts.append((offset, raw))
        offset += -(-len(raw) // _ALIGN) * _ALIGN
    head = json.dumps({**header, "snapshot": FORMAT, "arrays": manifest}, sort_keys=True)
    head_bytes = head.encode() + b"\n"
    base = -(-len(head_bytes) // _ALIGN) * _ALIGN
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    with open(tmp, "wb") as f:
        f.write(head_bytes.ljust(base, b" "))
        for at, raw in parts:
            f.seek(base + at)
            f.write(raw)
        f.truncate(base + offset)
    os.replace(tmp, path)


def read_snapshot(
    path: Path, expected: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, np.ndarray]] | None:
    """The header and arrays of the snapshot at ``path``; None if absent, foreign or damaged.

    ``expected`` holds the header fields that must match (identity, granularity,
    namespace). The arrays are read-only views of the mapped file.
    """
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size == 0:
                return None
            mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return None
    end = mapped.find(b"\n")
    if end <= 0:
        return None
    try:
        header = json.loads(mapped[:end])
    except ValueError:
        return None
    if not isinstance(header, dict) or header.get("snapshot") != FORMAT:
        return None
    if any(header.get(k) != v for k, v in expected.items()):
        return None
    base = -(-(end + 1) // _ALIGN) * _ALIGN
    arrays: dict[str, np.ndarray] = {}
    try:
        for name, spec in header["arrays"].items():
            start = base + int(spec["offset"])
            stop = start + int(spec["nbytes"])
            if stop > size:
                return None
            view = memoryview(mapped)[start:stop]
            if zlib.crc32(view) != spec["crc"]:
                return None
            dtype = np.dtype(spec["dtype"])
            arrays[name] = np.frombuffer(view, dtype=dtype).reshape(spec["shape"])
    except (KeyError, TypeError, ValueError):
        return None
    return header, arrays


__all__ = ["FORMAT", "read_snapshot", "write_snapshot"]
