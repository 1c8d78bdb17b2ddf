"""Replies a model gave, kept sealed in an append-only JSONL file by request key.

One line per request: ``{"key": <sha256>, "sealed": <base64>}``. The caller hands in the
request as bytes (its messages and settings, serialized); the key is a hash of them
(:func:`key_of`), so the file holds no prompt text. A construction reply often quotes
the conversation it was asked about, and the evaluation data may not be copied into the
repository (LoCoMo is CC BY-NC), so the reply itself is sealed too: XORed with a
keystream (SHAKE-256 of a secret and a random nonce) whose secret is a second hash of the
whole request, the dataset's turns included. Only someone who can ask the same request,
and so holds the data, can read it back. This keeps the text out of the repository; it
is not meant to protect it from anyone who holds the data.

Lines written before replies were sealed (``{"key", <field>: <reply>}``) are still read.
A lookup that finds one answers with it and appends the sealed line, and
:meth:`KeptReplies.drop_plain` then rewrites the file without the plain lines.

Each line is flushed to disk as it is written. Reading skips a line that cannot be decoded
(a write cut short by a crash), counted in :attr:`KeptReplies.unreadable`; that request
is asked again and its reply appended after it, on a line of its own. The last line of a
key wins.

Used by :mod:`.reply_cache` (LangChain chat models) and by the mem0 peer's OpenAI client.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import os
import secrets
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)
NONCE = 16


def _as_is(value: Any) -> Any:
    return value


def _stream(secret: bytes, nonce: bytes, n: int) -> bytes:
    return hashlib.shake_256(secret + nonce).digest(n)


def key_of(request: bytes) -> str:
    """The key a request's reply is kept under: a sha256 of the request."""
    return hashlib.sha256(request).hexdigest()


def secret_of(request: bytes) -> bytes:
    """The secret a request's reply is sealed with: another hash of the request."""
    return hashlib.sha256(b"lamina-seal\x1f" + request).digest()


def seal(value: Any, secret: bytes) -> str:
    """``value`` as JSON, XORed with a keystream of ``secret`` and a fresh nonce (base64)."""
    plain = json.dumps(value).encode("utf-8")
    nonce = secrets.token_bytes(NONCE)
    body = bytes(a ^ b for a, b in zip(plain, _stream(secret, nonce, len(plain)), strict=True))
    return base64.b64encode(nonce + body).decode("ascii")


def unseal(sealed: str, secret: bytes) -> Any:
    """The value :func:`seal` sealed with ``secret`` (ValueError: another secret, or damage)."""
    raw = base64.b64decode(sealed.encode("ascii"), validate=True)
    nonce, body = raw[:NONCE], raw[NONCE:]
    plain = bytes(a ^ b for a, b in zip(body, _stream(secret, nonce, len(body)), strict=True))
    return json.loads(plain.decode("utf-8"))


class KeptReplies:
    """Kept replies by key, in memory and in one JSONL file (thread-safe).

    Args:
        path: The file (created on the first :meth:`put`).
        field: The name of the reply's field on the plain lines of older files.
        revive: Turns a reply's JSON value into the reply handed out (raises ValueError,
            KeyError or TypeError for a value it cannot read).
    """

    def __init__(
        self, path: str | Path, *, field: str, revive: Callable[[Any], Any] = _as_is
    ) -> None:
        self.path = Path(path)
        self.field = field
        self._revive = revive
        self._lock = threading.Lock()
        self._lines: dict[str, tuple[bool, Any]] = {}
        """key -> (sealed?, the sealed text or the plain JSON value)."""
        self._open: dict[str, Any] = {}
        """key -> the reply, revived (read back or put by this process)."""
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
                    key = str(entry["key"])
                    if "sealed" in entry:
                        self._lines[key] = (True, str(entry["sealed"]))
                    else:
                        self._lines[key] = (False, entry[self.field])
                    self._open.pop(key, None)
                except (ValueError, KeyError, TypeError) as e:
                    self.unreadable += 1
                    log.warning("%s line %d: unreadable reply skipped (%s)", self.path, n, e)

    def __len__(self) -> int:
        return len(self._lines)

    @property
    def plain(self) -> int:
        """Lines of the file not sealed yet (from before replies were sealed)."""
        return sum(1 for sealed, _ in self._lines.values() if not sealed)

    def get(self, request: bytes) -> Any | None:
        """The reply kept for ``request`` (serialized), or None.

        The caller must not change it. A plain line found is sealed and appended.
        """
        key, secret = key_of(request), secret_of(request)
        with self._lock:
            reply = self._open.get(key)
            line = self._lines.get(key) if reply is None else None
            if reply is None and line is not None:
                sealed, value = line
                try:
                    reply = self._revive(unseal(value, secret) if sealed else value)
                except (ValueError, KeyError, TypeError) as e:
                    log.warning("%s: a kept reply could not be read (%s)", self.path, e)
                else:
                    self._open[key] = reply
                    if not sealed:
                        self._append(key, value, secret)
            if reply is None:
                self.misses += 1
            else:
                self.hits += 1
            return reply

    def put(self, request: bytes, value: Any, reply: Any) -> None:
        """Keep ``reply`` for ``request``; ``value`` (its JSON form) is sealed into the file."""
        key = key_of(request)
        with self._lock:
            self._append(key, value, secret_of(request))
            self._open[key] = reply

    def _append(self, key: str, value: Any, secret: bytes) -> None:
        sealed = seal(value, secret)
        line = json.dumps({"key": key, "sealed": sealed})
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a+b") as handle:
            if handle.seek(0, os.SEEK_END):
                handle.seek(-1, os.SEEK_END)
                if handle.read(1) != b"\n":  # the last write was cut short
                    line = "\n" + line
            handle.write((line + "\n").encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        self._lines[key] = (True, sealed)

    def drop_plain(self) -> int:
        """Rewrite the file with its sealed lines only; how many plain lines were dropped."""
        with self._lock:
            dropped = [k for k, (sealed, _) in self._lines.items() if not sealed]
            for key in dropped:
                del self._lines[key]
            partial = self.path.with_suffix(".partial")
            with partial.open("w", encoding="utf-8") as handle:
                for key, (_, sealed) in self._lines.items():
                    handle.write(json.dumps({"key": key, "sealed": sealed}) + "\n")
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(partial, self.path)
            return len(dropped)

    def clear(self) -> None:
        """Forget every kept reply and delete the file."""
        with self._lock:
            self._lines.clear()
            self._open.clear()
            self.path.unlink(missing_ok=True)


__all__ = ["KeptReplies", "key_of", "seal", "secret_of", "unseal"]
