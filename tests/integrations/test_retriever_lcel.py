"""LaminaRetriever: a LangChain BaseRetriever over Memory.search, inside LCEL chains."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda, RunnablePassthrough

from lamina import Memory
from lamina.integrations.langgraph_store import LaminaStore
from lamina.integrations.retriever import LaminaRetriever
from lamina.memory.results import MemoryHit
from lamina.records import EpisodeRecord, FactRecord, RawTurn, SceneRecord
from lamina.stores import ChromaMemoryStore, TimeWindow
from lamina.testing import FakeEmbeddings, SchemaChatModel, ToolCallingChatModel

T0 = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)
ALICE, BOB = "user:alice", "user:bob"


def _seed(store: ChromaMemoryStore, namespace: str, owner: str) -> None:
    """Raw turns on three days, a fact, an episode and a scene about a garden."""
    turns = [
        "I planted tomatoes in the garden today",
        "the garden tomatoes need more water",
        "my garden has a new apple tree",
    ]
    store.add(
        namespace,
        [
            RawTurn(
                namespace=namespace,
                text=f"{text} ({owner})",
                speaker=owner,
                session_id=f"s{n}",
                turn_index=0,
                occurred_at=T0 + timedelta(days=n),
            )
            for n, text in enumerate(turns)
        ]
        + [
            FactRecord(
                namespace=namespace,
                text=f"{owner} grows tomatoes in the garden",
                occurred_at=T0,
            ),
            EpisodeRecord(
                namespace=namespace,
                title="Garden work",
                text=f"{owner} spent May planting and watering the garden tomatoes",
                occurred_at=T0 + timedelta(days=1),
            ),
            SceneRecord(
                namespace=namespace,
                title="Gardening",
                text=f"{owner} tends a vegetable garden with tomatoes and an apple tree",
                occurred_at=T0 + timedelta(days=2),
            ),
        ],
    )


@pytest.fixture
def backend() -> ChromaMemoryStore:
    store = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    _seed(store, ALICE, "alice")
    _seed(store, BOB, "bob")
    return store


@pytest.fixture
def memory(backend: ChromaMemoryStore) -> Iterator[Memory]:
    with Memory(store=backend, chat_model=SchemaChatModel()) as opened:  # search: no LLM
        yield opened


def _owners(docs: list[Document]) -> set[str]:
    return {"bob" if "bob" in d.page_content else "alice" for d in docs}


def test_invoke_returns_documents_of_its_namespace(memory: Memory) -> None:
    """invoke() returns k documents from the namespace with the hit's metadata."""
    retriever = LaminaRetriever(memory=memory, namespace=ALICE, k=4)
    docs = retriever.invoke("garden tomatoes")
    assert len(docs) == 4
    assert _owners(docs) == {"alice"}
    first = docs[0]
    assert first.metadata["namespace"] == ALICE
    assert first.metadata["granularity"] in {"raw", "fact", "episode", "scene"}
    assert first.id == first.metadata["id"]
    assert datetime.fromisoformat(first.metadata["occurred_at"]).tzinfo is not None
    scores = [d.metadata["score"] for d in docs]
    assert scores == sorted(scores, reverse=True)
    direct = memory.search("garden tomatoes", namespace=ALICE, k=4)
    assert [d.page_content for d in docs] == [h.text for h in direct]


def test_namespace_isolation(memory: Memory) -> None:
    """Another namespace's memories never appear, whatever the query names."""
    for namespace, owner in ((ALICE, "alice"), (BOB, "bob")):
        retriever = LaminaRetriever(memory=memory, namespace=namespace, k=20)
        for query in ("garden tomatoes", "bob", "alice apple tree"):
            docs = retriever.invoke(query)
            assert docs and _owners(docs) == {owner}


