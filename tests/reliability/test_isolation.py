"""Tenant isolation: no read path returns a record of another namespace.

Two namespaces hold records with the *same* ids, session ids, turn indexes and mostly
the same words; only a marker word and ``metadata.owner`` tell them apart. Hypothesis
draws the namespace strings, the texts, the ids and the queries. Every read path is then
asked from namespace A: store get/search (dense, bm25, hybrid; every granularity; with
filters and windows), count, vectors, profile, audit, and the recall graph (retriever
with scene and neighbour expansion, Judge retry, answer citations).
"""

from __future__ import annotations

import itertools
import json
import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from langchain_core.messages import BaseMessage
from langgraph.checkpoint.memory import InMemorySaver

from lamina.core.context import MemoryContext
from lamina.errors import NamespaceError
from lamina.graphs.recall import MAX_RETRIEVAL_ROUNDS, build_recall_graph
from lamina.records import EpisodeRecord, FactRecord, RawTurn, SceneRecord
from lamina.records.audit import AuditEntry
from lamina.records.model import NAMESPACE_PATTERN, ProfileRecord, validate_namespace
from lamina.stores import ChromaMemoryStore, TimeWindow
from lamina.testing import FakeEmbeddings, SchemaChatModel, StorePool

T0 = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)
WORDS = ["rex", "dog", "paris", "guitar", "nurse", "garden", "train", "coffee", "berlin", "book"]
MARK = {"a": "alphaside", "b": "bravoside"}
_COUNTER = itertools.count()

namespaces = st.from_regex(NAMESPACE_PATTERN, fullmatch=True).map(lambda s: s[:120])
record_ids = st.text(
    alphabet=st.characters(codec="utf-8", exclude_characters="|"), min_size=1, max_size=24
).filter(lambda s: s.strip() != "")
sentences = st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join)


@st.composite
def tenant_pair(draw: st.DrawFn) -> tuple[str, str]:
    """Two distinct namespaces, often one a prefix of the other ('a' and 'a:b')."""
    a = draw(namespaces)
    b = draw(st.one_of(namespaces, namespaces.map(lambda s, a=a: (a + ":" + s)[:200])))
    n = next(_COUNTER)  # a fresh pair per example on the shared store
    ns_a, ns_b = f"t{n}-{a}", f"t{n}-{b}"
    if ns_a == ns_b:
        ns_b += "x"
    return ns_a, ns_b


@pytest.fixture(scope="module")
def pool() -> StorePool:
    return StorePool()


@pytest.fixture(scope="module")
def shared_store() -> ChromaMemoryStore:
    """A store for the non-generated tests."""
    return ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())


def _records(ns: str, side: str, ids: list[str], texts: list[str]) -> list[Any]:
    """Raw turns, facts, episodes and a scene with shared ids and overlapping words."""
    meta = {"owner": ns}
    out: list[Any] = []
    for n, (rid, text) in enumerate(zip(ids, texts, strict=False)):
        body = f"{text} {MARK[side]}"
        when = T0 + timedelta(hours=n)
        out.append(
            RawTurn(
                id=f"r-{rid}",
                namespace=ns,
                text=body,
                speaker="Alice",
                session_id="s1",
                turn_index=n,
                occurred_at=when,
                metadata=meta,
            )
        )
        out.append(
            FactRecord(id=f"f-{rid}", namespace=ns, text=body, occurred_at=when, metadata=meta)
        )
        out.append(
            EpisodeRecord(
                id=f"e-{rid}",
                namespace=ns,
                title=f"{WORDS[n % len(WORDS)]} {MARK[side]}",
                text=body,
                occurred_at=when,
                source_ids=[f"r-{rid}"],
                metadata=meta,
            )
        )
    out.append(
        SceneRecord(
            id="scene-1",
            namespace=ns,
            text=f"scene {MARK[side]} " + " ".join(texts),
            # A's scene names episode ids that exist only in B: expansion must not follow
            members=[f"e-{rid}" for rid in ids] + [f"e-{rid}-only-b" for rid in ids],
            occurred_at=T0,
            metadata=meta,
        )
    )
    return out


def _seed(store: ChromaMemoryStore, ns_a: str, ns_b: str, ids: list[str], texts: list[str]) -> None:
    store.add(ns_a, _records(ns_a, "a", ids, texts))
    b_only = [f"{rid}-only-b" for rid in ids]
    store.add(ns_b, _records(ns_b, "b", ids + b_only, texts + texts))
    for ns, side in ((ns_a, "a"), (ns_b, "b")):
        store.put_profile(ProfileRecord(namespace=ns, explicit_facts=[MARK[side]]))
        store.append_audit(
            AuditEntry(
                namespace=ns,
                actor="test",
                action="noop",
                granularity="fact",
                target_id=f"f-{ids[0]}",
                reason=MARK[side],
            )
        )


