"""A namespace's default TTL (``Memory.set_default_ttl``), and ``add_facts(expires_at=/ttl=)``.

The default is kept in the store, so a second Memory (another process, another machine)
that opens the same store applies it. Every test runs on Chroma and on Postgres.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

import lamina.stores.expiry as expiry
from lamina import Memory, MemoryConfig
from lamina.errors import InvalidInputError, InvalidTypeError
from lamina.records import FactRecord, Granularity
from lamina.stores import ChromaMemoryStore
from lamina.testing import FakeEmbeddings, SchemaChatModel

NS = "user:alice"
OTHER = "user:bob"
HOUR = timedelta(hours=1)


def no_local_model(config: MemoryConfig) -> Any:
    raise AssertionError("no model is needed here")


@pytest.fixture(params=["chroma", "postgres"])
def open_store(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[], Any]:
    """Opens the same store afresh at each call (a new client, as another process would)."""
    if request.param == "postgres":
        from lamina.stores.postgres import PostgresMemoryStore

        make: Callable[..., Any] = request.getfixturevalue("make_postgres_store")
        schema = make().names.schema
        pool = request.getfixturevalue("postgres_pool")
        return lambda: PostgresMemoryStore(pool, schema=schema, embeddings=FakeEmbeddings())
    path = tmp_path / "chroma"
    return lambda: ChromaMemoryStore.persistent(path, embeddings=FakeEmbeddings())


def memory(store: Any) -> Memory:
    return Memory(store=store, local_server_factory=no_local_model)


def near(value: datetime | None, expected: datetime) -> bool:
    return value is not None and abs(value - expected) < timedelta(minutes=1)


def test_the_default_applies_to_later_adds_in_every_memory_on_the_store(
    open_store: Callable[[], Any],
) -> None:
    first = memory(open_store())
    first.add("my gate code is 1", namespace=NS, infer=False)  # before: never expires
    first.set_default_ttl(NS, HOUR)
    second = memory(open_store())  # what another process opening the store sees
    assert second.default_ttl(NS) == HOUR
    assert second.default_ttl(OTHER) is None
    now = datetime.now(UTC)
    second.add("my bike code is 2", namespace=NS, infer=False)
    second.add("my car code is 3", namespace=OTHER, infer=False)
    second.add("my safe code is 4", namespace=NS, infer=False, ttl=60)  # its own beats it
    expires = {r.text: r.expires_at for r in second.store.get("raw", NS)}
    assert expires["my gate code is 1"] is None
    assert near(expires["my bike code is 2"], now + HOUR)
    assert near(expires["my safe code is 4"], now + timedelta(seconds=60))
    assert [r.expires_at for r in second.store.get("raw", OTHER)] == [None]


def test_clearing_the_default_keeps_what_was_stored_under_it(
    open_store: Callable[[], Any],
) -> None:
    m = memory(open_store())
    m.set_default_ttl(NS, 7200)
    m.add("my gate code is 1", namespace=NS, infer=False)
    m.set_default_ttl(NS, None)
    assert memory(open_store()).default_ttl(NS) is None
    m.add("my bike code is 2", namespace=NS, infer=False)
    expires = {r.text: r.expires_at for r in m.store.get("raw", NS)}
    assert near(expires["my gate code is 1"], datetime.now(UTC) + 2 * HOUR)
    assert expires["my bike code is 2"] is None


@pytest.mark.parametrize(
    ("ttl", "error", "message"),
    [
        (0, InvalidInputError, "ttl must be positive"),
        (-60, InvalidInputError, "ttl must be positive"),
        (timedelta(seconds=-1), InvalidInputError, "ttl must be positive"),
        (math.nan, InvalidInputError, "ttl must be positive"),
        (math.inf, InvalidInputError, "longer than"),
        ("1h", InvalidTypeError, "ttl must be a timedelta or a number of seconds"),
        (True, InvalidTypeError, "ttl must be a timedelta or a number of seconds"),
    ],
)
def test_a_default_ttl_not_in_the_future_is_refused_and_nothing_is_set(
    open_store: Callable[[], Any], ttl: Any, error: type[Exception], message: str
) -> None:
    m = memory(open_store())
    m.set_default_ttl(NS, HOUR)
    with pytest.raises(error, match=message):
        m.set_default_ttl(NS, ttl)
    assert m.default_ttl(NS) == HOUR


def test_the_namespace_is_checked() -> None:
    m = memory(ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings()))
    with pytest.raises(InvalidInputError):
        m.set_default_ttl("not a namespace!", HOUR)
    with pytest.raises(InvalidInputError):
        m.default_ttl("")


def test_add_facts_takes_an_expiry_or_the_default(open_store: Callable[[], Any]) -> None:
    m = memory(open_store())
    now = datetime.now(UTC)
    m.add_facts(["Alice works at Acme"], namespace=NS, subject="Alice", ttl=60)
    m.add_facts(["Alice lives in Leeds"], namespace=NS, subject="Alice")  # never expires
    m.set_default_ttl(NS, HOUR)
    m.add_facts(["Alice has a dog"], namespace=NS, subject="Alice")
    when = now + 2 * HOUR
    m.add_facts(["Alice owns a bike"], namespace=NS, subject="Alice", expires_at=when)
    found = {f.text: f.expires_at for f in m.store.get("fact", NS) if isinstance(f, FactRecord)}
    assert near(found["Alice works at Acme"], now + timedelta(seconds=60))
    assert found["Alice lives in Leeds"] is None
    assert near(found["Alice has a dog"], now + HOUR)
    assert found["Alice owns a bike"] == when


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"expires_at": datetime(2020, 1, 1, tzinfo=UTC)}, "is not in the future"),
        ({"ttl": -1}, "ttl must be positive"),
        ({"expires_at": datetime(2099, 1, 1)}, "naive"),
        ({"ttl": 60, "expires_at": datetime(2099, 1, 1, tzinfo=UTC)}, "not both"),
    ],
)
def test_add_facts_refuses_an_expiry_in_the_past_before_storing_anything(
    options: dict[str, Any], message: str
) -> None:
    m = memory(ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings()))
    with pytest.raises(InvalidInputError, match=message):
        m.add_facts(["Alice works at Acme"], namespace=NS, subject="Alice", **options)
    assert m.store.count(Granularity.FACT, NS) == 0


def test_an_expired_given_fact_leaves_reads_and_is_swept(
    open_store: Callable[[], Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    m = memory(open_store())
    m.set_default_ttl(NS, HOUR)
    m.add_facts(["Alice works at Acme"], namespace=NS, subject="Alice")
    m.add_facts(["Alice lives in Leeds"], namespace=NS, subject="Alice", ttl=3 * 3600)
    assert {h.text for h in m.get_all(namespace=NS)} == {
        "Alice works at Acme",
        "Alice lives in Leeds",
    }
    then = datetime.now(UTC) + 2 * HOUR
    monkeypatch.setattr(expiry, "utc_now", lambda: then)
    assert [h.text for h in m.get_all(namespace=NS)] == ["Alice lives in Leeds"]
    assert "Acme" not in " ".join(h.text for h in m.search("Acme", namespace=NS))
    assert m.sweep_expired(NS, now=then) == 1
    assert [f.text for f in m.store.get("fact", NS)] == ["Alice lives in Leeds"]


def test_a_background_add_takes_the_default_too() -> None:
    store = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    reply = "T|Codes\nS|Alice told her gate code\nF|Alice|Alice has a gate code"
    model = SchemaChatModel().script("ConstructionLines", reply)
    m = Memory(
        store=store, chat_model=model, config=MemoryConfig(context={"trigger_policy": "session"})
    )
    m.set_default_ttl(NS, HOUR)
    now = datetime.now(UTC)
    result = m.add(
        "my gate code is 1",
        namespace=NS,
        speaker="Alice",
        session_closed=True,
        consolidate="background",
    )
    m.flush(timeout=30)
    (turn,) = store.get("raw", NS, result.pending_raw_ids)
    assert near(turn.expires_at, now + HOUR)
    facts = store.get("fact", NS)
    assert facts and all(f.expires_at == turn.expires_at for f in facts)
    m.close()
