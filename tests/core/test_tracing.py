"""OpenTelemetry spans: one per graph node, one per store call inside it, off by default.

The SDK's in-memory exporter collects the spans of one ``Memory.add`` and one
``Memory.answer`` run with a scripted model; the tree, the node figures and the hashed
namespace are checked; so are the trees of Memory calls made outside the graphs, of the
async twins, and of the awaited reads of the Postgres store. Without a tracer provider no
store is wrapped and no span is made.
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import uuid
from datetime import UTC, datetime
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from lamina import Memory, MemoryConfig
from lamina.core import tracing
from lamina.errors import InvalidTypeError
from lamina.stores import ChromaMemoryStore
from lamina.stores.traced import TracedStore, traced
from lamina.testing import FakeEmbeddings, SchemaChatModel

NS = "user:alice"
T0 = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)
TURNS = [
    {"role": "user", "name": "Alice", "content": "I adopted a greyhound called Biscuit"},
    {"role": "user", "name": "Alice", "content": "Biscuit loves the beach"},
]


def memory() -> Memory:
    store = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    config = MemoryConfig(store="memory", context={"trigger_policy": "session"})
    return Memory(config=config, store=store, chat_model=SchemaChatModel())


def by_name(found: tuple[ReadableSpan, ...]) -> dict[str, list[ReadableSpan]]:
    out: dict[str, list[ReadableSpan]] = {}
    for s in found:
        out.setdefault(s.name, []).append(s)
    return out


def test_each_node_is_a_span_with_its_store_calls_inside(spans: InMemorySpanExporter) -> None:
    m = memory()
    m.add(TURNS, namespace=NS, at=T0, session_closed=True)
    named = by_name(spans.get_finished_spans())
    for node in ("lamina.raw_write", "lamina.episode_trigger", "lamina.constructor"):
        assert node in named, f"no span for {node}: {sorted(named)}"
    [raw] = named["lamina.raw_write"]
    assert raw.attributes is not None and raw.attributes["lamina.records_written"] == 2
    [constructor] = named["lamina.constructor"]
    assert constructor.attributes is not None and constructor.attributes["lamina.llm.calls"] >= 1
    adds = [s for s in named["lamina.store.add"] if s.parent is not None]
    assert adds and all(s.parent.span_id in _ids(spans) for s in adds)  # type: ignore[union-attr]
    inside_raw = [s for s in adds if s.parent.span_id == raw.context.span_id]  # type: ignore[union-attr]
    assert inside_raw and inside_raw[0].attributes["lamina.records"] == 2  # type: ignore[index]


def test_the_namespace_is_hashed_unless_asked_plain(
    spans: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch
) -> None:
    digest = hashlib.sha256(NS.encode()).hexdigest()[:16]
    memory().add(TURNS, namespace=NS, at=T0)
    found = spans.get_finished_spans()
    assert found and all(s.attributes["lamina.namespace.hash"] == digest for s in found)  # type: ignore[index]
    assert not any(NS in str(dict(s.attributes or {})) for s in found)
    spans.clear()
    monkeypatch.setenv(tracing.NAMESPACE_MODE_VAR, "plain")
    memory().add(TURNS, namespace=NS, at=T0)
    assert all(s.attributes["lamina.namespace"] == NS for s in spans.get_finished_spans())  # type: ignore[index]


def test_the_recall_graph_is_traced_too(spans: InMemorySpanExporter) -> None:
    m = memory()
    m.add(TURNS, namespace=NS, at=T0, infer=False)
    spans.clear()
    m.answer("What is my dog called?", namespace=NS)
    names = {s.name for s in spans.get_finished_spans()}
    assert "lamina.retriever" in names and "lamina.store.search" in names


def test_without_a_provider_nothing_is_wrapped_or_recorded() -> None:
    assert not tracing.enabled()
    store = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    assert traced(store) is store
    with tracing.span("lamina.test", NS) as current:
        assert current is None


def test_a_failing_store_call_is_recorded_on_its_span(spans: InMemorySpanExporter) -> None:
    store = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    assert traced(store) is store  # lamina's stores trace themselves: no second span
    with pytest.raises(Exception, match="granularity"):
        store.get("nonsense", NS)
    [failed] = spans.get_finished_spans()
    assert failed.name == "lamina.store.get" and not failed.status.is_ok
    assert failed.events and failed.events[0].name == "exception"


class _OwnStore:
    """A store of the application's own, which knows nothing of spans."""

    def count(self, granularity: str, namespace: str) -> int:
        return 3


