"""Replies a model gave, kept in an append-only JSONL file by request key.

One line per request: ``{"key": <sha256>, <field>: <the reply as JSON>}``. The key is the
caller's hash of the request, so the file holds no prompt text. Each line is flushed to
disk as it is written. Reading skips a line that cannot be decoded (a write cut short by a
crash), counted in :attr:`KeptReplies.unreadable`; that request is asked again and its
reply appended after it, on a line of its own. The last line of a key wins.

Used by :mod:`.reply_cache` (LangChain chat models) and by the mem0 peer's OpenAI client.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)


def _as_is(value: Any) -> Any:
    return value


class KeptReplies:
    """Kept replies by key, in memory and in one JSONL file (thread-safe).

    Args:
        path: The file (created on the first :meth:`put`).
        field: The name of the reply's field on each line.
        revive: Turns a line's JSON value into the reply handed out (raises ValueError,
            KeyError or TypeError for a value it cannot read: the line is skipped).
    """

    def __init__(
        self, path: str | Path, *, field: str, revive: Callable[[Any], Any] = _as_is
    ) -> None:
        self.path = Path(path)
        self.field = field
        self._revive = revive
        self._lock = threading.Lock()
        self._kept: dict[str, Any] = {}
        self.hits = 0
        self.misses = 0
        self.unreadable = 0
        if self.path.exists():
            self._read()

    def _read(self) -> None:
        with self.path.open(encoding="utf-8") as handle:
            for n, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                try:
                    entry = json.loads(line)
                    self._kept[str(entry["key"])] = self._revive(entry[self.field])
                except (ValueError, KeyError, TypeError) as e:
                    self.unreadable += 1
                    log.warning("%s line %d: unreadable reply skipped (%s)", self.path, n, e)

    def __len__(self) -> int:
        return len(self._kept)

    def get(self, key: str) -> Any | None:
        """The reply kept under ``key`` (the caller must not change it), or None."""
        with self._lock:
            kept = self._kept.get(key)
            if kept is None:
                self.misses += 1
            else:
                self.hits += 1
            return kept

    def put(self, key: str, value: Any, reply: Any) -> None:
        """Keep ``reply`` under ``key``; ``value`` (its JSON form) is appended to the file."""
        line = json.dumps({"key": key, self.field: value})
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a+b") as handle:
                if handle.seek(0, os.SEEK_END):
                    handle.seek(-1, os.SEEK_END)
                    if handle.read(1) != b"\n":  # the last write was cut short
                        line = "\n" + line
                handle.write((line + "\n").encode("utf-8"))
                handle.flush()
                os.fsync(handle.fileno())
            self._kept[key] = reply

    def clear(self) -> None:
        """Forget every kept reply and delete the file."""
        with self._lock:
            self._kept.clear()
            self.path.unlink(missing_ok=True)


__all__ = ["KeptReplies"]
