"""Checkpoint-safe state: every lamina type in graph state is registered with the serializer.

LangGraph's ``JsonPlusSerializer`` logs "Deserializing unregistered type ... from
checkpoint" for a type outside its allowlist, and will block such types in a future
version (``LANGGRAPH_STRICT_MSGPACK=true`` blocks them now: the value comes back as a
plain dict or list). The savers lamina opens (``open_checkpointer``, ``Memory``'s
``checkpointer="memory"``) restore exactly :data:`lamina.graphs.checkpoint.STATE_TYPES`.

The serializer reports every such decision as a serde event (and logs the warning only
once per type and process), so the tests below listen for events and for the log lines,
run with Python warnings turned into errors, and fail on any of them.
"""

from __future__ import annotations

import json
import logging
import warnings
from collections.abc import Iterator
from dataclasses import is_dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import BaseMessage
from langgraph.checkpoint.serde.event_hooks import SerdeEvent, register_serde_event_listener
from pydantic import BaseModel

from lamina import Memory, MemoryConfig
from lamina.core.calls import LLMCall
from lamina.core.state import Candidate, TriggerDecision, Written
from lamina.graphs import MemoryContext, build_memory_graph
from lamina.graphs.checkpoint import STATE_TYPES, open_checkpointer, state_serializer
from lamina.graphs.memory import MemoryInput, MemoryOutput, MemoryState
from lamina.stores import ChromaMemoryStore
from lamina.testing import FakeEmbeddings, SchemaChatModel

NS = "user:alice"
T0 = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)
TEXTS = ["We hiked Mount Tam on Saturday", "The trail to the summit was muddy"]
TURNS = [
    {"speaker": "Alice", "text": t, "occurred_at": T0 + timedelta(minutes=i), "session_id": "s1"}
    for i, t in enumerate(TEXTS)
]
CTX = MemoryContext(namespace=NS, trigger_policy="session")


class SerdeAlarms:
    """What the checkpoint serializer reported: events and warning log lines."""

    def __init__(self) -> None:
        self.events: list[SerdeEvent] = []
        self.logs: list[str] = []

    def assert_silent(self) -> None:
        assert self.events == [], f"serde events (unregistered or blocked types): {self.events}"
        assert self.logs == [], f"serializer warnings: {self.logs}"


class _Collect(logging.Handler):
    def __init__(self, into: list[str]) -> None:
        super().__init__(logging.WARNING)
        self.into = into

    def emit(self, record: logging.LogRecord) -> None:
        self.into.append(record.getMessage())


@pytest.fixture
def alarms() -> Iterator[SerdeAlarms]:
    found = SerdeAlarms()
    unregister = register_serde_event_listener(found.events.append)
    logger = logging.getLogger("langgraph.checkpoint.serde")
    handler = _Collect(found.logs)
    logger.addHandler(handler)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # any Python warning while checkpointing fails
            yield found
    finally:
        logger.removeHandler(handler)
        unregister()


def construction(messages: list[BaseMessage]) -> str:
    """One episode of the session and one fact per turn (the Constructor's line format)."""
    text = "\n".join(str(m.content) for m in messages)
    facts = [f"F|Alice|Alice said: {t}" for t in TEXTS if t in text]
    return "\n".join(["T|A hike", "S|Alice hiked Mount Tam; the trail was muddy.", *facts])


def model() -> SchemaChatModel:
    draft = {"answer": "Mount Tam", "cited": ["m1"], "sufficient": True}
    return (
        SchemaChatModel()
        .script("ConstructionLines", construction)
        .script("DraftFirst", json.dumps(draft))
    )


