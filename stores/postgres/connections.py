"""Connections of the Postgres store: where a DSN points, session settings, transactions.

:class:`Transactions` gives every store call a connection from the pool inside a
transaction, and lets :meth:`Transactions.atomic` bind one connection to all the calls
made inside a block, so they commit together.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict
from psycopg_pool import ConnectionPool

from ...errors import InvalidInputError, StoreUnavailableError


def describe_dsn(dsn: str) -> str:
    """Where a DSN points (host, port, database), never its password."""
    try:
        info = conninfo_to_dict(dsn)
    except psycopg.ProgrammingError as e:
        raise InvalidInputError(f"not a valid Postgres connection string: {e}") from e
    host = info.get("host") or "localhost"
    port = info.get("port") or "5432"
    return f"postgres://{host}:{port}/{info.get('dbname') or ''}"


def configure_connection(conn: psycopg.Connection[Any]) -> None:
    """Session settings every pooled connection gets: pgvector's filtered HNSW scans.

    With ``relaxed_order`` an HNSW scan that a namespace or filter thins out goes on
    until it has enough rows, instead of returning fewer than asked; the search re-sorts.
    """
    conn.execute("SET hnsw.iterative_scan = relaxed_order")
    conn.execute("SET hnsw.ef_search = 100")
    conn.commit()


class Transactions:
    """Pooled connections, each call in a transaction; the store subclasses it."""

    pool: ConnectionPool[Any]
    where: str
    """Where the database is, for error messages (never the password)."""
    _active: ContextVar[psycopg.Connection[Any] | None]

    def _bind(self, pool: ConnectionPool[Any], where: str) -> None:
        self.pool = pool
        self.where = where
        self._active = ContextVar(f"lamina_pg_{id(self)}", default=None)

    def close(self) -> None:
        """Close the connection pool."""
        self.pool.close()

    @contextmanager
    def _guard(self) -> Iterator[None]:
        """Turn a lost or refused connection into a :class:`StoreUnavailableError`."""
        try:
            yield
        except psycopg.OperationalError as e:
            raise StoreUnavailableError(
                f"{self.where} failed during a call ({type(e).__name__}: {e}); the call was "
                "rolled back, so it can be retried"
            ) from e

    @contextmanager
    def atomic(self) -> Iterator[psycopg.Connection[Any]]:
        """One transaction for every store call made inside the block (nested: a savepoint).

        Everything commits when the outermost block ends, or nothing does if it raises.
        """
        conn = self._active.get()
        if conn is not None:
            with conn.transaction():
                yield conn
            return
        with self._guard(), self.pool.connection() as conn:
            token = self._active.set(conn)
            try:
                with conn.transaction():
                    yield conn
            finally:
                self._active.reset(token)
