"""Memories that expire: add(..., expires_at= / ttl=), reads after expiry, the sweeper."""

from __future__ import annotations

import logging
import re
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from langchain_core.messages import BaseMessage

import lamina.stores.expiry as expiry
from lamina import Memory, MemoryConfig
from lamina.errors import InvalidInputError, InvalidTypeError
from lamina.records import RawTurn
from lamina.stores import ChromaMemoryStore
from lamina.stores.namespaces import expired_records
from lamina.testing import FakeEmbeddings, SchemaChatModel

NS = "user:alice"
SESSION = {"trigger_policy": "session"}


def notes_reply(messages: list[BaseMessage]) -> str:
    text = "\n".join(str(m.content) for m in messages)
    found = sorted(set(re.findall(r"my (\w+) code is", text)))
    facts = [f"F|Alice|Alice has a {w} code" for w in found]
    return "\n".join(["T|Codes", "S|Alice told her codes: " + ", ".join(found), *facts])


@pytest.fixture
def model() -> SchemaChatModel:
    return SchemaChatModel().script("ConstructionLines", *[notes_reply] * 20)


@pytest.fixture
def memory(model: SchemaChatModel) -> Memory:
    store = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    return Memory(store=store, chat_model=model, config=MemoryConfig(context=SESSION))


def later(monkeypatch: pytest.MonkeyPatch, by: timedelta) -> datetime:
    """Move the clock reads judge expiry by forward; return that time."""
    then = datetime.now(UTC) + by
    monkeypatch.setattr(expiry, "utc_now", lambda: then)
    return then


