"""Streaming the memory graph: per-node updates and memory-change custom events."""

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from lamina.agents.common.refinement import fact_id
from lamina.core.state import Written
from lamina.graphs import MemoryContext, build_memory_graph
from lamina.graphs.events import MEMORY_WRITTEN, memory_events
from lamina.records import FactRecord
from lamina.stores import ChromaMemoryStore
from lamina.testing import FakeEmbeddings, SchemaChatModel

NS = "user:alice"
T0 = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def store() -> ChromaMemoryStore:
    return ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())


@pytest.fixture
def model() -> SchemaChatModel:
    return SchemaChatModel()


def turn(text: str, minute: int) -> dict[str, Any]:
    return {
        "speaker": "Alice",
        "text": text,
        "occurred_at": T0 + timedelta(minutes=minute),
        "session_id": "s1",
    }


def facts_reply(*statements: str) -> str:
    notes = [f"F|t1|Alice|{s}" for s in statements]
    return "\n".join(["T|Hike", "S|Alice hiked.", *notes])


def stream(store, model, payload, modes, **ctx: Any) -> list[Any]:  # type: ignore[no-untyped-def]
    graph = build_memory_graph(chat_model=model, store=store).compile()
    context = MemoryContext(namespace=NS, **ctx)
    return list(graph.stream(payload, context=context, stream_mode=modes, subgraphs=True))


def ingest_payload() -> dict[str, Any]:
    return {
        "turns": [turn("We hiked Mount Tam today", 0), turn("My boots got soaked", 1)],
        "session_closed": True,
    }


def test_ingest_streams_one_update_per_node(store, model) -> None:  # type: ignore[no-untyped-def]
    model.script("ConstructionLines", facts_reply("Alice hiked Mount Tam"))
    chunks = stream(store, model, ingest_payload(), "updates", trigger_policy="session")
    inner = [(ns, node) for ns, update in chunks for node in update if ns]
    assert all(ns[0].startswith("ingest:") for ns, _ in inner)
    # the refresher runs with no conflict too: it clears the new fact's pending flag
    nodes = ["raw_write", "episode_trigger", "constructor", "judge", "refresher"]
    assert [node for _, node in inner] == nodes
    (top,) = [update for ns, update in chunks if not ns]
    assert set(top) == {"ingest"}
    assert len(top["ingest"]["new_raw_ids"]) == 2
    trigger = next(u["episode_trigger"] for ns, u in chunks if "episode_trigger" in u)
    assert trigger["trigger"].consolidate and "session closed" in trigger["trigger"].reason


def test_recall_streams_one_update_per_node(store, model) -> None:  # type: ignore[no-untyped-def]
    fact = FactRecord(
        id=fact_id(NS, "Alice owns a dog named Rex"),
        namespace=NS,
        text="Alice owns a dog named Rex",
        occurred_at=T0,
        valid_from=T0,
    )
    store.add(NS, [fact])
    model.script("DraftFirst", json.dumps({"sufficient": True, "answer": "Rex", "cited": ["m1"]}))
    chunks = stream(store, model, {"question": "What is my dog called?"}, "updates")
    inner = [node for ns, update in chunks if ns for node in update]
    assert inner == ["retriever", "judge", "answer"]
    assert all(ns[0].startswith("recall:") for ns, _ in chunks if ns)
    (top,) = [update for ns, update in chunks if not ns]
    assert top["recall"]["answer"] == "Rex" and top["recall"]["citations"] == [fact.id]


def test_every_memory_change_of_an_ingest_run_is_a_custom_event(store, model) -> None:  # type: ignore[no-untyped-def]
    model.script(
        "ConstructionLines", facts_reply("Alice hiked Mount Tam", "Alice's boots got soaked")
    )
    chunks = stream(store, model, ingest_payload(), ["updates", "custom"], trigger_policy="session")
    events = [data for _, mode, data in chunks if mode == "custom"]
    (result,) = [d["ingest"] for ns, mode, d in chunks if mode == "updates" and not ns]
    expected = {("raw", raw_id, "created") for raw_id in result["new_raw_ids"]} | {
        (w.granularity, w.id, w.action) for w in result["written"]
    }
    assert {(e["granularity"], e["id"], e["action"]) for e in events} == expected
    assert len(events) == len(expected)  # each change announced once
    assert {e["granularity"] for e in events} == {"raw", "episode", "fact", "scene"}
    assert all(e["event"] == MEMORY_WRITTEN and e["namespace"] == NS for e in events)
    assert {e["node"] for e in events if e["granularity"] == "raw"} == {"raw_write"}
    assert {e["node"] for e in events if e["granularity"] != "raw"} == {"constructor"}
    # the ids are real: every announced record is in the store
    for e in events:
        assert store.get(e["granularity"], NS, [e["id"]]), e
    # a node's events come before its own update in the stream
    order = [(mode, data if mode == "custom" else next(iter(data))) for _, mode, data in chunks]
    first_update = {
        name: i for i, (mode, name) in reversed(list(enumerate(order))) if mode == "updates"
    }
    for i, (mode, data) in enumerate(order):
        if mode == "custom":
            assert i < first_update[data["node"]]