def test_a_store_of_the_application_s_own_is_wrapped(spans: InMemorySpanExporter) -> None:
    store = traced(_OwnStore())  # type: ignore[arg-type]
    assert isinstance(store, TracedStore) and store.count("raw", NS) == 3
    [counted] = spans.get_finished_spans()
    assert counted.name == "lamina.store.count" and counted.attributes["lamina.records"] == 3  # type: ignore[index]


def _ids(spans: InMemorySpanExporter) -> set[int]:
    return {s.context.span_id for s in spans.get_finished_spans()}


def test_tracing_reads_the_arguments_the_way_the_store_takes_them(
    spans: InMemorySpanExporter, make_turn: Any
) -> None:
    store = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    store.add(NS, make_turn(NS, "a lone record, not in a list", 0))  # the store takes it
    assert store.count("raw", NS) == 1
    with pytest.raises(InvalidTypeError, match="records must be a list"):
        store.add(NS, (t for t in [make_turn(NS, "x", 1)]))  # type: ignore[arg-type]
    added, refused = [s for s in spans.get_finished_spans() if s.name == "lamina.store.add"]
    assert added.status.is_ok and added.attributes["lamina.granularity"] is not None  # type: ignore[index]
    assert not refused.status.is_ok


def _tree(spans: InMemorySpanExporter, root: ReadableSpan) -> list[ReadableSpan]:
    """The spans under ``root``, at any depth."""
    found = spans.get_finished_spans()
    by_id = {s.context.span_id: s for s in found}

    def under(s: ReadableSpan) -> bool:
        while s.parent is not None:
            if s.parent.span_id == root.context.span_id:
                return True
            s = by_id[s.parent.span_id]
        return False

    return [s for s in found if under(s)]


def _root(spans: InMemorySpanExporter, name: str) -> ReadableSpan:
    [root] = [s for s in spans.get_finished_spans() if s.name == name]
    assert root.parent is None
    return root


def test_memory_calls_outside_a_graph_are_trees_of_store_spans(
    spans: InMemorySpanExporter,
) -> None:
    m = memory()
    m.add(TURNS, namespace=NS, at=T0, infer=False)
    [turn_id, *_] = [h.id for h in m.get_all(namespace=NS)]
    digest = hashlib.sha256(NS.encode()).hexdigest()[:16]
    calls = {
        "get_all": lambda: m.get_all(namespace=NS),
        "history": lambda: m.history(turn_id, namespace=NS),
        "export": lambda: m.export(io.StringIO(), namespace=NS),
        "add_facts": lambda: m.add_facts(["Alice has a greyhound"], namespace=NS, subject="Alice"),
        "forget": lambda: m.forget(namespace=NS, memory_ids=[turn_id]),
    }
    for call, run in calls.items():
        spans.clear()
        run()
        root = _root(spans, f"lamina.memory.{call}")
        inner = [s for s in _tree(spans, root) if s.name.startswith("lamina.store.")]
        assert inner, f"{call} made no store span"
        assert len(inner) == len(spans.get_finished_spans()) - 1, call  # nothing outside
        assert all(s.attributes["lamina.namespace.hash"] == digest for s in inner)  # type: ignore[index]
    spans.clear()
    listed = m.get_all(namespace=NS)
    gets = [s for s in _tree(spans, _root(spans, "lamina.memory.get_all"))]
    assert {s.name for s in gets} == {"lamina.store.get"}
    assert {s.attributes["lamina.granularity"] for s in gets} == {  # type: ignore[index]
        "raw",
        "fact",
        "episode",
        "scene",
    }
    assert sum(s.attributes["lamina.records"] for s in gets) == len(listed)  # type: ignore[index, misc]


