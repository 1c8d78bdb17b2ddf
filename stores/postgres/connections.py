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
from psycopg import errors as pg_errors
from psycopg.conninfo import conninfo_to_dict
from psycopg_pool import ConnectionPool

from ...errors import InvalidInputError, StatementTimeoutError, StoreUnavailableError

TIMEOUTS: tuple[type[psycopg.Error], ...] = (pg_errors.QueryCanceled, pg_errors.LockNotAvailable)
"""The errors of a statement the server cancelled for running or waiting too long."""


def describe_dsn(dsn: str) -> str:
    """Where a DSN points (host, port, database), never its password."""
    try:
        info = conninfo_to_dict(dsn)
    except psycopg.ProgrammingError as e:
        raise InvalidInputError(f"not a valid Postgres connection string: {e}") from e
    host = info.get("host") or "localhost"
    port = info.get("port") or "5432"
    return f"postgres://{host}:{port}/{info.get('dbname') or ''}"


HNSW_EF_SEARCH = 800
"""Candidates an HNSW scan keeps (pgvector's default is 40; at most 1,000).

The index is built cheaply (:data:`~.schema.HNSW_M`, ``HNSW_EF_CONSTRUCTION``) so writes
are fast, and searched widely so recall is not lost (measured:
``benchmarks/postgres_large_namespace.json``). Only large namespaces reach the index: a
small one's rows are read by its ``(namespace, ...)`` indexes and ranked exactly.
"""


def configure_connection(conn: psycopg.Connection[Any]) -> None:
    """Session settings every pooled connection gets: pgvector's filtered HNSW scans.

    With ``relaxed_order`` an HNSW scan that a namespace or filter thins out goes on
    until it has enough rows, instead of returning fewer than asked; the search re-sorts.
    ``hnsw.ef_search`` is :data:`HNSW_EF_SEARCH`.
    """
    conn.execute("SET hnsw.iterative_scan = relaxed_order")
    conn.execute(f"SET hnsw.ef_search = {HNSW_EF_SEARCH:d}")
    conn.commit()


def timeout_setting(error: psycopg.Error) -> str:
    """The setting that cancelled a statement: ``lock_timeout`` or ``statement_timeout``."""
    return "lock_timeout" if isinstance(error, pg_errors.LockNotAvailable) else "statement_timeout"


def timed_out(error: psycopg.Error, where: str, value: str | None) -> StatementTimeoutError:
    """The lamina error of a statement cancelled by ``statement_timeout`` / ``lock_timeout``."""
    setting = timeout_setting(error)
    shown = f" = {value}" if value else ""
    return StatementTimeoutError(
        f"a statement on {where} was cancelled by the server's {setting}{shown} "
        f"({error.diag.message_primary or error}); the call was rolled back, nothing was "
        f"kept. Raise {setting} for lamina's connections (add "
        f"options='-c {setting}=30s' to the DSN, or ALTER ROLE <role> SET {setting} = "
        "'30s'), or find what holds the statement up (pg_stat_activity)",
        setting=setting,
        value=value,
    )


def unavailable(error: psycopg.Error, where: str) -> StoreUnavailableError:
    """The retryable lamina error of a connection lost, refused or not given in time."""
    return StoreUnavailableError(
        f"{where} failed during a call ({type(error).__name__}: {error}); the call was "
        "rolled back, so it can be retried once the server answers (retryable)"
    )


def setting_of(conn: psycopg.Connection[Any], setting: str) -> str | None:
    """The value of ``setting`` on ``conn``, or None if the connection cannot tell."""
    try:
        with conn.transaction():
            row = conn.execute(f"SHOW {setting}").fetchone()  # one of two fixed names
    except psycopg.Error:
        return None
    return str(row[0]) if row else None


class Transactions:
    """Pooled connections, each call in a transaction; the store subclasses it."""

    pool: ConnectionPool[Any]
    where: str
    """Where the database is, for error messages (never the password)."""
    closed: bool = False
    """Whether :meth:`close` was called."""
    _active: ContextVar[psycopg.Connection[Any] | None]

    def _bind(self, pool: ConnectionPool[Any], where: str) -> None:
        self.pool = pool
        self.where = where
        self._active = ContextVar(f"lamina_pg_{id(self)}", default=None)

    def close(self) -> None:
        """Close the connection pool; the store's async calls are refused from now on too."""
        self.closed = True
        self.pool.close()

    @contextmanager
    def _guard(self) -> Iterator[None]:
        """Turn a lost or refused connection into a :class:`StoreUnavailableError`.

        A statement the server cancelled for its time limit (when no connection is at
        hand to ask the setting's value) becomes a :class:`StatementTimeoutError`.
        """
        try:
            yield
        except TIMEOUTS as e:
            raise timed_out(e, self.where, None) from e
        except psycopg.OperationalError as e:
            raise unavailable(e, self.where) from e

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
            except TIMEOUTS as e:  # rolled back: the connection can say what limited it
                raise timed_out(e, self.where, setting_of(conn, timeout_setting(e))) from e
            finally:
                self._active.reset(token)
