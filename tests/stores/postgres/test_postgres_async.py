"""Async calls on Postgres: the store's twins on an ``AsyncConnectionPool``, and the facade
awaiting them. They give the sync calls' answers and run concurrently on one loop."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from lamina import Memory, MemoryConfig
from lamina.errors import InvalidInputError, StoreUnavailableError
from lamina.records import FactRecord, ProfileRecord, RawTurn
from lamina.records.audit import AuditEntry
from lamina.stores.base import Ranking, SearchRequest
from lamina.stores.postgres import PostgresMemoryStore, configure_connection
from lamina.stores.postgres.aio import aconfigure_connection
from lamina.testing import FakeEmbeddings

T0 = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)
TEXTS = [
    "I adopted a greyhound called Biscuit",
    "Biscuit loves the beach at Ocean Park",
    "My sister Maya moved to Lisbon in May",
    "We booked flights to Lisbon for the summer",
]


@pytest.fixture
def schema(postgres_dsn: str) -> Iterator[str]:
    """A lamina schema of the test's own, dropped afterwards."""
    name = f"t_{uuid.uuid4().hex[:16]}"
    yield name
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")


def turns(namespace: str) -> list[RawTurn]:
    return [
        RawTurn(
            id=f"t{i}",
            namespace=namespace,
            text=text,
            speaker="Alice",
            session_id="s1",
            turn_index=i,
            occurred_at=T0 + timedelta(minutes=i),
            metadata={"topic": "pets" if i < 2 else "travel"},
        )
        for i, text in enumerate(TEXTS)
    ]


def fact(namespace: str) -> FactRecord:
    return FactRecord(
        id="f1",
        namespace=namespace,
        text="Alice has a greyhound called Biscuit",
        subject="Alice",
        source_ids=[],
        occurred_at=T0,
    )


def request(namespace: str, mode: Any = "hybrid") -> SearchRequest:
    return SearchRequest(
        query="greyhound Lisbon",
        namespace=namespace,
        rankings={"raw": Ranking(k=3), "fact": Ranking(k=2)},
        mode=mode,
    )


def plain(answer: Any) -> Any:
    """A search answer as comparable values: ids, scores and ranks per channel."""
    return {
        gran: {
            ch: [(h.record.id, round(h.score, 9), dict(h.ranks)) for h in hits]
            for ch, hits in channels.items()
        }
        for gran, channels in answer.items()
    }


# ------------------------------------------------------------------- store
def test_the_async_twins_answer_as_the_sync_calls(postgres_dsn: str, schema: str) -> None:
    store = PostgresMemoryStore.connect(postgres_dsn, schema=schema, embeddings=FakeEmbeddings())
    ns, twin = "user:alice", "user:alice-async"
    store.add(ns, [*turns(ns), fact(ns)])
    store.put_profile(ProfileRecord(namespace=ns, explicit_facts=["Alice: greyhound owner"]))
    entry = AuditEntry(
        namespace=ns, actor="test", action="update", granularity="fact", target_id="f1", at=T0
    )
    store.append_audit(entry)

    async def scenario() -> dict[str, Any]:
        out: dict[str, Any] = {}
        for mode in ("hybrid", "dense", "bm25"):
            out[mode] = plain(await store.asearch_many(request(ns, mode)))
        out["get"] = await store.aget("raw", ns)
        out["get_ids"] = await store.aget("raw", ns, ["t2", "t0"])
        out["get_where"] = await store.aget("raw", ns, where={"metadata.topic": "travel"})
        out["count"] = await store.acount("raw", ns)
        out["profile"] = await store.aget_profile(ns)
        out["audit"] = await store.alist_audit(ns)
        out["speakers"] = await store.adistinct("raw", ns, "speaker")
        out["search"] = await store.asearch("Biscuit", "raw", ns, k=2)
        out["added"] = await store.aadd(twin, [*turns(twin), fact(twin)])
        with pytest.raises(InvalidInputError, match="query"):
            await store.asearch_many(
                SearchRequest(query="  ", namespace=ns, rankings={"raw": Ranking()})
            )
        await store.aclose()
        return out

    got = asyncio.run(scenario())
    store = PostgresMemoryStore.connect(postgres_dsn, schema=schema, embeddings=FakeEmbeddings())
    try:
        for mode in ("hybrid", "dense", "bm25"):
            assert got[mode] == plain(store.search_many(request(ns, mode)))
        assert got["hybrid"]["raw"]["plain"]  # something was found to compare
        assert got["get"] == store.get("raw", ns) and len(got["get"]) == 4
        assert [r.id for r in got["get_ids"]] == ["t2", "t0"]
        assert got["get_where"] == store.get("raw", ns, where={"metadata.topic": "travel"})
        assert len(got["get_where"]) == 2
        assert got["count"] == 4
        assert got["profile"] == store.get_profile(ns)
        assert got["audit"] == store.list_audit(ns) == [entry]
        assert got["speakers"] == ["Alice"]
        assert [h.record.id for h in got["search"]] == [
            h.record.id for h in store.search("Biscuit", "raw", ns, k=2)
        ]
        # aadd wrote what add writes: the same records, texts and vectors
        assert got["added"] == [r.id for r in [*turns(twin), fact(twin)]]
        for gran in ("raw", "fact"):
            skip = {"namespace", "recorded_at"}
            mine = [r.model_dump(exclude=skip) for r in store.get(gran, ns)]
            theirs = [r.model_dump(exclude=skip) for r in store.get(gran, twin)]
            assert mine == theirs
            ids = [r.id for r in store.get(gran, ns)]
            assert store.vectors(gran, ns, ids) == store.vectors(gran, twin, ids)
    finally:
        store.close()


