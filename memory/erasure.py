"""The files a :class:`~lamina.Memory` writes beside its store, erased after a forget.

A Memory that opened its own persistent store also writes two SQLite files in its data
folder, and both can hold what a forget removes:

- ``checkpoints.sqlite``: every run's graph state (the turns of an ``add``, the memories an
  ``answer`` was shown), one thread per run, named ``<namespace>/<kind>/...``. A forget
  deletes every thread of its namespace: finished runs need none, and an interrupted
  ``add`` of that namespace then starts over instead of resuming (resuming could write
  the forgotten turn back).
- ``construction_journal.sqlite``: the model's construction replies, keyed by a hash of
  the prompt. A key does not say which namespace or turns a reply came from, so a forget
  empties the whole cache; the next build of the same turns calls the model again.

Each file is then vacuumed and its write-ahead log truncated, so neither the deleted rows
nor their old pages stay in it. Any other checkpointer (in memory, Postgres, or one the
caller passed) has the namespace's threads deleted through its own API; what its storage
keeps of them afterwards (Postgres's dead tuples and WAL) is not erased here.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.sqlite import SqliteSaver

from ..config import MemoryConfig

__all__ = ["erase_memory_files", "erase_threads", "vacuum_sqlite"]

BUSY_TIMEOUT_S = 30.0
"""How long an erasure waits for another connection to the same file."""


def vacuum_sqlite(db: sqlite3.Connection) -> None:
    """Rewrite the file without free pages, then empty its write-ahead log (if any)."""
    db.execute("VACUUM")
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    while True:  # a reader in the middle of a read keeps the log: wait for it
        busy, _, _ = db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        if not busy or time.monotonic() > deadline:
            return
        time.sleep(0.05)


def _open(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
    db.execute("PRAGMA secure_delete = ON")
    return db


def _tables(db: sqlite3.Connection) -> set[str]:
    return {str(n) for (n,) in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def erase_checkpoint_file(path: Path, namespace: str) -> int:
    """Delete the namespace's threads from a ``SqliteSaver`` file and vacuum it."""
    prefix = f"{namespace}/"
    db = _open(path)
    try:
        deleted = 0
        tables = _tables(db)
        for table in ("checkpoints", "writes"):
            if table in tables:
                deleted += db.execute(
                    f"DELETE FROM {table} WHERE substr(thread_id, 1, ?) = ?",  # noqa: S608
                    (len(prefix), prefix),
                ).rowcount
        vacuum_sqlite(db)
    finally:
        db.close()
    return deleted


def erase_reply_file(path: Path) -> int:
    """Empty a construction reply journal file and vacuum it."""
    db = _open(path)
    try:
        deleted = 0
        if "replies" in _tables(db):
            deleted = db.execute("DELETE FROM replies").rowcount
        vacuum_sqlite(db)
    finally:
        db.close()
    return deleted


def erase_threads(checkpointer: BaseCheckpointSaver[Any], namespace: str) -> int:
    """Delete a namespace's threads through a checkpointer's own API; return how many."""
    prefix = f"{namespace}/"
    threads = {
        str(t.config["configurable"]["thread_id"])
        for t in checkpointer.list(None)
        if str(t.config["configurable"].get("thread_id", "")).startswith(prefix)
    }
    for thread in sorted(threads):
        checkpointer.delete_thread(thread)
    return len(threads)


def erase_memory_files(
    config: MemoryConfig,
    namespace: str,
    *,
    own_persistent_store: bool,
    checkpointer: BaseCheckpointSaver[Any] | None,
) -> None:
    """Erase the namespace from the checkpoints and reply cache this Memory writes."""
    kind = config.checkpointer
    ours = kind == "sqlite" or (kind == "auto" and own_persistent_store)
    if checkpointer is not None and not (ours and isinstance(checkpointer, SqliteSaver)):
        erase_threads(checkpointer, namespace)
    path = config.resolved_sqlite_path.expanduser()
    if ours and path.exists():
        erase_checkpoint_file(path, namespace)
    journal = config.resolved_journal_path
    if config.construction_journal and own_persistent_store and journal.exists():
        erase_reply_file(journal)