def _own(record: Any, ns_a: str) -> None:
    assert record.namespace == ns_a
    assert record.metadata.get("owner") == ns_a
    assert MARK["b"] not in record.text


scenario = st.tuples(
    tenant_pair(),
    st.lists(record_ids, min_size=1, max_size=5, unique=True),
    st.lists(sentences, min_size=5, max_size=5),
    st.lists(sentences, min_size=1, max_size=3),
)


@given(scenario)
def test_store_reads_never_cross_namespaces(pool: StorePool, case: Any) -> None:
    (ns_a, ns_b), ids, texts, queries = case
    store = pool.next()
    _seed(store, ns_a, ns_b, ids, texts)
    all_ids = [f"{p}-{rid}" for rid in ids for p in "rfe"]
    b_only = [f"{p}-{rid}-only-b" for rid in ids for p in "rfe"]
    window = TimeWindow(after=T0 - timedelta(days=1), before=T0 + timedelta(days=1))
    for gran, prefix in (("raw", "r"), ("fact", "f"), ("episode", "e"), ("scene", "s")):
        asked = [i for i in all_ids + b_only + ["scene-1"] if i.startswith(prefix)]
        for record in store.get(gran, ns_a, asked):
            _own(record, ns_a)
        for record in store.get(gran, ns_a, window=window):
            _own(record, ns_a)
        assert store.count(gran, ns_a) == (1 if gran == "scene" else len(ids))
        for query in [*queries, MARK["b"]]:
            for mode in ("dense", "bm25", "hybrid"):
                for hit in store.search(query, gran, ns_a, k=50, mode=mode):
                    _own(hit.record, ns_a)
                for hit in store.search(query, gran, ns_a, k=50, mode=mode, window=window):
                    _own(hit.record, ns_a)
        where = {"metadata.owner": [ns_a, ns_b]}
        for record in store.get(gran, ns_a, where=where):
            _own(record, ns_a)
        for hit in store.search(queries[0], gran, ns_a, k=50, where=where):
            _own(hit.record, ns_a)
    assert store.search(MARK["b"], "fact", ns_a, mode="bm25") == []
    raw_where = {"session_id": "s1", "turn_index": list(range(10))}
    for record in store.get("raw", ns_a, where=raw_where):
        _own(record, ns_a)
    assert set(store.vectors("episode", ns_a, [f"e-{i}" for i in ids] + b_only)) == {
        f"e-{i}" for i in ids
    }
    profile = store.get_profile(ns_a)
    assert profile is not None and profile.explicit_facts == [MARK["a"]]
    assert [e.reason for e in store.list_audit(ns_a)] == [MARK["a"]]
    assert store.lexical_index("fact", ns_a).ids() == {f"f-{i}" for i in ids}


def _labels(messages: list[BaseMessage]) -> list[str]:
    return sorted(set(re.findall(r"\[(m\d+)\]", str(messages[-2].content))))


def _shown(messages: list[BaseMessage]) -> str:
    """An answer its citations hold: the shown memory lines themselves (answers are grounded)."""
    memories = str(messages[-2].content).split("Memories:\n<data>")[1]
    return memories.split("</data>")[0].strip()[:280]


@given(scenario, st.integers(min_value=0, max_value=MAX_RETRIEVAL_ROUNDS - 1))
def test_recall_graph_never_crosses_namespaces(pool: StorePool, case: Any, retries: int) -> None:
    (ns_a, ns_b), ids, texts, queries = case
    store = pool.next()
    _seed(store, ns_a, ns_b, ids, texts)
    model = SchemaChatModel()
    insufficient = {"sufficient": False, "missing": "more details"}
    model.script("QueryRewrite", *[json.dumps({"queries": [*queries, MARK["b"]]})] * retries)
    model.script(
        "DraftFirst",
        *[json.dumps(insufficient)] * retries,
        lambda m: json.dumps(
            {"sufficient": True, "answer": _shown(m), "cited": _labels(m) + ["m999"]}
        ),
    )
    graph = build_recall_graph(chat_model=model, store=store).compile(checkpointer=InMemorySaver())
    ctx = MemoryContext(namespace=ns_a)
    out = graph.invoke({"question": queries[0]}, {"configurable": {"thread_id": ns_a}}, context=ctx)
    a_ids = {f"{p}-{rid}" for rid in ids for p in "rfe"} | {"scene-1"}
    assert out["candidates"], "the seeded namespace must yield candidates"
    for c in out["candidates"]:
        assert c.id in a_ids
        assert MARK["b"] not in c.text and MARK["b"] not in (c.title or "")
    assert set(out["citations"]) <= a_ids
    assert out["citations"], "the answer cites the memories it was shown"
    for _, messages in model.calls:
        assert MARK["b"] not in "\n".join(str(m.content) for m in messages)


