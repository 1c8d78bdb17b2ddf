"""The lexical view of one (granularity, namespace) on Postgres, read live from its table.

What the nodes ask of a store's lexical index (the ids it holds, the distinct speakers or
subjects, the latest time, each document's keyword score) is answered by one query each,
so there is no in-process copy to keep in step with other processes' writes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any

import psycopg
from psycopg import sql

from ...records.model import Granularity
from .schema import BIGINT_MAX, Names

DISTINCT = sql.SQL(
    "SELECT v FROM (SELECT meta -> %(key)s AS v, max(written) AS w FROM {} "
    "WHERE namespace = %(ns)s AND meta ? %(key)s GROUP BY 1) s "
    "ORDER BY w DESC LIMIT %(limit)s"
)
"""A namespace's distinct values of ``meta -> key``, last-written first (format: the table)."""


def distinct_params(key: str, limit: int) -> dict[str, Any]:
    """:data:`DISTINCT`'s parameters but the namespace; a limit past bigint asks for all."""
    return {"key": key, "limit": min(limit, BIGINT_MAX)}


Connect = Callable[[], AbstractContextManager[psycopg.Connection[Any]]]
"""A connection inside a transaction, checked out of the store's pool."""


class PostgresLexicalIndex:
    """The keyword side of one granularity and namespace, as a live view of the table."""

    def __init__(
        self,
        connect: Connect,
        names: Names,
        granularity: Granularity,
        namespace: str,
        languages: Sequence[str],
    ) -> None:
        self._connect = connect
        self._names = names
        self.granularity = granularity
        self.namespace = namespace
        self._languages = list(languages)

    def _rows(self, query: sql.Composed, params: dict[str, Any]) -> list[tuple[Any, ...]]:
        with self._connect() as conn:
            rows: list[tuple[Any, ...]] = conn.execute(
                query, {"ns": self.namespace, **params}
            ).fetchall()
        return rows

    @property
    def _table(self) -> sql.Identifier:
        return self._names.records(self.granularity)

    def ids(self) -> set[str]:
        """Return the ids the namespace holds in this granularity."""
        query = sql.SQL("SELECT id FROM {} WHERE namespace = %(ns)s").format(self._table)
        return {str(r[0]) for r in self._rows(query, {})}

    def __len__(self) -> int:
        query = sql.SQL("SELECT count(*) FROM {} WHERE namespace = %(ns)s").format(self._table)
        return int(self._rows(query, {})[0][0])

    def __contains__(self, record_id: object) -> bool:
        if not isinstance(record_id, str):
            return False
        query = sql.SQL("SELECT 1 FROM {} WHERE namespace = %(ns)s AND id = %(id)s").format(
            self._table
        )
        return bool(self._rows(query, {"id": record_id}))

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self.ids()))

    def scores(self, query: str) -> dict[str, float]:
        """Return the ``ts_rank`` score of every document that shares a term with ``query``."""
        any_terms, any_terms_of = self._names("any_terms"), self._names("any_terms_of")
        # the query parsed once per configuration, not once per row (see search_statement)
        tq = sql.SQL("coalesce(qc.tq, {}(t.ts_config::regconfig, %(q)s))").format(any_terms)
        statement = sql.SQL(
            "WITH qc AS MATERIALIZED (SELECT c AS cfg, {at}(c::regconfig, %(q)s) AS tq "
            "FROM unnest(%(languages)s::text[]) c) "
            "SELECT t.id, ts_rank(t.tsv, {tq}, 0)::float8 FROM {t} t "
            "LEFT JOIN qc ON qc.cfg = t.ts_config WHERE t.namespace = %(ns)s "
            "AND t.tsv @@ {ato}(%(languages)s::regconfig[], %(q)s) AND t.tsv @@ {tq}"
        ).format(at=any_terms, ato=any_terms_of, t=self._table, tq=tq)
        rows = self._rows(statement, {"q": query, "languages": self._languages})
        return {str(rid): float(score) for rid, score in rows}

    def latest(self) -> float | None:
        """The latest ``occurred_at`` (POSIX seconds), or None for an empty namespace."""
        query = sql.SQL("SELECT max(occurred_at) FROM {} WHERE namespace = %(ns)s").format(
            self._table
        )
        found = self._rows(query, {})[0][0]
        return None if found is None else float(found.timestamp())

    def distinct(self, key: str, limit: int = 64) -> list[Any]:
        """Distinct values of a metadata field, last-written documents first, at most ``limit``."""
        return [r[0] for r in self._rows(DISTINCT.format(self._table), distinct_params(key, limit))]
