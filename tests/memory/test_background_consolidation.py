"""add(..., consolidate="background"): pending in the store, one worker, flush, restarts."""

from __future__ import annotations

import asyncio
import re
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import BaseMessage

from lamina import Memory, MemoryConfig
from lamina.errors import (
    ConsolidationBacklogError,
    ConsolidationPendingError,
    InvalidInputError,
)
from lamina.integrations.middleware import MemoryMiddleware
from lamina.memory import background
from lamina.memory.worker import pending_batches, pending_count
from lamina.records import RawTurn
from lamina.stores import ChromaMemoryStore
from lamina.stores.namespaces import pending_namespaces
from lamina.stores.worker_lock import worker_lock
from lamina.testing import FakeEmbeddings, SchemaChatModel, requested_line_format

NS = "user:alice"
SESSION = {"trigger_policy": "session"}


def notes_reply(messages: list[BaseMessage]) -> str:
    """An episode of the notes the prompt shows, one fact per note."""
    text = "\n".join(str(m.content) for m in messages)
    numbers = sorted(set(re.findall(r"note (\d+) about kayaks", text)), key=int)
    facts = [f"F|Alice|Alice keeps note {n} about kayaks" for n in numbers]
    return "\n".join(["T|Kayak notes", "S|Alice keeps kayak notes " + ", ".join(numbers), *facts])


class GatedModel(SchemaChatModel):
    """Construction replies wait for ``gate``: the worker blocks, the caller must not."""

    gate: Any = None

    def next_reply(self, prompt: list[BaseMessage], **kwargs: Any) -> Any:
        if self.gate is not None:
            self.gate.wait(30)
        return super().next_reply(prompt, **kwargs)


class KilledWorker(BaseException):
    """Ends the worker thread the way a kill does: no handler runs, nothing is cleared."""


class KillingModel(SchemaChatModel):
    """Kills the worker during its ``kill_on``-th construction call, once."""

    kill_on: int = 0

    def next_reply(self, prompt: list[BaseMessage], **kwargs: Any) -> Any:
        building = requested_line_format(prompt) == "ConstructionLines"
        if building and self.kill_on and self.count("ConstructionLines") + 1 == self.kill_on:
            self.kill_on = 0
            self.calls.append(("killed", prompt))
            raise KilledWorker("worker killed mid-build")
        return super().next_reply(prompt, **kwargs)


def scripted(model: SchemaChatModel) -> SchemaChatModel:
    return model.script("ConstructionLines", *[notes_reply] * 200)


def memory_on(store: ChromaMemoryStore, model: SchemaChatModel, **config: Any) -> Memory:
    return Memory(store=store, chat_model=model, config=MemoryConfig(context=SESSION, **config))


def add_notes(memory: Memory, numbers: range, **options: Any) -> Any:
    texts = [f"note {n} about kayaks" for n in numbers]
    return memory.add(
        texts,
        namespace=NS,
        session_id=f"s{numbers.start}",
        speaker="Alice",
        session_closed=True,
        consolidate="background",
        **options,
    )


def assert_built_once(store: ChromaMemoryStore, turns: int) -> None:
    """Every turn consolidated into exactly one episode, no record twice, nothing pending."""
    raw = [r for r in store.get("raw", NS) if isinstance(r, RawTurn)]
    assert len(raw) == turns
    assert all(len(r.consolidated_into) == 1 and r.pending is None for r in raw)
    episodes = store.get("episode", NS)
    assert sorted(e.id for e in episodes) == sorted({r.consolidated_into[0] for r in raw})
    texts = Counter(f.text for f in store.get("fact", NS))
    assert texts and max(texts.values()) == 1
    assert pending_count(store, NS) == 0


@pytest.fixture
def store() -> ChromaMemoryStore:
    return ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())


def test_a_background_add_returns_before_any_llm_call(store: ChromaMemoryStore) -> None:
    gate = threading.Event()
    model = scripted(GatedModel(gate=gate))
    memory = memory_on(store, model)
    result = add_notes(memory, range(3))
    assert len(result.pending_raw_ids) == 3 and result.new_raw_ids == result.pending_raw_ids
    assert result.llm_calls == [] and result.written == []
    # stored and marked pending in the store itself, found by search at once
    assert pending_count(store, NS) == 3 and pending_namespaces(store) == {NS: 3}
    assert [h.granularity for h in memory.search("kayaks", namespace=NS)] == ["raw"] * 3
    gate.set()
    memory.flush(timeout=30)
    assert_built_once(store, 3)
    assert model.count("ConstructionLines") == 1
    memory.close()