ATTACKS = [
    "",
    " ",
    "a b",
    " user",
    "user ",
    "user\n",
    "user\t1",
    "user\x00",
    "user|x",
    "|user",
    'user" OR "1"="1',
    "user' OR '1'='1",
    "$ne",
    "$or:user",
    "user$in",
    '{"$ne": "x"}',
    "user;drop",
    "user%",
    "user*",
    "user,other",
    "../etc",
    ".hidden",
    "-flag",
    "_x",
    "usér",
    "ｕser",
    "user\u200b",
    "\u202euser",
    "user\ud800",
    "a" * 257,
]
NON_STRINGS: list[Any] = [None, 1, b"user", {"$ne": "x"}, ["user"], ("user",)]


def _entry_points(store: ChromaMemoryStore) -> dict[str, Any]:
    turn = RawTurn(
        namespace="ok", text="t", speaker="s", session_id="s", turn_index=0, occurred_at=T0
    )
    return {
        "add": lambda ns: store.add(ns, [turn]),
        "get": lambda ns: store.get("raw", ns),
        "get_ids": lambda ns: store.get("raw", ns, [turn.id]),
        "search": lambda ns: store.search("rex", "fact", ns),
        "search_bm25": lambda ns: store.search("rex", "fact", ns, mode="bm25"),
        "count": lambda ns: store.count("raw", ns),
        "vectors": lambda ns: store.vectors("raw", ns, [turn.id]),
        "delete": lambda ns: store.delete("raw", ns, [turn.id]),
        "delete_namespace": lambda ns: store.delete_namespace(ns),
        "get_profile": lambda ns: store.get_profile(ns),
        "list_audit": lambda ns: store.list_audit(ns),
        "lexical_index": lambda ns: store.lexical_index("raw", ns),
        "update": lambda ns: store.update(ns, turn),
        "mark_superseded": lambda ns: store.mark_superseded(ns, "f1", superseded_by="f2"),
        "context": lambda ns: MemoryContext(namespace=ns),
        "record": lambda ns: RawTurn(
            namespace=ns, text="t", speaker="s", session_id="s", turn_index=0, occurred_at=T0
        ),
        "profile": lambda ns: ProfileRecord(namespace=ns),
        "audit": lambda ns: AuditEntry(
            namespace=ns, actor="t", action="noop", granularity="fact", target_id="x"
        ),
    }


@pytest.mark.parametrize("attack", ATTACKS + NON_STRINGS, ids=repr)
def test_every_entry_point_rejects_malformed_namespaces(
    shared_store: ChromaMemoryStore, attack: Any
) -> None:
    before = {g: shared_store._collections[g].count() for g in shared_store._collections}
    for name, call in _entry_points(shared_store).items():
        with pytest.raises((NamespaceError, ValueError, TypeError)) as info:
            call(attack)
        assert "namespace" in str(info.value).lower(), (name, str(info.value))
    assert {g: shared_store._collections[g].count() for g in shared_store._collections} == before


@given(st.text(max_size=300))
def test_only_the_documented_alphabet_passes(value: str) -> None:
    if NAMESPACE_PATTERN.fullmatch(value):
        assert validate_namespace(value) == value
        assert "|" not in value and "$" not in value and value == value.strip()
    else:
        with pytest.raises(NamespaceError):
            validate_namespace(value)


@given(scenario)
def test_memory_facade_never_crosses_namespaces(pool: StorePool, case: Any) -> None:
    from lamina.memory import Memory

    (ns_a, ns_b), ids, texts, queries = case
    shared_store = pool.next()
    _seed(shared_store, ns_a, ns_b, ids, texts)
    model = SchemaChatModel()
    model.script(
        "DraftFirst",
        lambda m: json.dumps({"sufficient": True, "answer": _shown(m), "cited": _labels(m)}),
    )
    memory = Memory(store=shared_store, chat_model=model, checkpointer=InMemorySaver())
    a_ids = {f"{p}-{rid}" for rid in ids for p in "rfe"} | {"scene-1"}
    for query in [*queries, MARK["b"]]:
        for hit in memory.search(query, namespace=ns_a, k=50):
            assert hit.id in a_ids and MARK["b"] not in hit.text
    for records in memory.inspect(namespace=ns_a).values():
        for record in records:
            _own(record, ns_a)
    result = memory.answer(queries[0], namespace=ns_a)
    assert result.citations and set(result.citations) <= a_ids
    assert all(MARK["b"] not in m.text for m in result.memories)
    profile = memory.profile(namespace=ns_a)
    assert profile is not None and profile.explicit_facts == [MARK["a"]]
    assert all(e.reason != MARK["b"] for e in memory.history(f"f-{ids[0]}", namespace=ns_a))
