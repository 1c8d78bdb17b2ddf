"""The files a :class:`~lamina.Memory` writes beside its store, erased after a forget.

Besides its store, a Memory writes two things that can hold what a forget removes:

- the checkpoints (``checkpoints.sqlite`` in the data folder, or the Postgres
  checkpointer's tables): every run's graph state (the turns of an ``add``, the memories
  an ``answer`` was shown), one thread per run, named ``<namespace>/<kind>/...``. A forget
  deletes every thread of its namespace: finished runs need none, and an interrupted
  ``add`` of that namespace then starts over instead of resuming (resuming could write
  the forgotten turn back).
- ``construction_journal.sqlite`` (a Memory that opened its persistent Chroma): the
  model's construction replies, keyed by a hash of the prompt. A key does not say which
  namespace or turns a reply came from, so a forget empties the whole cache; the next
  build of the same turns calls the model again.

Each SQLite file is then vacuumed and its write-ahead log truncated, so neither the deleted
rows nor their old pages stay in it; the Postgres checkpointer's tables are rewritten with
``VACUUM (FULL)`` (its write-ahead log is the operator's). Any other checkpointer (in
memory, or one the caller passed) has the namespace's threads deleted through its API.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.sqlite import SqliteSaver

from ..config import MemoryConfig

__all__ = ["erase_memory_files", "erase_postgres_checkpoints", "erase_threads", "vacuum_sqlite"]

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


def _erase_rows(path: Path, where: str, args: tuple[object, ...], tables: tuple[str, ...]) -> int:
    """Delete the rows ``where`` matches in those of ``tables`` the file has, then vacuum it."""
    db = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
    try:
        db.execute("PRAGMA secure_delete = ON")
        held = {str(n) for (n,) in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        deleted = sum(
            db.execute(f"DELETE FROM {table} WHERE {where}", args).rowcount  # noqa: S608
            for table in tables
            if table in held
        )
        vacuum_sqlite(db)
    finally:
        db.close()
    return deleted


def erase_checkpoint_file(path: Path, namespace: str) -> int:
    """Delete the namespace's threads from a ``SqliteSaver`` file and vacuum it."""
    prefix = f"{namespace}/"
    where = "substr(thread_id, 1, ?) = ?"
    return _erase_rows(path, where, (len(prefix), prefix), ("checkpoints", "writes"))


def erase_reply_file(path: Path) -> int:
    """Empty a construction reply journal file and vacuum it."""
    return _erase_rows(path, "1", (), ("replies",))


def erase_postgres_checkpoints(uri: str, namespace: str) -> int:
    """Delete the namespace's threads from a ``PostgresSaver`` database, then rewrite its tables.

    Deleted rows stay in a table's files until a ``VACUUM (FULL)`` rewrites them (as for
    the store, :mod:`lamina.stores.postgres.erasure`); the write-ahead log is not erased.
    """
    import psycopg
    from psycopg import sql

    prefix = f"{namespace}/"
    deleted = 0
    with psycopg.connect(uri, autocommit=True) as conn:
        for table in _SAVER_TABLES:
            if conn.execute("SELECT to_regclass(%s)", [table]).fetchone() == (None,):
                continue
            deleted += conn.execute(
                sql.SQL("DELETE FROM {} WHERE left(thread_id, %s) = %s").format(
                    sql.Identifier(table)
                ),
                [len(prefix), prefix],
            ).rowcount
            conn.execute(sql.SQL("VACUUM (FULL) {}").format(sql.Identifier(table)))
    return deleted


_SAVER_TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes")
"""The tables a LangGraph ``PostgresSaver`` keeps a thread's state in."""


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
    own_postgres_store: bool = False,
) -> None:
    """Erase the namespace from the checkpoints and reply cache this Memory writes."""
    kind = config.checkpoint_kind(own_store=own_persistent_store or own_postgres_store)
    uri = config.checkpoint_uri
    if kind == "postgres" and uri is not None:
        erase_postgres_checkpoints(uri, namespace)  # whether or not this process opened it
    elif checkpointer is not None and not (
        kind == "sqlite" and isinstance(checkpointer, SqliteSaver)
    ):
        erase_threads(checkpointer, namespace)
    path = config.resolved_sqlite_path.expanduser()
    if kind == "sqlite" and path.exists():
        erase_checkpoint_file(path, namespace)
    journal = config.resolved_journal_path
    if own_persistent_store and journal.exists():
        erase_reply_file(journal)
