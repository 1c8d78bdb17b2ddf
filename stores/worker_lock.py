"""One consolidation worker per namespace at a time, across processes.

:func:`worker_lock` gives the lock of one namespace of a store, taken without waiting
(:meth:`WorkerLock.acquire` says whether it was got). The operating system or the
database releases it when its holder dies, so a ``kill -9`` mid-build never leaves a
namespace locked:

* a persistent Chroma store: ``flock`` on a file per namespace beside its Chroma files
  (``<chroma path>/lamina-workers/<digest>.lock``), which excludes other processes and
  other stores of this process alike;
* Postgres: a session advisory lock, held on a connection of the store's pool for as
  long as the lock is held;
* any other store (in-memory, a Chroma server): a lock of this process only. Two app
  processes on one Chroma server each run their own worker; use Postgres (or a shared
  path) for more than one.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import threading
from pathlib import Path
from typing import Any, Protocol

from .chroma import ChromaMemoryStore
from .namespaces import _postgres
from .schema import persist_directory


class WorkerLock(Protocol):
    """The consolidation lock of one namespace."""

    def acquire(self) -> bool:
        """Take the lock if it is free; True when this caller now holds it."""
        ...

    def release(self) -> None:
        """Give the lock back (a no-op when not held)."""
        ...


def _digest(namespace: str) -> str:
    return hashlib.sha256(namespace.encode("utf-8")).hexdigest()[:40]


class FileWorkerLock:
    """``flock`` on one file per namespace (released by the kernel when its holder dies)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    def acquire(self) -> bool:
        """Take the lock if no process (and no other lock object) holds it."""
        if self._fd is not None:
            return True
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        self._fd = fd
        return True

    def release(self) -> None:
        """Unlock and close the file."""
        if self._fd is not None:
            fd, self._fd = self._fd, None
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)


class AdvisoryWorkerLock:
    """A Postgres session advisory lock, on a pool connection kept while it is held."""

    def __init__(self, store: Any, namespace: str) -> None:
        self.store = store
        self.key = f"lamina:consolidate:{store.names.schema}|{namespace}"
        self._conn: Any = None

    def acquire(self) -> bool:
        """Take the lock if no session holds it."""
        if self._conn is not None:
            return True
        conn = self.store.pool.getconn()
        try:
            row = conn.execute(
                "SELECT pg_try_advisory_lock(hashtextextended(%s, 0))", [self.key]
            ).fetchone()
            conn.commit()
        except BaseException:
            self.store.pool.putconn(conn)
            raise
        if not (row and row[0]):
            self.store.pool.putconn(conn)
            return False
        self._conn = conn
        return True

    def release(self) -> None:
        """Unlock, and hand the connection back to the pool."""
        if self._conn is None:
            return
        conn, self._conn = self._conn, None
        try:
            conn.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", [self.key])
            conn.commit()
        finally:
            self.store.pool.putconn(conn)


_LOCAL: dict[tuple[int, str], threading.Lock] = {}
_LOCAL_GUARD = threading.Lock()


class LocalWorkerLock:
    """A lock of this process only, per (store, namespace)."""

    def __init__(self, store: object, namespace: str) -> None:
        with _LOCAL_GUARD:
            self._lock = _LOCAL.setdefault((id(store), namespace), threading.Lock())
        self._held = False

    def acquire(self) -> bool:
        """Take the lock if no thread of this process holds it."""
        if not self._held:
            self._held = self._lock.acquire(blocking=False)
        return self._held

    def release(self) -> None:
        """Give the lock back."""
        if self._held:
            self._held = False
            self._lock.release()


def worker_lock(store: object, namespace: str) -> WorkerLock:
    """The consolidation lock of ``namespace`` in ``store`` (see the module docstring)."""
    if (
        isinstance(store, ChromaMemoryStore)
        and (path := persist_directory(store.client)) is not None
    ):
        return FileWorkerLock(path / "lamina-workers" / f"{_digest(namespace)}.lock")
    if (pg := _postgres(store)) is not None:
        return AdvisoryWorkerLock(pg, namespace)
    return LocalWorkerLock(store, namespace)
