"""The reads of the Postgres store: records by id or filter, counts, vectors and search.

Each read is one statement on a pooled connection; :meth:`RecordReads.search_many` ranks
the dense and lexical channels and fuses them in the same statement (see :mod:`.sql`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.embeddings import Embeddings
from psycopg import sql

from ...records.model import (
    RECORD_TYPES,
    Granularity,
    MemoryRecord,
    parse_granularity,
    validate_namespace,
)
from ..arguments import as_ids
from ..base import Scope, SearchAnswer, SearchMode, SearchRequest
from ..filters import SearchFilter
from ..fusion import FusionConfig
from .connections import Transactions
from .lexical import PostgresLexicalIndex
from .rows import stored_vectors
from .schema import Names
from .sql import Ranking, decode_hits, filter_clause, plan_request, search_statement


class RecordReads(Transactions):
    """Read methods; the store sets ``names``, ``embeddings``, ``fusion`` and ``languages``."""

    names: Names
    embeddings: Embeddings
    fusion: FusionConfig
    languages: list[str]

    def _stored(
        self, gran: Granularity, namespace: str
    ) -> Callable[[list[str]], dict[str, tuple[str, list[float]]]]:
        """``{id: (index text, vector)}`` of stored records: unchanged ones keep their vector."""

        def read(ids: list[str]) -> dict[str, tuple[str, list[float]]]:
            with self.atomic() as conn:
                return stored_vectors(conn, self.names, gran, namespace, ids)

        return read

    def _record(self, gran: Granularity, body: str) -> MemoryRecord:
        return RECORD_TYPES[gran].model_validate_json(body)

    def _condition(
        self,
        gran: Granularity,
        namespace: str,
        ids: Sequence[str] | None,
        scope: Scope,
        params: dict[str, Any],
    ) -> sql.Composed:
        flt = SearchFilter(namespace, scope.get("window"), scope.get("where") or {})
        condition = filter_clause(flt, gran, params, "")
        if ids is not None:
            params["ids"] = as_ids(ids)
            condition = sql.SQL("{} AND t.id = ANY(%(ids)s)").format(condition)
        return condition

    def _get(
        self, gran: Granularity, namespace: str, ids: Sequence[str] | None, scope: Scope
    ) -> list[MemoryRecord]:
        statement, params = self._get_query(gran, namespace, ids, scope)
        with self.atomic() as conn:
            rows = conn.execute(statement, params).fetchall()
        return self._got(gran, rows, params)

    def _get_query(
        self, gran: Granularity, namespace: str, ids: Sequence[str] | None, scope: Scope
    ) -> tuple[sql.Composed, dict[str, Any]]:
        """The statement of ``get`` and its parameters."""
        params: dict[str, Any] = {}
        condition = self._condition(gran, namespace, ids, scope, params)
        statement = sql.SQL(
            "SELECT t.id, t.record FROM {} t WHERE {} ORDER BY t.occurred_at, t.id"
        ).format(self.names.records(gran), condition)
        return statement, params

    def _got(
        self, gran: Granularity, rows: Sequence[tuple[Any, ...]], params: dict[str, Any]
    ) -> list[MemoryRecord]:
        """The records of ``get``'s rows: in the order of the ids asked, or time order."""
        records = [self._record(gran, body) for _, body in rows]
        if "ids" in params:
            position = {rid: n for n, rid in enumerate(params["ids"])}
            records.sort(key=lambda r: position[r.id])
        return records

    def count(self, granularity: Granularity | str, namespace: str) -> int:
        """Return how many records of a granularity a namespace holds."""
        gran = parse_granularity(granularity)
        statement = sql.SQL("SELECT count(*) FROM {} WHERE namespace = %s").format(
            self.names.records(gran)
        )
        with self.atomic() as conn:
            row = conn.execute(statement, [validate_namespace(namespace)]).fetchone()
        return int(row[0]) if row is not None else 0

    def vectors(
        self, granularity: Granularity | str, namespace: str, ids: Sequence[str]
    ) -> dict[str, list[float]]:
        """Return the stored embedding of each record id that exists in ``namespace``."""
        gran = parse_granularity(granularity)
        wanted, ns = as_ids(ids), validate_namespace(namespace)
        found = self._stored(gran, ns)(wanted)
        return {rid: found[rid][1] for rid in wanted if rid in found}

    def search_many(self, request: SearchRequest) -> SearchAnswer:
        """Every ranking of ``request`` in one SQL statement: dense, lexical and their RRF.

        Every query and filter is checked before any work, and each distinct query text
        is embedded once. A namespace with no records ranks nothing; a request of no
        ranking answers ``{}``.
        """
        searches, rankings, params = plan_request(
            request, embed=self.embeddings.embed_query, fusion=self.fusion
        )
        if not rankings:  # a statement of no ranking is no statement
            return {}
        statement = self._statement(request.mode, rankings, params)
        with self.atomic() as conn:
            rows = conn.execute(statement, params).fetchall()
        return decode_hits(searches, rankings, rows)

    def _statement(
        self, mode: SearchMode, rankings: list[Ranking], params: dict[str, Any]
    ) -> sql.Composed:
        """The one statement of a request's ``rankings`` (:func:`.sql.search_statement`)."""
        fusion, languages = self.fusion, self.languages
        return search_statement(
            self.names, rankings, mode=mode, fusion=fusion, languages=languages, params=params
        )

    def lexical_index(self, granularity: Granularity | str, namespace: str) -> PostgresLexicalIndex:
        """The keyword side of one granularity and namespace, read live from Postgres."""
        gran = parse_granularity(granularity)
        return PostgresLexicalIndex(
            self.atomic, self.names, gran, validate_namespace(namespace), self.languages
        )


__all__ = ["RecordReads"]