def test_a_superseded_fact_is_announced_by_the_refresher(store, model) -> None:  # type: ignore[no-untyped-def]
    old = FactRecord(
        id=fact_id(NS, "Alice lives in Boston"),
        namespace=NS,
        text="Alice lives in Boston",
        subject="Alice",
        occurred_at=T0 - timedelta(days=90),
        valid_from=T0 - timedelta(days=90),
    )
    store.add(NS, [old])
    model.script("ConstructionLines", facts_reply("Alice lives in Denver"))
    model.script("SupersessionCheck", json.dumps({"verdicts": [{"pair": "p1", "outdated": True}]}))
    payload = {"turns": [turn("I moved to Denver!", 0)], "session_closed": True}
    chunks = stream(store, model, payload, ["updates", "custom"], trigger_policy="session")
    events = [data for _, mode, data in chunks if mode == "custom"]
    superseded = [e for e in events if e["action"] == "superseded"]
    assert superseded == [
        {
            "event": MEMORY_WRITTEN,
            "node": "refresher",
            "namespace": NS,
            "granularity": "fact",
            "id": old.id,
            "action": "superseded",
        }
    ]


def test_recall_refresh_is_announced(store, model) -> None:  # type: ignore[no-untyped-def]
    def fact(text: str, days: int) -> FactRecord:
        when = T0 + timedelta(days=days)
        return FactRecord(
            id=fact_id(NS, text), namespace=NS, text=text, occurred_at=when, valid_from=when
        )

    store.add(NS, [fact("Alice lives in Boston", -100), fact("Alice lives in Denver", 0)])
    conflict = {"sufficient": True, "answer": "Denver", "conflicting": ["m1", "m2"]}
    model.script("DraftFirst", json.dumps(conflict))

    def update_boston(messages: list[Any]) -> str:
        memories = str(messages[-2].content)
        label = next(line.split("]")[0][1:] for line in memories.splitlines() if "Boston" in line)
        edit = {"label": label, "new_content": "Alice lives in Denver"}
        return json.dumps({"action": "update", "reason": "moved", "edits": [edit]})

    model.script("RefreshPlan", update_boston)
    model.script("AnswerDraft", json.dumps({"answerable": True, "answer": "Denver"}))
    chunks = stream(store, model, {"question": "Where does Alice live?"}, ["updates", "custom"])
    events = [data for ns, mode, data in chunks if mode == "custom"]
    assert [(e["node"], e["granularity"], e["id"], e["action"]) for e in events] == [
        ("refresher", "fact", fact_id(NS, "Alice lives in Boston"), "superseded")
    ]
    assert all(ns[0].startswith("recall:") for ns, mode, _ in chunks if mode == "custom")


def test_a_run_without_memory_changes_emits_no_events(store, model) -> None:  # type: ignore[no-untyped-def]
    chunks = stream(store, model, {"question": "anything?"}, ["updates", "custom"])
    assert [data for _, mode, data in chunks if mode == "custom"] == []
    assert any(mode == "updates" for _, mode, _ in chunks)


def test_memory_events_accept_serialised_written_entries() -> None:
    # through the HTTP API, state values come back as plain dicts
    update = {
        "new_raw_ids": ["r1"],
        "written": [
            {"granularity": "fact", "id": "f1", "action": "created"},
            Written(granularity="scene", id="s1", action="updated"),
        ],
    }
    events = memory_events("constructor", NS, update)
    assert [(e["granularity"], e["id"], e["action"]) for e in events] == [
        ("raw", "r1", "created"),
        ("fact", "f1", "created"),
        ("scene", "s1", "updated"),
    ]
    assert memory_events("judge", NS, {"conflicts": []}) == []