def test_each_add_is_built_as_its_own_batch_in_order(store: ChromaMemoryStore) -> None:
    gate = threading.Event()
    model = scripted(GatedModel(gate=gate))
    memory = memory_on(store, model)
    for start in (0, 2, 4):
        add_notes(memory, range(start, start + 2))
    batches = pending_batches(store, NS)
    assert [[t.text for t in b] for b in batches][0] == [
        "note 0 about kayaks",
        "note 1 about kayaks",
    ]
    gate.set()
    memory.flush(NS, timeout=30)
    assert_built_once(store, 6)
    assert len(store.get("episode", NS)) == 3
    memory.close()


def test_flush_past_its_timeout_says_how_many_turns_wait(store: ChromaMemoryStore) -> None:
    gate = threading.Event()
    memory = memory_on(store, scripted(GatedModel(gate=gate)))
    add_notes(memory, range(4))
    with pytest.raises(ConsolidationPendingError, match="4 turn\\(s\\) still pending") as e:
        memory.flush(timeout=0.3)
    assert e.value.pending == 4
    with pytest.raises(ConsolidationPendingError, match="4 turn\\(s\\) still pending"):
        asyncio.run(memory.aflush(NS, timeout=0.3))  # the async twin says the same
    gate.set()
    memory.flush(timeout=30)
    assert pending_count(store) == 0
    memory.close()


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_a_killed_worker_leaves_the_turns_pending_and_a_restart_builds_them_once(
    tmp_path: Path, store: ChromaMemoryStore
) -> None:
    killed = scripted(KillingModel(kill_on=2))  # dies building the second batch
    first = memory_on(store, killed)
    for start in (0, 3, 6):
        add_notes(first, range(start, start + 3))
    deadline = time.monotonic() + 30
    while not any(t == "killed" for t, _ in killed.calls) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.2)
    assert pending_count(store, NS) == 6  # the first batch built, two left in the store
    # the process restarts: a new Memory on the same store picks up what was left
    model = scripted(SchemaChatModel())
    second = memory_on(store, model)
    second.flush(timeout=30)
    assert_built_once(store, 9)
    assert len(store.get("episode", NS)) == 3
    assert model.count("ConstructionLines") == 2
    second.close()


def test_two_memories_on_one_path_build_disjoint_batches(tmp_path: Path) -> None:
    path = tmp_path / "chroma"
    models = [scripted(SchemaChatModel()), scripted(SchemaChatModel())]
    stores = [ChromaMemoryStore.persistent(path, embeddings=FakeEmbeddings()) for _ in models]
    writer = memory_on(stores[0], models[0])
    gate = threading.Event()
    models[0].__dict__["gate"] = gate
    for start in range(0, 12, 2):
        add_notes(writer, range(start, start + 2))
    memories = [writer, memory_on(stores[1], models[1])]
    threads = [threading.Thread(target=m.flush, kwargs={"timeout": 60}) for m in memories]
    for t in threads:
        t.start()
    for t in threads:
        t.join(90)
    built = sum(m.count("ConstructionLines") for m in models)
    assert built == 6  # six batches, each built by one of the two
    assert_built_once(stores[0], 12)
    for m in memories:
        m.close()


def test_the_worker_lock_excludes_another_holder(tmp_path: Path) -> None:
    stores = [
        ChromaMemoryStore.persistent(tmp_path / "c", embeddings=FakeEmbeddings()) for _ in range(2)
    ]
    a, b = worker_lock(stores[0], NS), worker_lock(stores[1], NS)
    assert a.acquire() and not b.acquire()
    assert worker_lock(stores[1], "user:bob").acquire()  # another namespace is free
    a.release()
    assert b.acquire()
    b.release()


