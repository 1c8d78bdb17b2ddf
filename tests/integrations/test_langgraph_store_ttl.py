"""LaminaStore item TTLs against LangGraph's TTL semantics.

Each test names the behaviour of LangGraph's TTL tests
(``libs/checkpoint-sqlite/tests/test_ttl.py``, the store with TTL support that ships
with LangGraph) that it mirrors. Time is a fake clock moved by the test, except for the
sweeper thread, which runs on the real one. Every test runs on Chroma and on Postgres.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from langgraph.store.base import PutOp, TTLConfig

from lamina.errors import InvalidInputError, InvalidTypeError
from lamina.integrations import LaminaStore
from lamina.integrations.store_ttl import EXPIRES
from lamina.records import Granularity
from lamina.stores import ChromaMemoryStore, MemoryStore
from lamina.testing import FakeEmbeddings

T0 = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@pytest.fixture(params=["chroma", "postgres"])
def backend(request: pytest.FixtureRequest) -> MemoryStore:
    if request.param == "postgres":
        make: Callable[..., MemoryStore] = request.getfixturevalue("make_postgres_store")
        return make()
    return ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def make(backend: MemoryStore, clock: Clock) -> Callable[..., LaminaStore]:
    def build(ttl: TTLConfig | None = None, **kw: Any) -> LaminaStore:
        return LaminaStore(backend, ttl=ttl, clock=clock, **kw)

    return build


def keys(found: list[Any]) -> list[str]:
    return [i.key for i in found]


def test_ttl_basic(make: Callable[..., LaminaStore], clock: Clock) -> None:
    """Mirrors test_ttl_basic: an item with the default TTL is there until it expires
    and a sweep removes it."""
    store = make({"default_ttl": 1.0})
    assert store.supports_ttl is True
    store.put(("test",), "item1", {"value": "test"})
    assert store.get(("test",), "item1").value == {"value": "test"}  # type: ignore[union-attr]
    clock.advance(61)
    assert store.sweep_ttl() == 1
    assert store.get(("test",), "item1") is None
    assert store.list_namespaces() == []


def test_ttl_refresh(make: Callable[..., LaminaStore], clock: Clock) -> None:
    """Mirrors test_ttl_refresh: a read with refresh_ttl moves the expiry; without reads
    the item expires and the sweep counts it."""
    store = make({"default_ttl": 1.0, "refresh_on_read": True})
    store.put(("test",), "item1", {"value": "test"})
    clock.advance(50)
    assert store.sweep_ttl() == 0
    assert store.get(("test",), "item1", refresh_ttl=True) is not None
    clock.advance(50)  # 100 s after the put, 50 s after the refresh
    assert store.sweep_ttl() == 0
    assert store.get(("test",), "item1", refresh_ttl=False) is not None
    clock.advance(15)  # 65 s after the refresh
    assert store.sweep_ttl() == 1
    assert store.get(("test",), "item1") is None


def test_search_refreshes_the_items_it_returns(
    make: Callable[..., LaminaStore], clock: Clock
) -> None:
    """Mirrors refresh_on_read for SEARCH: the returned items live on, the others expire."""
    store = make({"default_ttl": 1.0})
    store.put(("s",), "apple", {"value": "apple"})
    store.put(("s",), "pear", {"value": "pear"})
    clock.advance(40)
    assert keys(store.search(("s",), filter={"value": "apple"})) == ["apple"]
    clock.advance(40)
    assert store.sweep_ttl() == 1
    assert keys(store.search(("s",))) == ["apple"]


def test_ttl_custom_value_and_override(make: Callable[..., LaminaStore], clock: Clock) -> None:
    """Mirrors test_ttl_custom_value and test_ttl_override_default: a put's ttl beats the
    default, and ttl=None never expires."""
    store = make({"default_ttl": 5 / 60})
    store.put(("test",), "short", {"v": 1}, ttl=1 / 60)
    store.put(("test",), "default", {"v": 2})
    store.put(("test",), "never", {"v": 3}, ttl=None)
    clock.advance(2)
    assert store.sweep_ttl() == 1
    assert [store.get(("test",), k) is None for k in ("short", "default", "never")] == [
        True,
        False,
        False,
    ]
    clock.advance(10)
    assert store.sweep_ttl() == 1
    assert store.get(("test",), "default") is None and store.get(("test",), "never") is not None


def test_search_with_ttl(make: Callable[..., LaminaStore], clock: Clock) -> None:
    """Mirrors test_search_with_ttl: a filtered search finds the item until it is swept."""
    store = make({"default_ttl": 1 / 60})
    store.put(("test",), "item1", {"value": "apple"})
    store.put(("test",), "item2", {"value": "banana"})
    assert keys(store.search(("test",), filter={"value": "apple"})) == ["item1"]
    clock.advance(2)
    assert store.sweep_ttl() == 2
    assert store.search(("test",), filter={"value": "apple"}) == []


def test_omit_expired_hides_expired_items_from_every_read(
    make: Callable[..., LaminaStore], clock: Clock
) -> None:
    """Mirrors test_omit_expired_filters_read_paths: get, search and list_namespaces leave
    an expired, unswept item out; a namespace of only expired items is not listed."""
    store = make({"default_ttl": 5.0, "omit_expired": True})
    store.put(("omit", "expired"), "e", {"data": "gone"}, ttl=1.0)
    store.put(("omit", "control"), "c", {"data": "keep"}, ttl=None)
    clock.advance(61)
    assert store.get(("omit", "expired"), "e") is None
    assert store.get(("omit", "control"), "c") is not None
    assert store.search(("omit", "expired")) == []
    assert keys(store.search(("omit", "control"))) == ["c"]
    listed = store.list_namespaces(prefix=("omit",))
    assert ("omit", "expired") not in listed and ("omit", "control") in listed


@pytest.mark.parametrize("omit", [None, False])
def test_without_omit_expired_an_unswept_item_is_read(
    make: Callable[..., LaminaStore], clock: Clock, omit: bool | None
) -> None:
    """Mirrors test_omit_expired_disabled_preserves_expired_rows."""
    config: TTLConfig = {"default_ttl": 1.0}
    if omit is not None:
        config["omit_expired"] = omit
    store = make(config)
    store.put(("keep",), "k", {"data": "still-here"})
    clock.advance(61)
    assert store.get(("keep",), "k", refresh_ttl=False) is not None
    assert keys(store.search(("keep",), refresh_ttl=False)) == ["k"]
    assert ("keep",) in store.list_namespaces(prefix=("keep",))


def test_a_refresh_never_brings_back_an_expired_item(
    make: Callable[..., LaminaStore], backend: MemoryStore, clock: Clock
) -> None:
    """Mirrors test_omit_expired_refresh_ttl_only_refreshes_live_rows."""
    store = make({"default_ttl": 1.0, "omit_expired": True, "refresh_on_read": True})
    store.put(("r",), "expired", {"n": 0}, ttl=0.5)
    store.put(("r",), "live", {"n": 1})

    def expires(key: str) -> float:
        [record] = [
            r
            for r in backend.get(Granularity.RAW, store.lamina_namespace(("r",)))
            if r.metadata.get("lg_key") == key and r.metadata.get("lg_role") == "item"
        ]
        return float(record.metadata[EXPIRES])  # type: ignore[arg-type]

    before_expired, before_live = expires("expired"), expires("live")
    clock.advance(40)
    assert store.get(("r",), "expired", refresh_ttl=True) is None
    assert "expired" not in keys(store.search(("r",), refresh_ttl=True))
    assert expires("expired") == before_expired
    assert expires("live") == before_live + 40


def test_omit_expired_filters_before_the_page(
    make: Callable[..., LaminaStore], clock: Clock
) -> None:
    """Mirrors test_omit_expired_search_pagination: the expired item is left out before
    limit and offset, so no page comes up short."""
    store = make({"default_ttl": 5.0, "omit_expired": True})
    for k in ("a", "x", "b", "c"):
        store.put(("page",), k, {"k": k}, ttl=1.0 if k == "x" else None)
        clock.advance(1)
    clock.advance(60)
    first = keys(store.search(("page",), limit=2, offset=0))
    second = keys(store.search(("page",), limit=2, offset=2))
    assert first + second == ["a", "b", "c"] and len(first) == 2


def test_the_sweeper_thread_removes_expired_items(backend: MemoryStore) -> None:
    """Mirrors test_ttl_sweeper, on the real clock: the sweeper deletes an expired item
    without a read, and stops when asked."""
    store = LaminaStore(backend, ttl={"default_ttl": 1 / 60, "sweep_interval_minutes": 0.25 / 60})
    done = store.start_ttl_sweeper()
    store.put(("test",), "item1", {"value": "test"})
    assert store.get(("test",), "item1", refresh_ttl=False) is not None
    deadline = time.monotonic() + 10
    while store.get(("test",), "item1", refresh_ttl=False) is not None:
        assert time.monotonic() < deadline, "the sweeper did not remove the expired item"
        time.sleep(0.2)
    assert store.stop_ttl_sweeper(timeout=5) is True
    assert done.result(timeout=5) is None


def test_a_plain_read_refreshes_a_default_ttl(
    make: Callable[..., LaminaStore], clock: Clock
) -> None:
    """refresh_on_read defaults to True, as TTLConfig documents and PostgresStore does.

    LangGraph's test_ttl_override_default expects the opposite (SqliteStore refreshes
    only when refresh_on_read is set), and fails on PostgresStore as on lamina
    (benchmarks/langgraph_ttl_suite.json)."""
    store = make({"default_ttl": 5 / 60})
    store.put(("test",), "item2", {"value": "default"})
    clock.advance(2)
    assert store.get(("test",), "item2") is not None  # moves the expiry to 2 s + 5 s
    clock.advance(4)
    assert store.sweep_ttl() == 0
    assert store.get(("test",), "item2", refresh_ttl=False) is not None
    clock.advance(2)
    assert store.sweep_ttl() == 1


class CoroutineSweepStore(LaminaStore):
    """Public sweep methods as LangGraph's async stores define them: coroutines."""

    async def sweep_ttl(self) -> int:  # type: ignore[override]
        return await asyncio.to_thread(LaminaStore.sweep_ttl, self)

    async def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:  # type: ignore[override]
        return await asyncio.to_thread(LaminaStore.stop_ttl_sweeper, self, timeout)


