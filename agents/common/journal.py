"""The construction journal: model replies kept by content hash, model and prompt version.

Construction is the product's running cost. When the same turns are built again with
the same model and prompts (an interrupted build that restarts, an evaluation that
rebuilds its store, a second store fed the same conversation), the journal hands back the
reply the model gave before instead of calling it again. A changed prompt version, model
or input text gives a new key, so a stale reply is never reused.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from langchain_core.messages import BaseMessage


class ReplyJournal(Protocol):
    """Where construction replies are kept between runs."""

    def get(self, key: str) -> str | None:
        """The reply stored under ``key``, or None."""
        ...

    def put(self, key: str, reply: str) -> None:
        """Keep ``reply`` under ``key`` (the last write wins)."""
        ...


def journal_key(
    model_name: str, prompt_version: str, max_tokens: int, messages: Sequence[BaseMessage]
) -> str:
    """A sha256 over the model, the prompt version, the output cap and every message."""
    digest = hashlib.sha256()
    for part in (model_name, prompt_version, str(max_tokens)):
        digest.update(part.encode("utf-8") + b"\x1f")
    for message in messages:
        digest.update(f"{message.type}\x1e{message.content}\x1f".encode("utf-8", "replace"))
    return digest.hexdigest()


class SqliteReplyJournal:
    """A journal in one SQLite file, safe to share between threads and processes."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=30)
        with self._lock, self._db:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS replies (key TEXT PRIMARY KEY, reply TEXT NOT NULL)"
            )
        self.hits = 0

    def get(self, key: str) -> str | None:
        """The reply stored under ``key``, or None."""
        with self._lock:
            row = self._db.execute("SELECT reply FROM replies WHERE key = ?", (key,)).fetchone()
        self.hits += row is not None
        return None if row is None else str(row[0])

    def put(self, key: str, reply: str) -> None:
        """Keep ``reply`` under ``key`` (the last write wins)."""
        with self._lock, self._db:
            self._db.execute(
                "INSERT OR REPLACE INTO replies (key, reply) VALUES (?, ?)", (key, reply)
            )

    def close(self) -> None:
        """Close the database file."""
        with self._lock:
            self._db.close()