class CountingPool(AsyncConnectionPool[Any]):
    """An async pool that holds each connection a little and counts how many are out."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.out = self.most_out = 0

    @asynccontextmanager
    async def connection(self, timeout: float | None = None) -> AsyncIterator[Any]:  # type: ignore[override]
        async with super().connection(timeout) as conn:
            self.out += 1
            self.most_out = max(self.most_out, self.out)
            try:
                await asyncio.sleep(0.05)  # a slow network: the loop must run others now
                yield conn
            finally:
                self.out -= 1


def test_async_searches_run_concurrently_without_the_sync_pool(
    postgres_dsn: str, schema: str
) -> None:
    spaces = [f"user:{n}" for n in range(8)]
    sync_pool: ConnectionPool[Any] = ConnectionPool(
        postgres_dsn, min_size=1, max_size=2, kwargs={"prepare_threshold": None},
        configure=configure_connection, open=True,
    )  # fmt: skip

    async def scenario() -> tuple[list[Any], float, int]:
        pool = CountingPool(
            postgres_dsn, min_size=8, max_size=8, kwargs={"prepare_threshold": None},
            configure=aconfigure_connection, open=False,
        )  # fmt: skip
        await pool.open(wait=True)
        store = PostgresMemoryStore(
            sync_pool, schema=schema, embeddings=FakeEmbeddings(), async_pool=pool
        )
        for ns in spaces:
            await store.aadd(ns, turns(ns))
        sync_pool.close()  # from here on, only the async pool can answer
        start = time.perf_counter()
        found = await asyncio.gather(*(store.asearch_many(request(ns)) for ns in spaces))
        elapsed = time.perf_counter() - start
        await pool.close()
        return [plain(a) for a in found], elapsed, pool.most_out

    found, elapsed, most_out = asyncio.run(scenario())
    assert most_out == len(spaces)  # every search held a connection at the same time
    assert elapsed < 0.05 * len(spaces) / 2  # not one after the other
    check = PostgresMemoryStore.connect(postgres_dsn, schema=schema, embeddings=FakeEmbeddings())
    try:
        for ns, answer in zip(spaces, found, strict=True):
            assert answer == plain(check.search_many(request(ns)))
            assert {h[0] for h in answer["raw"]["plain"]} <= {t.id for t in turns(ns)}
    finally:
        check.close()


def test_calls_that_start_together_share_one_async_pool(
    postgres_dsn: str, schema: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lamina.stores.postgres import aio

    opened: list[AsyncConnectionPool[Any]] = []

    class Recorded(AsyncConnectionPool[Any]):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            opened.append(self)

    monkeypatch.setattr(aio, "AsyncConnectionPool", Recorded)
    store = PostgresMemoryStore.connect(postgres_dsn, schema=schema, embeddings=FakeEmbeddings())
    store.add("user:alice", turns("user:alice"))

    async def scenario() -> list[int]:
        counts = await asyncio.gather(*(store.acount("raw", "user:alice") for _ in range(6)))
        await store.aclose()
        return list(counts)

    assert asyncio.run(scenario()) == [4] * 6
    assert len(opened) == 1 and opened[0].closed


def test_each_event_loop_gets_its_own_async_pool_closed_at_its_end(
    postgres_dsn: str, schema: str
) -> None:
    store = PostgresMemoryStore.connect(postgres_dsn, schema=schema, embeddings=FakeEmbeddings())
    store.add("user:alice", turns("user:alice"))
    counts: list[int] = []
    pools: list[Any] = []

    def twice() -> None:  # asyncio.run with no aclose: the loop's end closes its pool
        for _ in range(2):
            counts.append(asyncio.run(store.acount("raw", "user:alice")))
            pools.append(store._apool)

    runner = threading.Thread(target=twice, daemon=True)
    runner.start()
    runner.join(timeout=60)
    try:
        assert not runner.is_alive(), "asyncio.run did not return: its pool kept the loop"
        assert counts == [4, 4]
        assert pools[0] is not pools[1]  # a pool of an ended loop cannot serve the next
        assert pools[0].closed and pools[1].closed
    finally:
        asyncio.run(store.aclose())


def test_an_unreachable_database_is_a_retryable_store_error(postgres_dsn: str, schema: str) -> None:
    sync_pool: ConnectionPool[Any] = ConnectionPool(
        postgres_dsn, min_size=1, max_size=1, timeout=2, kwargs={"prepare_threshold": None},
        configure=configure_connection, open=True,
    )  # fmt: skip
    store = PostgresMemoryStore(
        sync_pool,
        schema=schema,
        embeddings=FakeEmbeddings(),
        dsn="postgresql://u:secret@127.0.0.1:1/mem",  # where the async calls go: nothing
        where="postgres://127.0.0.1:1/mem",
    )

    async def scenario() -> None:
        try:
            with pytest.raises(StoreUnavailableError, match="127.0.0.1:1/mem.*can be retried"):
                await store.acount("raw", "user:alice")
        finally:
            await store.aclose()

    start = time.perf_counter()
    asyncio.run(scenario())
    assert time.perf_counter() - start < 20  # the sync pool's 2 s wait, not psycopg's 30 s


def test_a_store_without_a_dsn_or_async_pool_says_how_to_get_one(
    postgres_pool: ConnectionPool[Any], schema: str
) -> None:
    store = PostgresMemoryStore(postgres_pool, schema=schema, embeddings=FakeEmbeddings())
    with pytest.raises(InvalidInputError, match="async_pool="):
        asyncio.run(store.acount("raw", "user:alice"))


# ------------------------------------------------------------------ facade
def test_memory_async_reads_await_the_store_and_match_the_sync_ones(
    postgres_dsn: str, schema: str
) -> None:
    config = MemoryConfig(store=postgres_dsn, prefix=schema)
    memory = Memory(config=config, embeddings=FakeEmbeddings())
    spaces = [f"user:{n}" for n in range(6)]
    for n, ns in enumerate(spaces):
        memory.add(
            TEXTS[n % 4 :] + TEXTS[: n % 4],
            namespace=ns,
            speaker="Alice",
            at=T0,
            infer=False,
            metadata={"tenant": ns},
        )
    memory.store.put_profile(
        ProfileRecord(namespace=spaces[0], explicit_facts=["Alice: greyhound owner"])
    )
    calls = [
        {"query": "greyhound Lisbon", "k": 3},
        {"query": "Biscuit beach", "filters": {"tenant": "user:1"}},
        {"query": "Lisbon flights", "threshold": 0.2, "granularities": ["raw"]},
        {"query": "sister", "top_k": 2, "window": None},
    ]
    expected = [[memory.search(namespace=ns, **c) for c in calls] for ns in spaces]
    listed = [memory.get_all(namespace=ns, limit=3) for ns in spaces]
    profile = memory.profile(namespace=spaces[0])

    async def scenario() -> tuple[list[Any], list[Any], Any]:
        memory.store.pool.close()  # the sync pool is gone: no worker-thread fallback
        found = await asyncio.gather(
            *(asyncio.gather(*(memory.asearch(namespace=ns, **c) for c in calls)) for ns in spaces)
        )
        got = await asyncio.gather(*(memory.aget_all(namespace=ns, limit=3) for ns in spaces))
        prof = await memory.aprofile(namespace=spaces[0])
        await memory.aclose()
        return [list(f) for f in found], list(got), prof

    found, got, prof = asyncio.run(scenario())
    assert found == expected
    assert sum(len(h) for per in expected for h in per) > 0
    assert got == listed and all(len(r) == 3 for r in got)
    assert prof == profile is not None


def test_a_closed_memory_s_async_reads_fail_as_its_sync_reads_do(
    postgres_dsn: str, schema: str
) -> None:
    """Once ``close()`` closed the Postgres store a Memory opened, ``asearch``,
    ``aget_all`` and ``aprofile`` raise what ``search`` raises: the closed Memory's
    InvalidInputError, as on Chroma. They opened a new async pool on the DSN instead (one
    that nothing closed) and answered; ``search`` and ``add`` raised a retryable
    StoreUnavailableError, as if the server were away."""
    config = MemoryConfig(store=postgres_dsn, prefix=schema)
    memory = Memory(config=config, embeddings=FakeEmbeddings())
    memory.add(TEXTS[0], namespace="user:a", speaker="Alice", at=T0, infer=False)
    memory.close()
    with pytest.raises(InvalidInputError, match="this Memory is closed") as sync:
        memory.search("Biscuit", namespace="user:a")
    for call in (
        memory.asearch("Biscuit", namespace="user:a"),
        memory.aget_all(namespace="user:a"),
        memory.aprofile(namespace="user:a"),
    ):
        with pytest.raises(InvalidInputError, match="this Memory is closed") as got:
            asyncio.run(call)
        assert type(got.value) is type(sync.value)
    assert memory.store._apool is None  # no pool was opened again
    for mode in ({"infer": False}, {"consolidate": "background"}, {}):
        with pytest.raises(InvalidInputError, match="this Memory is closed"):
            memory.add("Biscuit", namespace="user:a", speaker="Alice", **mode)  # type: ignore[arg-type]
        with pytest.raises(InvalidInputError, match="this Memory is closed"):
            asyncio.run(memory.aadd("Biscuit", namespace="user:a", speaker="Alice", **mode))  # type: ignore[arg-type]


def test_async_pool_connections_get_the_sync_pool_session_settings(
    postgres_dsn: str, schema: str
) -> None:
    """An async search scans HNSW as widely as a sync one: the same ``hnsw.*`` settings."""
    names = ("hnsw.ef_search", "hnsw.iterative_scan")
    store = PostgresMemoryStore.connect(postgres_dsn, schema=schema, embeddings=FakeEmbeddings())
    try:
        with store.pool.connection() as conn:
            sync = [conn.execute(f"SHOW {name}").fetchone() for name in names]

        async def settings() -> list[Any]:
            pool = await store._async_pool()
            async with pool.connection() as conn:
                return [await (await conn.execute(f"SHOW {name}")).fetchone() for name in names]

        assert asyncio.run(settings()) == sync == [("800",), ("relaxed_order",)]
    finally:
        store.close()


def test_an_async_request_of_no_granularity_finds_nothing(postgres_dsn: str, schema: str) -> None:
    """``asearch_many`` of a request that asks no ranking answers ``{}``, as the sync call;
    the statement of no ranking was sent to the server, which refused it."""
    store = PostgresMemoryStore.connect(postgres_dsn, schema=schema, embeddings=FakeEmbeddings())
    store.add("user:alice", turns("user:alice"))

    async def scenario() -> list[Any]:
        try:
            return [
                await store.asearch_many(
                    SearchRequest(query="Biscuit", namespace="user:alice", rankings={}, mode=mode)
                )
                for mode in ("hybrid", "dense", "bm25")
            ]
        finally:
            await store.aclose()

    try:
        assert asyncio.run(scenario()) == [{}, {}, {}]
    finally:
        store.close()


def test_an_async_k_past_bigint_returns_every_hit(postgres_dsn: str, schema: str) -> None:
    """``asearch`` and ``adistinct`` take a ``k`` or limit past Postgres's bigint as asking
    for every row, as the sync calls do; the server refused it ("bigint out of range")."""
    store = PostgresMemoryStore.connect(postgres_dsn, schema=schema, embeddings=FakeEmbeddings())
    store.add("user:alice", turns("user:alice"))

    async def scenario() -> tuple[list[str], list[Any]]:
        try:
            hits = await store.asearch("Biscuit Lisbon", "raw", "user:alice", k=2**63)
            speakers = await store.adistinct("raw", "user:alice", "speaker", 10**30)
            return [h.record.id for h in hits], speakers
        finally:
            await store.aclose()

    try:
        everything = store.search("Biscuit Lisbon", "raw", "user:alice", k=len(TEXTS))
        assert asyncio.run(scenario()) == ([h.record.id for h in everything], ["Alice"])
    finally:
        store.close()
