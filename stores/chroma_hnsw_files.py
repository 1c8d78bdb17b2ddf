"""Chroma's vector index files: the unused slots are cleared of stray process memory.

A persistent Chroma keeps each collection's HNSW index in four files under
``<path>/<segment id>/``. When it creates (or grows) them, it writes the whole allocated
capacity of ``data_level0.bin`` and ``length.bin`` from memory it never initialised, so
the slots past the index's element count hold whatever the process had in that memory:
observed, the JSON of a profile with the text of facts later forgotten. No slot past the
count is ever read (a new element's slot is zeroed and filled when it is added), so
:func:`clear_unused_slots` overwrites those bytes with zeros.

The layout read (chroma-core/hnswlib, persistence version 1): ``header.bin`` is 100 bytes,
the version (int32), then ``offsetLevel0``, ``max_elements``, ``cur_element_count`` and
``size_data_per_element`` (uint64 each); ``data_level0.bin`` holds up to ``max_elements``
slots of ``size_data_per_element`` bytes, ``length.bin`` one float32 per slot, the first
``cur_element_count`` of them in use. A file that does not fit this is left alone.
"""

from __future__ import annotations

import struct
from pathlib import Path

_HEADER = struct.Struct("<iQQQQ")
_HEADER_BYTES = 100
_VERSION = 1
_CHUNK = 1 << 20


def clear_unused_slots(segment: Path) -> int:
    """Zero the slots past the element count in one index folder; return the bytes zeroed."""
    try:
        head = (segment / "header.bin").read_bytes()
    except OSError:
        return 0
    if len(head) != _HEADER_BYTES:
        return 0
    version, _, capacity, count, slot = _HEADER.unpack_from(head)
    if version != _VERSION or count > capacity or slot == 0:
        return 0
    zeroed = 0
    for name, width in (("data_level0.bin", slot), ("length.bin", 4)):
        path = segment / name
        try:
            size = path.stat().st_size
        except OSError:
            continue
        if size % width or size > capacity * width:
            continue  # not the layout this reads: leave it
        if size > count * width:
            zeroed += _zero(path, count * width, size)
    return zeroed


def _zero(path: Path, start: int, stop: int) -> int:
    """Overwrite ``[start, stop)`` of ``path`` with zeros, in place."""
    with open(path, "r+b") as f:
        f.seek(start)
        at = start
        while at < stop:
            n = min(_CHUNK, stop - at)
            f.write(bytes(n))
            at += n
    return stop - start


__all__ = ["clear_unused_slots"]