def test_a_full_queue_waits_then_refuses_and_stores_nothing(
    store: ChromaMemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a queue of 3 turns and a 0.2 s wait, read when the worker starts (at the first add)
    monkeypatch.setattr(background, "MAX_PENDING", 3)
    monkeypatch.setattr(background, "BACKLOG_WAIT", 0.2)
    gate = threading.Event()
    memory = memory_on(store, scripted(GatedModel(gate=gate)))
    add_notes(memory, range(3))
    with pytest.raises(ConsolidationBacklogError, match="nothing of this add was stored"):
        add_notes(memory, range(3, 5))
    assert store.count("raw", NS) == 3
    gate.set()
    memory.flush(timeout=30)
    add_notes(memory, range(3, 5))  # room again
    memory.flush(timeout=30)
    assert_built_once(store, 5)
    memory.close()


def test_answer_finds_pending_turns_and_says_so(store: ChromaMemoryStore) -> None:
    gate = threading.Event()
    memory = memory_on(store, scripted(GatedModel(gate=gate)))
    add_notes(memory, range(2))
    answer_model = SchemaChatModel()
    reader = Memory(store=store, chat_model=answer_model, config=MemoryConfig(context=SESSION))
    result = reader.answer("What are my kayak notes?", namespace=NS)
    assert result.pending_turns == 2
    shown = "\n".join(str(m.content) for _, p in answer_model.calls for m in p)
    assert "note 0 about kayaks" in shown  # found through the raw layer
    gate.set()
    memory.flush(timeout=30)
    assert reader.answer("What are my kayak notes?", namespace=NS).pending_turns == 0
    memory.close()


def test_close_leaves_pending_turns_in_the_store(store: ChromaMemoryStore) -> None:
    gate = threading.Event()
    memory = memory_on(store, scripted(GatedModel(gate=gate)))
    add_notes(memory, range(2))
    add_notes(memory, range(2, 4))
    threading.Timer(0.3, gate.set).start()
    memory.close()  # waits for the batch in progress only
    assert pending_count(store, NS) in (0, 2, 4)  # whole batches: built or left, never half
    with pytest.raises(InvalidInputError, match="closed"):
        memory.flush()
    successor = memory_on(store, scripted(SchemaChatModel()))
    successor.flush(timeout=30)  # what was left is built by the next Memory on the store
    assert_built_once(store, 4)
    successor.close()


def test_async_background_add_and_flush(store: ChromaMemoryStore) -> None:
    memory = memory_on(store, scripted(SchemaChatModel()))

    async def run() -> None:
        async with memory:
            result = await memory.aadd(
                ["note 1 about kayaks"],
                namespace=NS,
                speaker="Alice",
                session_closed=True,
                consolidate="background",
            )
            assert len(result.pending_raw_ids) == 1
            await memory.aflush(timeout=30)

    asyncio.run(run())
    assert_built_once(store, 1)


def test_bad_consolidate_values_are_refused(store: ChromaMemoryStore) -> None:
    memory = memory_on(store, scripted(SchemaChatModel()))
    with pytest.raises(InvalidInputError, match="consolidate must be one of"):
        memory.add("hi", namespace=NS, consolidate="later")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="consolidate must be one of"):
        MemoryMiddleware(memory, consolidate="soon")  # type: ignore[arg-type]
    assert store.count("raw", NS) == 0


def test_the_middleware_defaults_to_background(store: ChromaMemoryStore) -> None:
    memory = memory_on(store, scripted(SchemaChatModel()))
    assert MemoryMiddleware(memory).consolidate == "background"
    assert MemoryMiddleware(memory, consolidate="inline").consolidate == "inline"


@pytest.mark.usefixtures("postgres_dsn")
def test_postgres_pending_and_advisory_lock(postgres_dsn: str) -> None:
    import uuid

    from lamina.stores.postgres import PostgresMemoryStore

    schema = f"t_{uuid.uuid4().hex[:16]}"
    stores = [
        PostgresMemoryStore.connect(postgres_dsn, embeddings=FakeEmbeddings(), schema=schema)
        for _ in range(2)
    ]
    try:
        memory = memory_on(stores[0], scripted(GatedModel(gate=threading.Event())))  # type: ignore[arg-type]
        add_notes(memory, range(2))
        assert pending_namespaces(stores[1]) == {NS: 2} and pending_count(stores[1], NS) == 2
        a, b = worker_lock(stores[0], "user:bob"), worker_lock(stores[1], "user:bob")
        assert a.acquire() and not b.acquire()
        a.release()
        assert b.acquire()
        b.release()
        memory._worker.stop(0)  # type: ignore[union-attr]
    finally:
        for s in stores:
            s.close()
