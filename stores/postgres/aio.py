"""Async twins of the Postgres store's calls, on a ``psycopg_pool.AsyncConnectionPool``.

An app serving many requests on one event loop awaits these instead of giving each call
a worker thread: while one waits on Postgres, the loop runs the others. Each twin runs
the statement its sync method builds (the same functions make both), so the two give the
same answers. Embedding, which is CPU work, runs through the embedder's own async API
(``aembed_query`` / ``aembed_documents``).

The async pool is opened on the first async call, on the event loop that makes it; a
pool serves one loop, so a call from another loop opens another. :meth:`AsyncCalls.aclose`
closes it, and so does the end of its loop (``asyncio.run`` returning).
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from functools import partial
from typing import Any, Unpack

import psycopg
from psycopg import sql
from psycopg_pool import AsyncConnectionPool, PoolClosed

from ...errors import InvalidInputError
from ...records.audit import AuditEntry
from ...records.model import (
    Granularity,
    MemoryRecord,
    ProfileRecord,
    parse_granularity,
    validate_namespace,
)
from ..arguments import as_ids, by_granularity, checked_records, get_limit
from ..base import (
    PLAIN,
    GetOptions,
    ScoredRecord,
    SearchAnswer,
    SearchOptions,
    SearchRequest,
    plain_request,
)
from ..indexing import IndexTextPolicy
from ..writes import prepare
from .connections import HNSW_EF_SEARCH, TIMEOUTS, timed_out, timeout_setting, unavailable
from .documents import audit_query, body_query
from .lexical import DISTINCT, distinct_params
from .reads import RecordReads
from .rows import Row, encode, upsert_params, upsert_statement
from .schema import Names
from .sql import decode_hits, plan_request


async def aconfigure_connection(conn: psycopg.AsyncConnection[Any]) -> None:
    """The session settings of :func:`~.connections.configure_connection`, for async pools."""
    await conn.execute("SET hnsw.iterative_scan = relaxed_order")
    await conn.execute(f"SET hnsw.ef_search = {HNSW_EF_SEARCH:d}")
    await conn.commit()


class AsyncCalls(RecordReads):
    """The async methods; the store sets the DSN or an async pool with :meth:`_bind_async`."""

    index_policy: IndexTextPolicy
    dimension: int
    _dsn: str | None
    _apool: AsyncConnectionPool[Any] | None
    _apool_loop: asyncio.AbstractEventLoop | None
    _apool_size: int
    _apool_locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock]
    _apool_guard: asyncio.Task[None] | None

    def _bind_async(
        self, dsn: str | None, pool: AsyncConnectionPool[Any] | None, max_size: int
    ) -> None:
        self._dsn = dsn
        self._apool = pool
        self._apool_loop = None
        self._apool_size = max_size
        self._apool_locks = weakref.WeakKeyDictionary()
        self._apool_guard = None

    async def _async_pool(self) -> AsyncConnectionPool[Any]:
        """The async pool of the running loop: the injected one, or one opened on the DSN.

        Calls that start together on a fresh loop wait for one pool, never open several.
        """
        if self.closed:  # as the sync calls are: a closed store opens no pool again
            raise unavailable(PoolClosed(f"the store on {self.where} is closed"), self.where)
        loop = asyncio.get_running_loop()
        if self._apool is not None and (self._dsn is None or self._apool_loop in (None, loop)):
            return self._apool
        if self._dsn is None:
            raise InvalidInputError(
                "this Postgres store has no DSN to open an async pool on: open it with "
                "PostgresMemoryStore.connect(dsn), or pass async_pool= to its constructor"
            )
        lock = self._apool_locks.setdefault(loop, asyncio.Lock())
        async with lock:
            if self._apool is not None and self._apool_loop is loop:
                return self._apool
            pool: AsyncConnectionPool[Any] = AsyncConnectionPool(
                self._dsn,
                min_size=1,
                max_size=self._apool_size,
                timeout=self.pool.timeout,  # as long as the sync pool waits for a connection
                kwargs={"prepare_threshold": None},
                configure=aconfigure_connection,
                check=AsyncConnectionPool.check_connection,  # as the sync pool: drop dead ones
                name=f"lamina async {self.where}",
                open=False,
            )
            await pool.open()
            self._apool, self._apool_loop = pool, loop
            self._apool_guard = loop.create_task(_close_with_loop(pool), name="lamina-pool-closer")
            return pool

    async def aclose(self) -> None:
        """Close the async pool (if one is open) and the sync pool.

        A pool is closed on the loop that opened it; one left by a loop that has ended
        (its tasks are gone, so closing it would wait forever) is dropped instead.
        """
        pool, loop = self._apool, self._apool_loop
        self._apool = self._apool_loop = None
        if pool is not None and loop in (None, asyncio.get_running_loop()):
            await pool.close(timeout=5.0)
        guard, self._apool_guard = self._apool_guard, None
        if guard is not None:
            guard.cancel()
        self.close()

    @asynccontextmanager
    async def aatomic(self) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
        """One transaction on an async pooled connection; it commits when the block ends."""
        pool = await self._async_pool()
        try:
            async with pool.connection() as conn:
                try:
                    async with conn.transaction():
                        yield conn
                except TIMEOUTS as e:  # rolled back: the connection can say what limited it
                    setting = timeout_setting(e)
                    raise timed_out(e, self.where, await _asetting(conn, setting)) from e
        except TIMEOUTS as e:
            raise timed_out(e, self.where, None) from e
        except psycopg.OperationalError as e:
            raise unavailable(e, self.where) from e

    async def _rows(self, statement: sql.Composed, params: Any) -> list[tuple[Any, ...]]:
        async with self.aatomic() as conn:
            cursor = await conn.execute(statement, params)
            rows: list[tuple[Any, ...]] = await cursor.fetchall()
        return rows

    # ------------------------------------------------------------------ reads
    async def aget(
        self,
        granularity: Granularity | str,
        namespace: str,
        ids: Sequence[str] | None = None,
        **options: Unpack[GetOptions],
    ) -> list[MemoryRecord]:
        """Async :meth:`get`."""
        gran, limit = parse_granularity(granularity), get_limit(options)
        statement, params = self._get_query(gran, namespace, ids, options)
        return self._got(gran, await self._rows(statement, params), params)[:limit]

    async def acount(self, granularity: Granularity | str, namespace: str) -> int:
        """Async :meth:`count`."""
        statement = sql.SQL("SELECT count(*) FROM {} WHERE namespace = %s").format(
            self.names.records(parse_granularity(granularity))
        )
        rows = await self._rows(statement, [validate_namespace(namespace)])
        return int(rows[0][0]) if rows else 0

    async def avectors(
        self, granularity: Granularity | str, namespace: str, ids: Sequence[str]
    ) -> dict[str, list[float]]:
        """Async :meth:`vectors`."""
        gran = parse_granularity(granularity)
        wanted, ns = as_ids(ids), validate_namespace(namespace)
        found = await self._astored(gran, ns, wanted)
        return {rid: found[rid][1] for rid in wanted if rid in found}

    async def _astored(
        self, gran: Granularity, namespace: str, ids: list[str]
    ) -> dict[str, tuple[str, list[float]]]:
        query = sql.SQL(
            "SELECT id, document, embedding::real[] FROM {} WHERE namespace = %s AND id = ANY(%s)"
        ).format(self.names.records(gran))
        rows = await self._rows(query, [namespace, ids])
        return {str(i): (str(d), [float(x) for x in v]) for i, d, v in rows}

    async def adistinct(
        self, granularity: Granularity | str, namespace: str, key: str, limit: int = 64
    ) -> list[Any]:
        """Async ``lexical_index(granularity, namespace).distinct(key, limit)``."""
        query = DISTINCT.format(self.names.records(parse_granularity(granularity)))
        params = {"ns": validate_namespace(namespace), **distinct_params(key, limit)}
        return [r[0] for r in await self._rows(query, params)]

    async def asearch_many(self, request: SearchRequest) -> SearchAnswer:
        """Async :meth:`search_many`: every query and filter is checked before embedding."""
        searches, rankings, params = plan_request(request, embed=_unused, fusion=self.fusion)
        if not rankings:  # a statement of no ranking is no statement
            return {}
        if request.mode != "bm25":
            texts = {r.query_key: s.query for s, r in zip(searches, rankings, strict=True)}
            for key, text in texts.items():
                vector = await self.embeddings.aembed_query(text)
                params[f"{key}_vec"] = [float(x) for x in vector]
        statement = self._statement(request.mode, rankings, params)
        return decode_hits(searches, rankings, await self._rows(statement, params))

    async def asearch(
        self,
        query: str,
        granularity: Granularity | str,
        namespace: str,
        **options: Unpack[SearchOptions],
    ) -> list[ScoredRecord]:
        """Async :meth:`search`: the plain ranking of a one-granularity request."""
        gran, request = plain_request(query, granularity, namespace, options)
        return (await self.asearch_many(request))[gran.value][PLAIN]

    async def aget_profile(self, namespace: str) -> ProfileRecord | None:
        """Async :meth:`get_profile`."""
        query = body_query(self.names, "profiles")
        rows = await self._rows(query, [validate_namespace(namespace)])
        return ProfileRecord.model_validate_json(rows[0][0]) if rows else None

    async def alist_audit(self, namespace: str) -> list[AuditEntry]:
        """Async :meth:`list_audit`."""
        rows = await self._rows(audit_query(self.names), [validate_namespace(namespace)])
        return [AuditEntry.model_validate_json(r[0]) for r in rows]

    # ----------------------------------------------------------------- writes
    async def aadd(self, namespace: str, records: Sequence[MemoryRecord]) -> list[str]:
        """Async :meth:`add`: validated and embedded before the one transaction that writes.

        The stored vectors of unchanged texts are read on the async pool; the embedding
        of the rest runs in a worker thread (it is CPU work); the upsert is async.
        """
        checked = checked_records(namespace, records)
        if not checked:
            return []
        batches: list[tuple[Granularity, list[Row]]] = []
        for gran, group in by_granularity(checked).items():
            found = await self._astored(gran, namespace, [r.id for r in group])
            stored = partial(_known, found)
            rows = await asyncio.to_thread(self._encoded, gran, namespace, group, stored)
            batches.append((gran, rows))
        async with self.aatomic() as conn:
            for gran, rows in batches:
                await _aupsert(conn, self.names, gran, rows)
        return [r.id for r in checked]

    def _encoded(
        self,
        gran: Granularity,
        namespace: str,
        records: list[MemoryRecord],
        stored: Callable[[list[str]], dict[str, tuple[str, list[float]]]],
    ) -> list[Row]:
        """The rows of ``records``, each embedded unless ``stored`` has its vector.

        ``stored`` gives the ``(index text, vector)`` of the ids already stored: an
        unchanged text keeps its vector.
        """
        batch = prepare(
            gran,
            namespace,
            records,
            policy=self.index_policy,
            embeddings=self.embeddings,
            stored=stored,
        )
        return encode(batch, self._language, self.dimension, self.names)

    def _language(self, record: MemoryRecord) -> str:
        raise NotImplementedError  # the store chooses each record's configuration


async def _aupsert(
    conn: psycopg.AsyncConnection[Any], names: Names, gran: Granularity, rows: list[Row]
) -> None:
    """The upsert of :func:`.rows.upsert`, on an async connection."""
    async with conn.cursor() as cur:
        await cur.executemany(upsert_statement(names, gran), upsert_params(rows))


async def _close_with_loop(pool: AsyncConnectionPool[Any]) -> None:
    """Close ``pool`` when its event loop ends (``asyncio.run`` cancels every task).

    psycopg_pool's own tasks ignore cancellation, so a pool still open when its loop ends
    would keep ``asyncio.run`` from returning; this task closes it then.
    """
    try:
        await asyncio.Event().wait()
    except asyncio.CancelledError:
        await pool.close(timeout=5.0)
        raise


async def _asetting(conn: psycopg.AsyncConnection[Any], setting: str) -> str | None:
    """The value of ``setting`` on ``conn``, or None if the connection cannot tell."""
    try:
        async with conn.transaction():
            cursor = await conn.execute(f"SHOW {setting}")  # one of two fixed names
            row = await cursor.fetchone()
    except psycopg.Error:
        return None
    return str(row[0]) if row else None


def _known(
    found: dict[str, tuple[str, list[float]]], ids: list[str]
) -> dict[str, tuple[str, list[float]]]:
    """The entries of ``found`` (read before) among ``ids``."""
    return {i: found[i] for i in ids if i in found}


def _unused(text: str) -> list[float]:
    """The embedder :func:`plan_request` gets from the async path: it embeds afterwards."""
    return []


__all__ = ["AsyncCalls", "aconfigure_connection"]