def test_keyword_index_reads_are_store_spans(spans: InMemorySpanExporter) -> None:
    m = memory()
    m.add(TURNS, namespace=NS, at=T0, infer=False)
    spans.clear()
    m.search("greyhound", namespace=NS)  # reads the namespace's speakers, then searches
    root = _root(spans, "lamina.memory.search")
    assert {s.name for s in _tree(spans, root)} == {"lamina.store.distinct", "lamina.store.search"}
    digest = hashlib.sha256(NS.encode()).hexdigest()[:16]
    spans.clear()
    view = m.store.lexical_index("raw", NS)
    assert view.distinct("speaker") == ["Alice"]
    scored = view.scores("greyhound")
    named = by_name(spans.get_finished_spans())
    [distinct], [scores] = named["lamina.store.distinct"], named["lamina.store.keyword_scores"]
    for read in (distinct, scores):
        assert read.attributes is not None
        assert read.attributes["lamina.namespace.hash"] == digest
        assert read.attributes["lamina.granularity"] == "raw"
    assert distinct.attributes["lamina.records"] == 1  # type: ignore[index]
    assert scores.attributes["lamina.records"] == len(scored) >= 1  # type: ignore[index]


def test_async_twins_are_spans_named_as_their_call_and_never_twice(
    spans: InMemorySpanExporter,
) -> None:
    m = memory()

    async def run() -> None:
        await m.aadd(TURNS, namespace=NS, at=T0, session_closed=True)
        await m.aanswer("What is my dog called?", namespace=NS)
        await m.asearch("greyhound", namespace=NS)  # Chroma: the sync search in a thread
        await m.aget_all(namespace=NS)

    asyncio.run(run())
    names = [s.name for s in spans.get_finished_spans() if s.name.startswith("lamina.memory.")]
    assert sorted(names) == [
        "lamina.memory.add",
        "lamina.memory.answer",
        "lamina.memory.get_all",
        "lamina.memory.search",
    ]
    add = _root(spans, "lamina.memory.add")
    assert {"lamina.raw_write", "lamina.constructor"} <= {s.name for s in _tree(spans, add)}
    answer = _root(spans, "lamina.memory.answer")
    assert "lamina.retriever" in {s.name for s in _tree(spans, answer)}
    search = _root(spans, "lamina.memory.search")
    assert "lamina.store.search" in {s.name for s in _tree(spans, search)}


def test_async_reads_on_postgres_are_trees_of_store_spans(
    spans: InMemorySpanExporter, postgres_dsn: str
) -> None:
    import psycopg

    schema = f"t_{uuid.uuid4().hex[:16]}"
    m = Memory(config=MemoryConfig(store=postgres_dsn, prefix=schema), embeddings=FakeEmbeddings())
    try:
        m.add(TURNS, namespace=NS, at=T0, infer=False)
        spans.clear()

        async def run() -> tuple[list[Any], list[Any], int]:
            m.store.pool.close()  # the sync pool is gone: every read below is awaited
            hits = await m.asearch("greyhound", namespace=NS, threshold=0.0)
            listed = await m.aget_all(namespace=NS, granularities=["raw"])
            counted = await m.store.acount("raw", NS)
            await m.aclose()
            return hits, listed, counted

        hits, listed, counted = asyncio.run(run())
    finally:
        with psycopg.connect(postgres_dsn, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
    assert hits and len(listed) == counted == 2
    digest = hashlib.sha256(NS.encode()).hexdigest()[:16]
    search = _root(spans, "lamina.memory.search")
    inner = _tree(spans, search)
    assert all(s.parent.span_id == search.context.span_id for s in inner)  # type: ignore[union-attr]
    assert {s.name for s in inner} >= {"lamina.store.search", "lamina.store.distinct"}
    assert len([s for s in inner if s.name == "lamina.store.search"]) == 4  # each granularity
    assert all(s.attributes["lamina.namespace.hash"] == digest for s in inner)  # type: ignore[index]
    [get] = _tree(spans, _root(spans, "lamina.memory.get_all"))
    assert get.name == "lamina.store.get" and get.attributes["lamina.records"] == 2  # type: ignore[index]
    count = _root(spans, "lamina.store.count")
    assert count.attributes["lamina.records"] == 2  # type: ignore[index]