def test_checkpointed_ingest_and_recall_round_trip_on_sqlite(
    tmp_path: Path, alarms: SerdeAlarms
) -> None:
    store = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    path = tmp_path / "checkpoints.sqlite"
    cfg: Any = {"configurable": {"thread_id": "alice-1"}}
    with open_checkpointer(path) as saver:
        graph = build_memory_graph(chat_model=model(), store=store).compile(checkpointer=saver)
        ingested = graph.invoke({"turns": TURNS, "session_closed": True}, cfg, context=CTX)
        recalled = graph.invoke({"question": "Where did Alice hike?"}, cfg, context=CTX)
        live = graph.get_state(cfg)

    # a new connection (as a restarted process would open): every value comes from the file
    with open_checkpointer(path) as saver:
        graph = build_memory_graph(chat_model=model(), store=store).compile(checkpointer=saver)
        resumed = graph.get_state(cfg)
        every = list(saver.list(None))  # all checkpoints and writes, the subgraphs' included

    alarms.assert_silent()
    assert every and resumed.values == live.values
    values = resumed.values
    assert isinstance(values["trigger"], TriggerDecision) and values["trigger"].consolidate
    assert values["trigger"] == ingested["trigger"]
    assert values["written"] == recalled["written"]  # the thread's written, ingest's first
    assert values["written"][: len(ingested["written"])] == ingested["written"]
    assert values["written"] and all(isinstance(w, Written) for w in values["written"])
    assert values["llm_calls"] and all(isinstance(c, LLMCall) for c in values["llm_calls"])
    assert values["candidates"] == recalled["candidates"]
    assert values["candidates"] and all(isinstance(c, Candidate) for c in values["candidates"])
    assert (values["answer"], values["citations"]) == (recalled["answer"], recalled["citations"])
    assert recalled["answer"] == "Mount Tam" and not recalled["refused"]


def test_memory_with_an_in_memory_checkpointer_restores_without_warnings(
    alarms: SerdeAlarms,
) -> None:
    config = MemoryConfig(store="memory", checkpointer="memory")
    with Memory(config=config, chat_model=model(), embeddings=FakeEmbeddings()) as memory:
        first = memory.add(TURNS, namespace=NS, session_closed=True)
        # the same add again reads the finished thread's checkpoint (to resume or not)
        again = memory.add(TURNS, namespace=NS, session_closed=True)
        result = memory.answer("Where did Alice hike?", namespace=NS)
    assert len(first.new_raw_ids) == 2 and len(again.duplicate_raw_ids) == 2
    assert result.answer == "Mount Tam"
    alarms.assert_silent()


def test_state_serializer_restores_each_state_type(alarms: SerdeAlarms) -> None:
    serde = state_serializer()
    samples = [
        TriggerDecision(policy="session", consolidate=True, reason="closed"),
        Written(granularity="fact", id="f1", action="created"),
        LLMCall(node="judge", schema="DraftFirst", attempt=1, method="json", ok=True, latency_s=1),
        Candidate(granularity="raw", id="r1", text="hi", occurred_at=T0, score=0.5),
    ]
    for value in samples:
        assert serde.loads_typed(serde.dumps_typed(value)) == value
    alarms.assert_silent()


def _lamina_types(tp: Any, seen: set[Any]) -> set[type]:
    """The lamina classes (pydantic models, dataclasses) reachable from a type hint."""
    from typing import get_args, get_type_hints

    from typing_extensions import is_typeddict

    if tp in seen:
        return set()
    seen.add(tp)
    found: set[type] = set()
    if is_typeddict(tp):
        for hint in get_type_hints(tp).values():
            found |= _lamina_types(hint, seen)
        return found
    if isinstance(tp, type) and (issubclass(tp, BaseModel) or is_dataclass(tp)):
        if tp.__module__.startswith("lamina."):
            found.add(tp)
        hints = get_type_hints(tp) if is_dataclass(tp) else {}
        if issubclass(tp, BaseModel):
            hints = {n: f.annotation for n, f in tp.model_fields.items()}
        for hint in hints.values():
            found |= _lamina_types(hint, seen)
        return found
    for arg in get_args(tp):
        found |= _lamina_types(arg, seen)
    return found


def test_every_lamina_type_in_graph_state_is_registered() -> None:
    reachable: set[type] = set()
    for schema in (MemoryState, MemoryInput, MemoryOutput):
        reachable |= _lamina_types(schema, set())
    assert reachable == set(STATE_TYPES)
