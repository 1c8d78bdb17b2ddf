"""The combined graph routes to ingest or recall; all nodes are visible; checkpoints work."""

import json
from datetime import UTC, datetime

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from lamina.errors import InvalidInputError, InvalidTypeError
from lamina.graphs import MemoryContext, build_memory_graph
from lamina.stores import ChromaMemoryStore
from lamina.testing import FakeEmbeddings, SchemaChatModel

NS = "user:alice"
T0 = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def graph():  # type: ignore[no-untyped-def]
    store = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    model = SchemaChatModel()
    model.script("DraftFirst", json.dumps({"sufficient": True, "answer": "Rex", "cited": ["m1"]}))
    return build_memory_graph(chat_model=model, store=store).compile(checkpointer=InMemorySaver())


def test_routes_turns_to_ingest_and_questions_to_recall(graph) -> None:  # type: ignore[no-untyped-def]
    ctx = MemoryContext(namespace=NS)
    cfg = {"configurable": {"thread_id": "t1"}}
    turn = {
        "speaker": "Alice",
        "text": "My dog is called Rex",
        "occurred_at": T0,
        "session_id": "s1",
    }
    stored = graph.invoke({"turns": [turn]}, cfg, context=ctx)
    assert len(stored["new_raw_ids"]) == 1
    answered = graph.invoke(
        {"question": "What is my dog called?"}, {"configurable": {"thread_id": "t2"}}, context=ctx
    )
    assert answered["answer"] == "Rex" and answered["citations"] == stored["new_raw_ids"]
    with pytest.raises(InvalidInputError, match="turns"):
        graph.invoke({}, {"configurable": {"thread_id": "t3"}}, context=ctx)


def test_every_node_is_visible(graph) -> None:  # type: ignore[no-untyped-def]
    nodes = set(graph.get_graph(xray=True).nodes)
    for name in (
        "raw_write",
        "episode_trigger",
        "constructor",
        "judge",
        "refresher",
        "retriever",
        "answer",
    ):
        assert any(n.endswith(name) for n in nodes), name


def test_subgraph_updates_stream(graph) -> None:  # type: ignore[no-untyped-def]
    turn = {"speaker": "Alice", "text": "hello", "occurred_at": T0, "session_id": "s1"}
    chunks = list(
        graph.stream(
            {"turns": [turn]},
            {"configurable": {"thread_id": "t4"}},
            context=MemoryContext(namespace=NS),
            stream_mode="updates",
            subgraphs=True,
        )
    )
    seen = {name for _, update in chunks for name in update}
    assert {"raw_write", "episode_trigger"} <= seen


def test_an_unknown_option_fails_before_the_graph_is_built() -> None:
    store = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    with pytest.raises(InvalidTypeError, match=r"\['max_attempt'\].*max_attempts"):
        build_memory_graph(chat_model=SchemaChatModel(), store=store, max_attempt=2)  # type: ignore[call-arg]


def test_the_options_reach_both_subgraphs() -> None:
    """The clock stamps what ingest stores; count_tokens counts the recall context."""
    store = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    learned = datetime(2030, 1, 1, tzinfo=UTC)
    counted: list[str] = []

    def count(text: str) -> int:
        counted.append(text)
        return len(text.split())

    graph = build_memory_graph(
        chat_model=SchemaChatModel(), store=store, clock=lambda: learned, count_tokens=count
    ).compile()
    ctx = MemoryContext(namespace=NS)
    turn = {
        "speaker": "Alice",
        "text": "My dog is called Rex",
        "occurred_at": T0,
        "session_id": "s1",
    }
    (raw_id,) = graph.invoke({"turns": [turn]}, context=ctx)["new_raw_ids"]
    (stored,) = store.get("raw", NS, [raw_id])
    assert stored.recorded_at == learned
    graph.invoke({"question": "What is my dog called?", "mode": "retrieve"}, context=ctx)
    assert any("Rex" in text for text in counted)