def add_codes(memory: Memory, word: str, session: str, **options: Any) -> Any:
    return memory.add(
        f"my {word} code is 4471",
        namespace=NS,
        speaker="Alice",
        session_id=session,
        session_closed=True,
        **options,
    )


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"ttl": -5}, InvalidInputError, "ttl must be positive"),
        ({"ttl": 0}, InvalidInputError, "ttl must be positive"),
        ({"ttl": "1h"}, InvalidTypeError, "ttl must be a timedelta or a number of seconds"),
        (
            {"expires_at": datetime(2020, 1, 1, tzinfo=UTC)},
            InvalidInputError,
            "is not in the future",
        ),
        ({"expires_at": datetime(2099, 1, 1)}, InvalidInputError, "naive"),
        (
            {"expires_at": datetime(2099, 1, 1, tzinfo=UTC), "ttl": 60},
            InvalidInputError,
            "not both",
        ),
    ],
)
def test_an_expiry_in_the_past_or_malformed_is_refused_before_any_write(
    memory: Memory, options: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        add_codes(memory, "door", "s1", **options)
    assert memory.store.count("raw", NS) == 0


def test_ttl_sets_expires_at_on_the_turns_and_what_is_built_from_them(memory: Memory) -> None:
    before = datetime.now(UTC)
    add_codes(memory, "door", "s1", ttl=timedelta(hours=1))
    add_codes(memory, "bike", "s2")  # never expires
    raw = {r.text: r for r in memory.store.get("raw", NS) if isinstance(r, RawTurn)}
    door = raw["my door code is 4471"].expires_at
    assert door is not None and before + timedelta(minutes=59) < door < before + timedelta(hours=2)
    assert raw["my bike code is 4471"].expires_at is None
    facts = {f.text: f.expires_at for f in memory.store.get("fact", NS)}
    assert facts == {"Alice has a door code": door, "Alice has a bike code": None}
    episodes = sorted(memory.store.get("episode", NS), key=lambda e: e.expires_at is None)
    assert [e.expires_at for e in episodes] == [door, None]


def test_expired_memories_are_found_by_no_read_and_the_sweeper_forgets_them(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    add_codes(memory, "door", "s1", ttl=3600)
    add_codes(memory, "bike", "s2")
    assert any("door" in h.text for h in memory.search("door code", namespace=NS))
    then = later(monkeypatch, timedelta(hours=2))

    def texts(records: Any) -> str:
        return " ".join(getattr(r, "text", "") for r in records)

    assert "door" not in texts(memory.search("door code", namespace=NS))
    assert "door" not in texts(memory.get_all(namespace=NS))
    assert "door" not in texts(r for rs in memory.inspect(namespace=NS).values() for r in rs)
    assert "bike" in texts(memory.get_all(namespace=NS))
    answer_model = SchemaChatModel()
    reader = Memory(store=memory.store, chat_model=answer_model)
    reader.answer("What is my door code?", namespace=NS)
    shown = "\n".join(str(m.content) for _, p in answer_model.calls for m in p)
    assert answer_model.calls and "bike code" in shown  # the question names "door" itself
    assert not [t for t in ("door code is 4471", "a door code", "codes: door") if t in shown]

    raw, facts = memory.store.count("raw", NS), memory.store.count("fact", NS)
    assert expired_records(memory.store, then)[NS]["raw"]
    deleted = memory.sweep_expired(now=then)
    assert deleted >= 3  # the turn, its fact and its episode
    assert memory.store.count("raw", NS) == raw - 1
    assert memory.store.count("fact", NS) == facts - 1
    assert expired_records(memory.store, then) == {}
    assert memory.sweep_expired(now=then) == 0
    scenes = memory.store.get("scene", NS)  # rewritten from the member left
    assert scenes and all("door" not in s.text and s.expires_at is None for s in scenes)
    tombstones = [e for e in memory.store.list_audit(NS) if e.action == "forget"]
    assert tombstones  # the same tombstone as forget


def test_sweep_expired_checks_its_arguments(memory: Memory) -> None:
    with pytest.raises(InvalidInputError, match="naive"):
        memory.sweep_expired(now=datetime(2099, 1, 1))
    with pytest.raises(InvalidInputError):
        memory.sweep_expired("not a namespace!")


def test_a_background_add_keeps_its_expiry(memory: Memory) -> None:
    result = add_codes(memory, "door", "s1", ttl=3600, consolidate="background")
    memory.flush(timeout=30)
    (turn,) = memory.store.get("raw", NS, result.pending_raw_ids)
    assert turn.expires_at is not None
    assert all(f.expires_at == turn.expires_at for f in memory.store.get("fact", NS))
    memory.close()


@pytest.mark.usefixtures("postgres_dsn")
def test_postgres_finds_expired_records(postgres_dsn: str) -> None:
    from lamina.stores.postgres import PostgresMemoryStore

    store = PostgresMemoryStore.connect(
        postgres_dsn, embeddings=FakeEmbeddings(), schema=f"t_{uuid.uuid4().hex[:16]}"
    )
    try:
        memory = Memory(store=store, chat_model=SchemaChatModel())  # type: ignore[arg-type]
        memory.add("my gate code is 1", namespace=NS, ttl=60, infer=False)
        memory.add("my bike code is 2", namespace=NS, infer=False)
        assert expired_records(store, datetime.now(UTC)) == {}
        then = datetime.now(UTC) + timedelta(minutes=5)
        (found,) = expired_records(store, then)[NS]["raw"]
        assert memory.sweep_expired(NS, now=then) == 1
        assert [r.text for r in memory.store.get("raw", NS)] == ["my bike code is 2"]
        assert found not in {r.id for r in memory.store.get("raw", NS)}
    finally:
        store.close()


def test_a_sweep_cut_short_by_close_ends_the_sweeper_without_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A Memory closed while its sweeper is sweeping refuses the sweep's forget; the
    sweeper thread ends quietly instead of warning that sweeping failed."""
    memory = Memory(
        config=MemoryConfig(sweep_interval_minutes=0.0005),
        store=ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings()),
    )
    sweeps = []

    def closed_mid_sweep() -> int:
        sweeps.append(1)
        memory.close()  # what close() from another thread does between two namespaces
        return memory.forget(namespace="user:a", all=True).count

    sweeper = memory._sweeper
    assert sweeper is not None
    with caplog.at_level(logging.WARNING, logger="lamina"):
        memory.sweep_expired = closed_mid_sweep  # type: ignore[method-assign]
        sweeper.join(timeout=10)
    assert not sweeper.is_alive() and sweeps == [1]
    assert [r.getMessage() for r in caplog.records if "sweeping" in r.getMessage()] == []