@pytest.mark.filterwarnings("error::RuntimeWarning")
def test_the_sweeper_thread_survives_coroutine_public_methods(backend: MemoryStore) -> None:
    """The sweeper thread calls the sweep itself, not the public sweep_ttl a subclass
    may redefine (the run of LangGraph's async TTL tests found it swept nothing)."""
    ttl: TTLConfig = {"default_ttl": 1 / 60, "sweep_interval_minutes": 0.25 / 60}
    store = CoroutineSweepStore(backend, ttl=ttl)
    store.start_ttl_sweeper()
    store.start_ttl_sweeper()  # a restart stops the first thread
    store.put(("test",), "item1", {"value": "test"})
    deadline = time.monotonic() + 10
    while store.get(("test",), "item1", refresh_ttl=False) is not None:
        assert time.monotonic() < deadline, "the sweeper did not remove the expired item"
        time.sleep(0.2)
    assert asyncio.run(store.stop_ttl_sweeper(5)) is True


def test_async_ttl_basic(make: Callable[..., LaminaStore], clock: Clock) -> None:
    """Mirrors test_async_ttl_basic."""
    store = make({"default_ttl": 1 / 60})

    async def scenario() -> tuple[Any, Any]:
        await store.aput(("test",), "item1", {"value": "test"})
        before = await store.aget(("test",), "item1")
        clock.advance(2)
        store.sweep_ttl()
        return before, await store.aget(("test",), "item1")

    before, after = asyncio.run(scenario())
    assert before is not None and after is None


@pytest.mark.parametrize(
    "ttl",
    [0, -1.0, float("inf"), pytest.param(10**400, id="past-any-float")],  # was OverflowError
)
def test_a_ttl_that_is_already_over_is_refused(
    make: Callable[..., LaminaStore], ttl: float
) -> None:
    store = make()
    with pytest.raises(InvalidInputError, match="positive number of minutes"):
        store.put(("t",), "k", {"v": 1}, ttl=ttl)
    with pytest.raises(InvalidInputError, match="positive number of minutes"):
        store.batch([PutOp(("t",), "k", {"v": 1}, ttl=ttl)])
    assert store.get(("t",), "k") is None


def test_a_bad_ttl_config_is_refused(backend: MemoryStore) -> None:
    with pytest.raises(InvalidInputError, match="unknown TTLConfig"):
        LaminaStore(backend, ttl={"default_minutes": 5})  # type: ignore[typeddict-unknown-key]
    with pytest.raises(InvalidTypeError, match="omit_expired"):
        LaminaStore(backend, ttl={"omit_expired": "yes"})  # type: ignore[typeddict-item]
    with pytest.raises(InvalidInputError, match="sweep interval"):
        LaminaStore(backend).start_ttl_sweeper()