def test_granularity_list_and_quota_mix(memory: Memory) -> None:
    """A list restricts the granularities (pooled under k); a dict gives quotas."""
    facts_only = LaminaRetriever(memory=memory, namespace=ALICE, granularities=["fact"])
    assert [d.metadata["granularity"] for d in facts_only.invoke("garden")] == ["fact"]

    pooled = LaminaRetriever(memory=memory, namespace=ALICE, granularities=["raw", "episode"], k=3)
    grans = [d.metadata["granularity"] for d in pooled.invoke("garden tomatoes")]
    assert len(grans) == 3 and set(grans) <= {"raw", "episode"}

    mixed = LaminaRetriever(
        memory=memory, namespace=ALICE, granularities={"raw": 2, "fact": 1, "scene": 1}
    )
    docs = mixed.invoke("garden tomatoes")
    counts = {g: [d.metadata["granularity"] for d in docs].count(g) for g in ("raw", "fact")}
    assert len(docs) == 4 and counts == {"raw": 2, "fact": 1}
    assert [d.metadata["score"] for d in docs] == sorted(
        (d.metadata["score"] for d in docs), reverse=True
    )
    capped = LaminaRetriever(
        memory=memory, namespace=ALICE, granularities={"raw": 3, "fact": 1}, k=2
    )
    assert len(capped.invoke("garden")) == 2


def test_time_window(memory: Memory) -> None:
    """A time window keeps only memories that happened inside it; it can be given per
    call, and per-call k overrides the retriever's."""
    day1 = TimeWindow.between(T0 + timedelta(days=1), T0 + timedelta(days=2))
    retriever = LaminaRetriever(
        memory=memory, namespace=ALICE, granularities=["raw"], window=day1, k=10
    )
    docs = retriever.invoke("garden")
    assert [d.page_content for d in docs] == ["the garden tomatoes need more water (alice)"]

    open_retriever = LaminaRetriever(memory=memory, namespace=ALICE, granularities=["raw"])
    assert len(open_retriever.invoke("garden", k=10)) == 3
    later = TimeWindow.after_(T0 + timedelta(days=1))
    assert len(open_retriever.invoke("garden", window=later)) == 2
    assert len(open_retriever.invoke("garden", k=1)) == 1


def test_inside_an_lcel_chain(memory: Memory) -> None:
    """Retriever | formatter | prompt | model | parser: the model's prompt carries the
    retrieved memories of the namespace and nothing of the other one."""
    model = ToolCallingChatModel().enqueue("You grow tomatoes.")
    retriever = LaminaRetriever(memory=memory, namespace=ALICE, k=3)

    def format_docs(docs: list[Document]) -> str:
        return "\n".join(f"[{d.metadata['granularity']}] {d.page_content}" for d in docs)

    prompt = ChatPromptTemplate.from_messages(
        [("system", "Memories:\n{context}"), ("human", "{question}")]
    )
    chain = (
        {"context": retriever | RunnableLambda(format_docs), "question": RunnablePassthrough()}
        | prompt
        | model
        | StrOutputParser()
    )
    assert chain.invoke("What do I grow in the garden?") == "You grow tomatoes."
    [sent] = model.calls
    system = str(sent[0].content)
    assert "alice grows tomatoes in the garden" in system
    assert "bob" not in system
    assert system.count("\n[") == 3  # three memories, one per line


def test_async_and_batch(memory: Memory) -> None:
    """ainvoke and abatch run Memory.asearch; batch answers several queries."""
    retriever = LaminaRetriever(memory=memory, namespace=BOB, k=2)

    async def scenario() -> tuple[list[Document], list[list[Document]]]:
        one = await retriever.ainvoke("garden tomatoes")
        many = await retriever.abatch(["apple tree", "water"])
        return one, many

    one, many = asyncio.run(scenario())
    assert len(one) == 2 and _owners(one) == {"bob"}
    assert [len(d) for d in many] == [2, 2]
    assert all(_owners(d) == {"bob"} for d in many)
    assert [len(d) for d in retriever.batch(["garden", "apple"])] == [2, 2]


