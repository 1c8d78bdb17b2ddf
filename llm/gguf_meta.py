"""Read the key-value metadata of a GGUF file (no tensors, no llama.cpp).

A GGUF file starts with ``GGUF``, a version, a tensor count and a count of metadata
entries; each entry is a length-prefixed key, a type tag and a value (little-endian).
Only the entries asked for are decoded; the others are skipped by size, so reading the
tokenizer of a 1 GB model touches a few megabytes.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from pathlib import Path
from typing import Any, BinaryIO

from ..errors import LocalModelError
from .gguf import GGUF_MAGIC

_SCALARS = {
    0: "<B",  # uint8
    1: "<b",  # int8
    2: "<H",  # uint16
    3: "<h",  # int16
    4: "<I",  # uint32
    5: "<i",  # int32
    6: "<f",  # float32
    7: "<?",  # bool
    10: "<Q",  # uint64
    11: "<q",  # int64
    12: "<d",  # float64
}
_STRING, _ARRAY = 8, 9


class _Reader:
    def __init__(self, f: BinaryIO, path: Path) -> None:
        self.f, self.path = f, path

    def take(self, n: int) -> bytes:
        data = self.f.read(n)
        if len(data) != n:
            raise LocalModelError(f"{self.path} ends inside its GGUF header; the file is cut off")
        return data

    def scalar(self, fmt: str) -> Any:
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]

    def string(self) -> str:
        return self.take(self.scalar("<Q")).decode("utf-8", errors="replace")

    def value(self, kind: int, keep: bool) -> Any:
        """One value of type ``kind``; unless ``keep``, skipped by its size and None."""
        if kind in _SCALARS:
            if keep:
                return self.scalar(_SCALARS[kind])
            self.f.seek(struct.calcsize(_SCALARS[kind]), 1)
        elif kind == _STRING:
            if keep:
                return self.string()
            self.f.seek(self.scalar("<Q"), 1)
        elif kind == _ARRAY:
            item, count = self.scalar("<I"), self.scalar("<Q")
            if item not in _SCALARS:
                values = [self.value(item, keep) for _ in range(count)]
                return values if keep else None
            fmt = _SCALARS[item]
            size = count * struct.calcsize(fmt)
            if keep:
                return [v[0] for v in struct.iter_unpack(fmt, self.take(size))]
            self.f.seek(size, 1)
        else:
            raise LocalModelError(
                f"{self.path}: unknown GGUF value type {kind}; not a GGUF v2/v3 file"
            )
        return None


def read_metadata(path: Path, keys: Iterable[str]) -> dict[str, Any]:
    """Return the metadata entries ``keys`` of the GGUF file at ``path`` (those present).

    Raises:
        LocalModelError: The file cannot be read, is not GGUF, or its header is cut off.
    """
    wanted = set(keys)
    found: dict[str, Any] = {}
    try:
        with path.open("rb") as f:
            reader = _Reader(f, path)
            if reader.take(4) != GGUF_MAGIC:
                raise LocalModelError(f"{path} is not a GGUF model file (no GGUF magic)")
            version = reader.scalar("<I")
            if version < 2:
                raise LocalModelError(f"{path} is GGUF version {version}; versions 2+ are read")
            reader.scalar("<Q")  # tensor count
            for _ in range(reader.scalar("<Q")):
                key = reader.string()
                kind = reader.scalar("<I")
                value = reader.value(kind, key in wanted)
                if key in wanted:
                    found[key] = value
                    if len(found) == len(wanted):
                        break
    except OSError as e:
        raise LocalModelError(f"cannot read the model file {path} ({e})") from e
    return found
