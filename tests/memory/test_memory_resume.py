"""The facade's checkpointed adds: SQLite by default with the persistent store, and an
interrupted ``add`` resumes when it is called again.

An interruption here is what a killed worker or a Ctrl-C does: an exception that is not
an ``Exception`` escapes from inside an LLM call, so no node may swallow it.
"""

from __future__ import annotations

import asyncio
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from lamina import Memory, MemoryConfig
from lamina.records import RawTurn
from lamina.stores import ChromaMemoryStore
from lamina.testing import FakeEmbeddings, SchemaChatModel

NS = "user:alice"
T0 = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)
TEXTS = [
    "We hiked Mount Tam on Saturday",
    "The trail to the summit was muddy",
    "I started pottery classes downtown",
]


class Interrupted(BaseException):
    """Stands for a killed process."""


def scripted(*, interrupt_facts: bool) -> SchemaChatModel:
    """Construction replies succeed; with ``interrupt_facts`` the first call is killed."""
    model = SchemaChatModel()
    reply = "\n".join(
        ["T|Hike and pottery", "S|" + " ".join(TEXTS), "F|t1|Alice|Alice hiked Mount Tam"]
    )
    if interrupt_facts:
        model.script("ConstructionLines", Interrupted("worker killed"))
    model.script("ConstructionLines", *[reply] * 5)
    return model


def turns() -> list[dict[str, Any]]:
    return [
        {"speaker": "Alice", "text": t, "occurred_at": T0 + timedelta(minutes=i)}
        for i, t in enumerate(TEXTS)
    ]


def threads(db: Path) -> set[str]:
    with sqlite3.connect(db) as conn:
        return {row[0] for row in conn.execute("SELECT DISTINCT thread_id FROM checkpoints")}


def test_an_interrupted_add_resumes_when_called_again(tmp_path: Path) -> None:
    store = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    db = tmp_path / "checkpoints.sqlite"
    model = scripted(interrupt_facts=True)
    config = MemoryConfig(
        data_dir=tmp_path,
        checkpointer=str(db),
        context={"trigger_policy": "session"},
    )
    with Memory(config=config, store=store, chat_model=model) as memory:
        with pytest.raises(Interrupted):
            memory.add(turns(), namespace=NS, session_id="s1", session_closed=True)
        assert store.count("raw", NS) == 3  # raw turns were stored before any LLM call
        calls_before = len(model.calls)

        result = memory.add(turns(), namespace=NS, session_id="s1", session_closed=True)

        # resumed, not restarted: the thread's state still holds the turns the first
        # attempt stored, and raw_write did not run again (else they would be duplicates)
        assert len(result.new_raw_ids) == 3 and result.duplicate_raw_ids == []
        assert result.failures == []
        assert any(w.granularity == "fact" for w in result.written)
        # only the interrupted step re-ran, once
        resumed_titles = [title for title, _ in model.calls[calls_before:]]
        assert resumed_titles == ["ConstructionLines"]
    raw = [r for r in store.get("raw", NS) if isinstance(r, RawTurn)]
    assert sorted(r.text for r in raw) == sorted(TEXTS)
    assert store.count("episode", NS) == 1
    facts = [f.text for f in store.get("fact", NS)]
    assert facts == ["Alice hiked Mount Tam"]
    assert len(threads(db)) == 1


def test_a_finished_add_is_not_resumed_but_runs_on_a_new_thread(tmp_path: Path) -> None:
    store = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    db = tmp_path / "checkpoints.sqlite"
    config = MemoryConfig(data_dir=tmp_path, checkpointer=str(db))
    with Memory(config=config, store=store, chat_model=scripted(interrupt_facts=False)) as memory:
        first = memory.add(turns(), namespace=NS, session_id="s1")
        again = memory.add(turns(), namespace=NS, session_id="s1")
    assert len(first.new_raw_ids) == 3
    assert again.new_raw_ids == [] and sorted(again.duplicate_raw_ids) == sorted(first.new_raw_ids)
    assert len(threads(db)) == 2


def test_auto_checkpointer_is_sqlite_under_the_data_dir_with_the_persistent_store(
    tmp_path: Path,
) -> None:
    config = MemoryConfig(data_dir=tmp_path)
    assert config.checkpointer == "auto"
    with Memory(
        config=config, embeddings=FakeEmbeddings(), chat_model=scripted(interrupt_facts=False)
    ) as memory:
        memory.add("I adopted a greyhound", namespace=NS, at=T0)
        assert memory.checkpointer is not None
    assert (tmp_path / "checkpoints.sqlite").exists()
    assert len(threads(tmp_path / "checkpoints.sqlite")) == 1


def test_auto_checkpointer_is_off_with_an_injected_store(tmp_path: Path) -> None:
    store = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    config = MemoryConfig(data_dir=tmp_path)
    with Memory(config=config, store=store, chat_model=scripted(interrupt_facts=False)) as memory:
        memory.add("I adopted a greyhound", namespace=NS, at=T0)
        assert memory.checkpointer is None
    assert not (tmp_path / "checkpoints.sqlite").exists()


def test_async_add_resumes_too(tmp_path: Path) -> None:
    asyncio.run(_async_add_resumes(tmp_path))


async def _async_add_resumes(tmp_path: Path) -> None:
    from langgraph.checkpoint.memory import InMemorySaver

    store = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    model = scripted(interrupt_facts=True)
    config = MemoryConfig(data_dir=tmp_path, context={"trigger_policy": "session"})
    saver = InMemorySaver()
    memory = Memory(config=config, store=store, chat_model=model, checkpointer=saver)
    with pytest.raises(Interrupted):
        await memory.aadd(turns(), namespace=NS, session_id="s1", session_closed=True)
    result = await memory.aadd(turns(), namespace=NS, session_id="s1", session_closed=True)
    memory.close()
    assert len(result.new_raw_ids) == 3 and result.duplicate_raw_ids == []
    assert result.failures == []
    assert store.count("raw", NS) == 3 and store.count("episode", NS) == 1
    assert [f.text for f in store.get("fact", NS)] == ["Alice hiked Mount Tam"]
    assert len({c.config["configurable"]["thread_id"] for c in saver.list(None)}) == 1
