"""Erasure on Postgres: the table files stop holding deleted rows.

A ``DELETE`` (or an ``UPDATE``) leaves the old row version in the table's heap, its TOAST
table and its indexes until a vacuum; a plain ``VACUUM`` marks the space reusable but does
not overwrite it. ``VACUUM (FULL)`` writes each table and its indexes into new files and
truncates the old ones, so none of the table's files holds a deleted version afterwards.
It takes an ``ACCESS EXCLUSIVE`` lock on each table while it runs (other sessions' reads
and writes of that table wait), and cannot run inside a transaction.

What this cannot erase, and the docs say so: the write-ahead log (``pg_wal``, kept until
Postgres recycles the segments; replicas and WAL archives), and backups. Those are the
database operator's.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Sequence
from typing import Any

from psycopg import sql
from psycopg_pool import ConnectionPool

from ...records.model import Granularity
from ..erasure import erased_parts
from .schema import Names


def erased_tables(names: Names, parts: Collection[str]) -> list[sql.Identifier]:
    """The tables that hold ``parts`` (granularities, ``profile``, ``audit``)."""
    parts = erased_parts(parts)
    tables = [names.records(g) for g in Granularity if g.value in parts]
    if "profile" in parts:
        tables.append(names("profiles"))
    if "audit" in parts:
        tables.append(names("audit"))
    return tables


def vacuum_full(pool: ConnectionPool[Any], tables: Sequence[sql.Identifier]) -> float:
    """``VACUUM (FULL)`` each table on a pooled connection in autocommit; return seconds."""
    start = time.perf_counter()
    with pool.connection() as conn:
        conn.autocommit = True  # VACUUM refuses to run inside a transaction
        try:
            for table in tables:
                conn.execute(sql.SQL("VACUUM (FULL) {}").format(table))
        finally:
            conn.autocommit = False
    return time.perf_counter() - start


__all__ = ["erased_tables", "vacuum_full"]
