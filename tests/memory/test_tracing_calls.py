"""OpenTelemetry spans of the Memory calls made outside the graphs (``lamina.memory.<call>``).

The SDK's in-memory exporter collects the spans; the tree (graph nodes under their
``Memory`` call), the figures and the hashed namespace are checked.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
from datetime import UTC, datetime

import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from lamina import Memory, MemoryConfig
from lamina.core import tracing
from lamina.errors import InvalidInputError
from lamina.memory.spans import TRACED_ASYNC_CALLS, TRACED_CALLS
from lamina.stores import ChromaMemoryStore
from lamina.testing import FakeEmbeddings, SchemaChatModel

NS = "user:alice"
DIGEST = hashlib.sha256(NS.encode()).hexdigest()[:16]
T0 = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)
TURNS_FOR_STORE = [{"role": "user", "name": "Alice", "content": "My dog is called Rex"}]


def memory(model: SchemaChatModel | None = None) -> Memory:
    store = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    config = MemoryConfig(store="memory", context={"trigger_policy": "session"})
    return Memory(config=config, store=store, chat_model=model or SchemaChatModel())


def one(exporter: InMemorySpanExporter, name: str) -> ReadableSpan:
    found = [s for s in exporter.get_finished_spans() if s.name == name]
    assert len(found) == 1, [s.name for s in exporter.get_finished_spans()]
    return found[0]


def attrs(s: ReadableSpan) -> dict[str, object]:
    return dict(s.attributes or {})


def test_calls_outside_the_graph_are_spans_with_their_figures(
    spans: InMemorySpanExporter,
) -> None:
    m = memory()
    m.add(["I adopted a greyhound", "I live in Leeds"], namespace=NS, at=T0, infer=False)
    spans.clear()
    hits = m.search("greyhound", namespace=NS, k=1)
    listed = m.get_all(namespace=NS)
    search, get_all = one(spans, "lamina.memory.search"), one(spans, "lamina.memory.get_all")
    assert attrs(search)["lamina.records"] == len(hits) == 1
    assert attrs(get_all)["lamina.records"] == len(listed) == 2
    forgotten = m.forget(namespace=NS, memory_ids=[hits[0].id])
    forget = one(spans, "lamina.memory.forget")
    assert attrs(forget)["lamina.records"] == forgotten.count >= 1
    for s in (search, get_all, forget):
        assert attrs(s)["lamina.namespace.hash"] == DIGEST
        assert s.parent is None and s.end_time is not None and s.start_time is not None
        assert s.end_time >= s.start_time  # the latency
    assert not any(NS in str(attrs(s)) for s in spans.get_finished_spans())


def test_graph_nodes_hang_under_the_call_that_ran_them(spans: InMemorySpanExporter) -> None:
    model = SchemaChatModel().script(
        "ConstructionLines", "T|Dog\nS|Alice got a dog\nF|Alice|Alice has a dog"
    )
    m = memory(model)
    result = m.add(
        "I adopted a greyhound", namespace=NS, at=T0, speaker="Alice", session_closed=True
    )
    root = one(spans, "lamina.memory.add")
    assert root.parent is None
    by_id = {s.context.span_id: s for s in spans.get_finished_spans()}

    def top(s: ReadableSpan) -> ReadableSpan:
        while s.parent is not None:
            s = by_id[s.parent.span_id]
        return s

    nodes = [
        s
        for s in spans.get_finished_spans()
        if s.name in ("lamina.raw_write", "lamina.constructor")
    ]
    assert len(nodes) == 2 and all(top(s) is root for s in nodes)
    assert attrs(root)["lamina.llm.calls"] == len(result.llm_calls) >= 1
    constructor = one(spans, "lamina.constructor")
    assert attrs(constructor)["lamina.llm.calls"] <= attrs(root)["lamina.llm.calls"]  # type: ignore[operator]


def test_async_twins_are_traced_under_the_callers_span(spans: InMemorySpanExporter) -> None:
    m = memory()
    m.add("I adopted a greyhound", namespace=NS, at=T0, infer=False)
    spans.clear()
    provider_tracer = tracing._tracer()
    assert provider_tracer is not None

    async def run() -> None:
        with provider_tracer.start_as_current_span("app.request"):
            await m.aforget(namespace=NS, all=True)

    asyncio.run(run())
    forget = one(spans, "lamina.memory.forget")
    app = one(spans, "app.request")
    assert forget.parent is not None and forget.parent.span_id == app.context.span_id


def test_a_failing_call_is_recorded_on_its_span(spans: InMemorySpanExporter) -> None:
    m = memory()
    with pytest.raises(InvalidInputError):
        m.search("", namespace=NS)
    failed = one(spans, "lamina.memory.search")
    assert not failed.status.is_ok and failed.events[0].name == "exception"


def test_every_traced_call_is_a_memory_method() -> None:
    for name in TRACED_CALLS:
        method = getattr(Memory, name)
        assert callable(method) and method.__wrapped__.__name__ == name
    for name in TRACED_ASYNC_CALLS:
        method = getattr(Memory, name)
        assert inspect.iscoroutinefunction(method) and method.__wrapped__.__name__ == name


def test_without_a_provider_no_call_opens_a_span(monkeypatch: pytest.MonkeyPatch) -> None:
    assert not tracing.enabled()

    def no_span(*args: object, **kwargs: object) -> None:
        raise AssertionError("a span was opened with tracing off")

    monkeypatch.setattr(tracing, "span", no_span)
    m = memory()
    m.add("I adopted a greyhound", namespace=NS, at=T0, infer=False)
    assert m.search("greyhound", namespace=NS)


def test_store_calls_outside_the_graphs_are_spans_under_their_memory_call(
    spans: InMemorySpanExporter,
) -> None:
    m = memory()
    m.add(TURNS_FOR_STORE, namespace=NS, at=T0, infer=False)
    spans.clear()
    m.search("dog", namespace=NS)
    outer = one(spans, "lamina.memory.search")
    inner = [s for s in spans.get_finished_spans() if s.name.startswith("lamina.store.")]
    assert inner and all(s.parent is not None for s in inner)
    assert any(s.parent.span_id == outer.context.span_id for s in inner)  # type: ignore[union-attr]
    searched = [s for s in inner if s.name == "lamina.store.search"]
    assert searched and attrs(searched[0])["lamina.namespace.hash"] == DIGEST
    spans.clear()
    m.forget(namespace=NS, subject="Rex")
    names = {s.name for s in spans.get_finished_spans()}
    assert "lamina.memory.forget" in names and "lamina.store.delete" in names
    spans.clear()
    m.forget(namespace=NS, all=True)
    assert "lamina.store.delete_namespace" in {s.name for s in spans.get_finished_spans()}