def test_reads_langgraph_store_items(backend: ChromaMemoryStore, memory: Memory) -> None:
    """Items a LaminaStore put are raw memories of its mapped namespace, so the
    retriever finds them there (and only there)."""
    store = LaminaStore(backend)
    store.put(("memories", "carol"), "m1", {"content": "Carol is allergic to peanuts"})
    namespace = store.lamina_namespace(("memories", "carol"))
    retriever = LaminaRetriever(memory=memory, namespace=namespace, granularities=["raw"])
    [doc] = retriever.invoke("peanuts allergy", k=5)
    assert "Carol is allergic to peanuts" in doc.page_content
    assert not any(
        "peanuts" in d.page_content
        for d in LaminaRetriever(memory=memory, namespace=ALICE, k=20).invoke("peanuts")
    )


class _Recorder:
    """A MemorySearch that records the options it is called with."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def search(self, query: str, *, namespace: str, **options: Any) -> list[MemoryHit]:
        self.calls.append({"query": query, "namespace": namespace, **options})
        return []

    async def asearch(self, query: str, *, namespace: str, **options: Any) -> list[MemoryHit]:
        return self.search(query, namespace=namespace, **options)


def test_passes_filters_and_threshold_only_when_set() -> None:
    """filters and threshold reach Memory.search when set, and are left out otherwise
    (so a facade without them still works); per-call values override."""
    recorder = _Recorder()
    LaminaRetriever(memory=recorder, namespace=ALICE).invoke("q")
    assert set(recorder.calls[-1]) == {
        "query", "namespace", "k", "granularities", "window", "as_of"
    }  # fmt: skip
    retriever = LaminaRetriever(
        memory=recorder, namespace=ALICE, filters={"topic": "garden"}, threshold=0.3
    )
    retriever.invoke("q", threshold=0.5)
    assert recorder.calls[-1]["filters"] == {"topic": "garden"}
    assert recorder.calls[-1]["threshold"] == 0.5
    assert recorder.calls[-1]["k"] == 5
    assert recorder.calls[-1]["granularities"] == ["raw", "fact", "episode", "scene"]


def test_bad_configuration_rejected(memory: Memory) -> None:
    """Bad namespaces, k, granularities, quotas and per-call options get clear errors."""
    with pytest.raises(ValueError, match="invalid namespace"):
        LaminaRetriever(memory=memory, namespace="bad namespace!")
    with pytest.raises(ValueError, match="k must be a positive int"):
        LaminaRetriever(memory=memory, namespace=ALICE, k=0)
    with pytest.raises(ValueError, match="unknown granularity"):
        LaminaRetriever(memory=memory, namespace=ALICE, granularities=["facts"])
    with pytest.raises(ValueError, match="quota"):
        LaminaRetriever(memory=memory, namespace=ALICE, granularities={"raw": -1})
    with pytest.raises(ValueError, match="at least one"):
        LaminaRetriever(memory=memory, namespace=ALICE, granularities={"raw": 0})
    with pytest.raises(ValueError, match="memory"):
        LaminaRetriever(memory="not a memory", namespace=ALICE)  # type: ignore[arg-type]
    retriever = LaminaRetriever(memory=memory, namespace=ALICE)
    with pytest.raises(ValueError, match="unknown retriever options"):
        retriever.invoke("garden", namespace=BOB)
    with pytest.raises(ValueError, match="k must be a positive int"):
        retriever.invoke("garden", k=-2)


def test_threshold_and_filters_reach_the_facade(memory: Memory) -> None:
    """With the real facade: a threshold no memory reaches returns nothing, and a
    metadata filter keeps only the memories added with that metadata."""
    memory.add(
        "the compost bin is full", namespace=ALICE, metadata={"topic": "compost"}, infer=False
    )
    open_retriever = LaminaRetriever(memory=memory, namespace=ALICE, k=10)
    assert open_retriever.invoke("garden compost")
    assert open_retriever.invoke("garden compost", threshold=0.999) == []
    filtered = LaminaRetriever(memory=memory, namespace=ALICE, filters={"topic": "compost"})
    assert [d.page_content for d in filtered.invoke("garden compost")] == [
        "the compost bin is full"
    ]
