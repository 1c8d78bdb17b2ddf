"""``PostgresMemoryStore``: every granularity in Postgres, searched by Postgres alone.

pgvector (HNSW, cosine) ranks the dense channel, full text (``tsvector`` with a GIN index,
``ts_rank``) the lexical one, and RRF fuses them in the same SQL statement, so a
:meth:`~PostgresMemoryStore.search_many` request is one round trip. There is no
in-process index, change log, journal or snapshot: every process reads the committed
rows, so each sees every other's writes on both channels at once. A supersede and its
audit entry, a delete, or everything inside :meth:`~PostgresMemoryStore.atomic` commit
together or not at all.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import asdict
from typing import Any

import psycopg
from langchain_core.embeddings import Embeddings
from psycopg import sql
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from ...embedders.identity import embedding_name
from ...errors import InvalidInputError, RecordNotFoundError, StoreUnavailableError
from ...records.model import FactRecord, Granularity, MemoryRecord, validate_namespace
from ..arguments import CheckedCalls, as_embeddings, by_granularity, check_record, checked_records
from ..audited import Supersede
from ..base import Scope, SearchByRequest
from ..erasure import PARTS, erased_namespaces
from ..fusion import FusionConfig
from ..indexing import IndexTextPolicy
from ..traced import trace_store_calls
from .aio import AsyncCalls
from .connections import configure_connection, describe_dsn
from .documents import ProfilesAndAudit
from .erasure import erased_tables, vacuum_full
from .languages import LanguageOf, metadata_language
from .rows import Row, upsert
from .schema import DEFAULT_SCHEMA, Names, dimension_of, ensure_vector_extension, migrate


@trace_store_calls
class PostgresMemoryStore(CheckedCalls, AsyncCalls, SearchByRequest, ProfilesAndAudit):
    """A :class:`~lamina.stores.base.MemoryStore` over an injected psycopg connection pool.

    The pool's connections should be configured with :func:`configure_connection`
    (:meth:`connect` does it). ``languages`` are the text-search configurations records
    may be indexed with, the first being the default; a record's own one comes from
    ``language_of`` (default: ``metadata["language"]``), and one Postgres does not know,
    or that is not in ``languages``, falls back to ``simple``. The async twins (``aget``,
    ``asearch_many``, ``aadd``...; :mod:`.aio`) run on ``async_pool``, or on a pool opened
    on ``dsn`` at the first async call.
    """

    def __init__(
        self,
        pool: ConnectionPool[Any],
        *,
        embeddings: Embeddings | None = None,
        schema: str = DEFAULT_SCHEMA,
        index_policy: IndexTextPolicy | None = None,
        fusion: FusionConfig | None = None,
        dimensions: int | None = None,
        languages: Sequence[str] = ("english",),
        language_of: LanguageOf = metadata_language,
        where: str = "Postgres",
        dsn: str | None = None,
        async_pool: AsyncConnectionPool[Any] | None = None,
    ) -> None:
        embeddings = as_embeddings(embeddings)
        if isinstance(languages, str) or not languages:
            raise InvalidInputError("languages must be a non-empty list of configuration names")
        self._bind(pool, where)
        self._bind_async(dsn, async_pool, pool.max_size)
        self.embeddings = embeddings
        self.index_policy = index_policy or IndexTextPolicy()
        self.fusion = fusion or FusionConfig()
        self.names = Names(schema)
        self._language_of = language_of
        self.dimension = dimension_of(embeddings, dimensions)
        settings = {
            "dimension": str(self.dimension),
            "embedding": embedding_name(embeddings),
            "index_policy": json.dumps(asdict(self.index_policy), sort_keys=True),
        }
        with self._guard(), pool.connection() as conn:
            ensure_vector_extension(conn, where)
            migrate(conn, self.names, dim=self.dimension, settings=settings)
            known = {str(r[0]) for r in conn.execute("SELECT cfgname FROM pg_ts_config").fetchall()}
        unknown = [c for c in languages if c not in known]
        if unknown:
            raise InvalidInputError(
                f"unknown text-search configuration(s) {unknown}; {where} knows {sorted(known)}"
            )
        self.languages = list(dict.fromkeys([*languages, "simple"]))

    @classmethod
    def connect(
        cls, dsn: str, *, min_size: int = 1, max_size: int = 8, timeout: float = 10.0, **kwargs: Any
    ) -> PostgresMemoryStore:
        """Open a pool on ``dsn`` and the store on it (creating its schema if needed).

        Raises:
            StoreUnavailableError: nothing answers at the DSN's host (named, with the cause).
            StoreConfigurationError: pgvector is missing, or the schema disagrees with the
                embedder or this code.
        """
        where = describe_dsn(dsn)
        try:  # one plain connection first: its error names the cause, a pool's would not
            with psycopg.connect(dsn, connect_timeout=max(1, int(timeout))) as conn:
                ensure_vector_extension(conn, where)
        except psycopg.OperationalError as e:
            raise StoreUnavailableError(f"cannot connect to {where}: {e}".strip()) from e
        pool: ConnectionPool[Any] = ConnectionPool(
            dsn,
            min_size=min_size,
            max_size=max_size,
            timeout=timeout,
            kwargs={"prepare_threshold": None},  # plan each search with its own values
            configure=configure_connection,
            # a connection the server dropped (a restart, a failover) is replaced before a
            # call gets it, so only calls in flight while the server is away fail
            check=ConnectionPool.check_connection,
            name=f"lamina {where}",
            open=True,
        )
        try:
            return cls(pool, where=where, dsn=dsn, **kwargs)
        except BaseException:
            pool.close()
            raise

    # ----------------------------------------------------------------- writes
    def _language(self, record: MemoryRecord) -> str:
        chosen = self._language_of(record)
        if chosen is None:
            return self.languages[0]
        return chosen if chosen in self.languages else "simple"

    def add(self, namespace: str, records: Sequence[MemoryRecord]) -> list[str]:
        """Insert or replace ``records`` (idempotent by id), all in one transaction.

        Every record is validated and embedded before the first write, so bad input or a
        failing embedding model leaves the store untouched.
        """
        return self._write(namespace, checked_records(namespace, records), {})

    def add_embedded(
        self,
        namespace: str,
        records: Sequence[MemoryRecord],
        vectors: Sequence[Sequence[float] | None],
    ) -> list[str]:
        """Like :meth:`add`, with each record's vector given (None: embed it here).

        For copying records from another store written with the same embedder and index
        text policy (``lamina migrate``): the vectors are stored as they are, so nothing
        is embedded twice. A vector of the wrong size is refused with both sizes.

        Raises:
            InvalidInputError: ``vectors`` does not pair one to one with ``records``.
        """
        checked = checked_records(namespace, records)
        given = list(vectors)
        if len(given) != len(checked):
            raise InvalidInputError(
                f"add_embedded() got {len(given)} vectors for {len(checked)} records"
            )
        known: dict[tuple[Granularity, str], list[float]] = {
            (r.granularity, r.id): [float(x) for x in v]
            for r, v in zip(checked, given, strict=True)
            if v is not None
        }
        return self._write(namespace, checked, known)

    def _write(
        self,
        namespace: str,
        checked: list[MemoryRecord],
        known: Mapping[tuple[Granularity, str], list[float]],
    ) -> list[str]:
        """Embed what has no vector yet, then upsert every group in one transaction."""
        if not checked:
            return []
        batches = []
        for gran, group in by_granularity(checked).items():
            given = {rid: v for (g, rid), v in known.items() if g == gran}
            batches.append((gran, self._prepare(gran, namespace, group, given)))
        with self.atomic() as conn:
            for gran, rows in batches:
                upsert(conn, self.names, gran, rows)
        return [r.id for r in checked]

    def _prepare(
        self,
        gran: Granularity,
        namespace: str,
        records: list[MemoryRecord],
        given: Mapping[str, list[float]] | None = None,
    ) -> list[Row]:
        """Rows of the upsert: each record embedded, reusing the vector of unchanged text.

        A ``given`` vector (by id) is its record's vector for the current index text.
        """
        looked_up = self._stored(gran, namespace)
        vectors: Mapping[str, list[float]] = given or {}
        texts = {r.id: self.index_policy.render(r) for r in records if r.id in vectors}

        def stored(ids: list[str]) -> dict[str, tuple[str, list[float]]]:
            rest = [i for i in ids if i not in texts]
            found = looked_up(rest) if rest else {}
            found.update((i, (texts[i], vectors[i])) for i in ids if i in texts)
            return found

        return self._encoded(gran, namespace, records, stored)

    def update(self, namespace: str, record: MemoryRecord) -> MemoryRecord:
        """Replace an existing record; raise :class:`RecordNotFoundError` if it is missing."""
        checked = check_record(namespace, record)
        gran = checked.granularity
        with self.atomic() as conn:
            if not self._lock_rows(conn, gran, namespace, [checked.id]):
                raise RecordNotFoundError(
                    f"no {gran.value} record {checked.id!r} in namespace {namespace!r}; "
                    "use add() to create it"
                )
            upsert(conn, self.names, gran, self._prepare(gran, namespace, [checked]))
        return checked

    def _lock_rows(
        self, conn: psycopg.Connection[Any], gran: Granularity, namespace: str, ids: list[str]
    ) -> list[MemoryRecord]:
        """The stored records among ``ids``, locked until the transaction ends."""
        query = sql.SQL(
            "SELECT record FROM {} WHERE namespace = %s AND id = ANY(%s) FOR UPDATE"
        ).format(self.names.records(gran))
        rows = conn.execute(query, [namespace, ids]).fetchall()
        return [self._record(gran, r[0]) for r in rows]

    def _supersede(self, asked: Supersede) -> FactRecord:
        """The fact and its audit entry land in one transaction."""
        namespace = asked.namespace
        fact = Granularity.FACT
        with self.atomic() as conn:
            found = self._lock_rows(conn, fact, namespace, [asked.fact_id])
            updated, entry = asked.close(found, self.get)
            upsert(conn, self.names, fact, self._prepare(fact, namespace, [updated]))
            if entry is not None:
                self._put_audit(conn, entry)
        return updated

    def _delete(
        self, gran: Granularity, namespace: str, ids: Sequence[str] | None, scope: Scope
    ) -> int:
        params: dict[str, Any] = {}
        condition = self._condition(gran, namespace, ids, scope, params)
        statement = sql.SQL("DELETE FROM {} t WHERE {}").format(self.names.records(gran), condition)
        with self.atomic() as conn:
            return conn.execute(statement, params).rowcount

    def delete_namespace(self, namespace: str) -> int:
        """Delete every record, the profile and the audit log of ``namespace``; return the count."""
        validate_namespace(namespace)
        total = 0
        with self.atomic() as conn:
            for gran in Granularity:
                statement = sql.SQL("DELETE FROM {} WHERE namespace = %s").format(
                    self.names.records(gran)
                )
                total += conn.execute(statement, [namespace]).rowcount
            for table in ("profiles", "audit"):
                statement = sql.SQL("DELETE FROM {} WHERE namespace = %s").format(self.names(table))
                conn.execute(statement, [namespace])
        return total

    def erase(self, namespaces: str | Collection[str], parts: Collection[str] = PARTS) -> float:
        """``VACUUM (FULL)`` the tables of ``parts``, so their files hold no deleted row.

        A forget calls it once its transaction committed; it returns the seconds taken.
        The rewrite is of whole tables (every namespace's rows), each locked meanwhile;
        the write-ahead log and backups still hold what was deleted (:mod:`.erasure`).

        Raises:
            InvalidInputError: Called inside :meth:`atomic`: a vacuum runs only after the
                deletes committed.
        """
        erased_namespaces(namespaces)
        if self._active.get() is not None:
            raise InvalidInputError(
                "erase() cannot run inside store.atomic(): call it after the block, once "
                "the deletes have committed"
            )
        with self._guard():
            return vacuum_full(self.pool, erased_tables(self.names, parts))


__all__ = ["LanguageOf", "PostgresMemoryStore"]
