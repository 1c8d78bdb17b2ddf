"""LaminaStore against LangGraph's own store semantics.

Each test names, in its docstring, the behaviour of LangGraph's store tests
(``libs/checkpoint/tests/test_store.py`` for ``InMemoryStore``) or of
``InMemoryStore``'s source (``langgraph/store/memory``) that it mirrors. The
semantic-search tests run in both search modes unless a docstring says why not.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypedDict

import pytest
from langchain_core.embeddings import Embeddings
from langgraph.config import get_store
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.store.base import (
    GetOp,
    InvalidNamespaceError,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
    SearchOp,
)

from lamina import Memory, MemoryConfig
from lamina.errors import (
    InvalidInputError,
    InvalidTypeError,
    LaminaError,
    NamespaceError,
)
from lamina.integrations.langgraph_store import LaminaStore
from lamina.stores import ChromaMemoryStore
from lamina.testing import CountingStore, SchemaChatModel

MODES = ["hybrid", "dense"]


class CharacterEmbeddings(Embeddings):
    """Character-frequency embeddings, like the fake LangGraph's store tests use.

    Each character gets a fixed pseudo-random direction (from SHA-256); a text's vector
    is the frequency-weighted sum of its characters' directions, normalised. Texts that
    share characters are similar, in any script.
    """

    def __init__(self, dims: int = 256) -> None:
        self.dims = dims
        self.model = f"character-frequency-{dims}"
        self._directions: dict[str, list[float]] = {}

    def _direction(self, char: str) -> list[float]:
        if char not in self._directions:
            values: list[float] = []
            block = 0
            while len(values) < self.dims:
                digest = hashlib.sha256(f"{char}\x1f{block}".encode()).digest()
                values.extend((b - 127.5) / 127.5 for b in digest)
                block += 1
            self._directions[char] = values[: self.dims]
        return self._directions[char]

    def _embed(self, text: str) -> list[float]:
        counts = Counter(text)
        total = sum(counts.values()) or 1
        vector = [0.0] * self.dims
        for char, count in counts.items():
            for i, v in enumerate(self._direction(char)):
                vector[i] += v * count / total
        norm = math.sqrt(sum(v * v for v in vector)) or 1.0
        return [v / norm for v in vector]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed documents."""
        return [self._embed(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        """Embed a query."""
        return self._embed(text)


@pytest.fixture
def embeddings() -> CharacterEmbeddings:
    return CharacterEmbeddings()


@pytest.fixture(params=["chroma", "postgres"])
def backend(request: pytest.FixtureRequest, embeddings: CharacterEmbeddings) -> ChromaMemoryStore:
    """LangGraph's BaseStore behaviours through lamina's store, on each backend."""
    if request.param == "postgres":
        make = request.getfixturevalue("make_postgres_store")
        return make(embeddings=embeddings)  # type: ignore[no-any-return]
    return ChromaMemoryStore.ephemeral(embeddings=embeddings)


@pytest.fixture
def store(backend: ChromaMemoryStore) -> LaminaStore:
    return LaminaStore(backend)


@pytest.fixture(params=MODES)
def vstore(request: pytest.FixtureRequest, backend: ChromaMemoryStore) -> LaminaStore:
    """A store with LangGraph's index config, in each search mode."""
    index = {"dims": backend.embeddings.dims, "embed": backend.embeddings}  # type: ignore[attr-defined]
    return LaminaStore(backend, index=index, search_mode=request.param)  # type: ignore[arg-type]


@pytest.fixture
def dense(backend: ChromaMemoryStore) -> LaminaStore:
    return LaminaStore(backend, search_mode="dense")


def _put_all(store: LaminaStore, namespaces: list[tuple[str, ...]]) -> None:
    for i, ns in enumerate(namespaces):
        store.put(ns, f"id_{i}", {"data": f"value_{i:02d}"})


# --------------------------------------------------------------- list_namespaces
def test_list_namespaces_basic(store: LaminaStore) -> None:
    """Mirrors test_list_namespaces_basic: prefix, suffix, both, max_depth, limit,
    offset, '*' wildcards in prefix and suffix, a missing prefix, an exact namespace."""
    _put_all(
        store,
        [
            ("a", "b", "c"),
            ("a", "b", "d", "e"),
            ("a", "b", "d", "i"),
            ("a", "b", "f"),
            ("a", "c", "f"),
            ("b", "a", "f"),
            ("users", "123"),
            ("users", "456", "settings"),
            ("admin", "users", "789"),
        ],
    )
    abd = [("a", "b", "c"), ("a", "b", "d", "e"), ("a", "b", "d", "i"), ("a", "b", "f")]
    assert sorted(store.list_namespaces(prefix=("a", "b"))) == abd
    assert sorted(store.list_namespaces(suffix=("f",))) == [
        ("a", "b", "f"),
        ("a", "c", "f"),
        ("b", "a", "f"),
    ]
    assert sorted(store.list_namespaces(prefix=("a",), suffix=("f",))) == [
        ("a", "b", "f"),
        ("a", "c", "f"),
    ]
    assert sorted(store.list_namespaces(prefix=("a", "b"), max_depth=3)) == [
        ("a", "b", "c"),
        ("a", "b", "d"),
        ("a", "b", "f"),
    ]
    assert store.list_namespaces(prefix=("a", "b"), limit=2) == abd[:2]
    assert store.list_namespaces(prefix=("a", "b"), offset=2) == abd[2:]
    assert sorted(store.list_namespaces(prefix=("a", "*", "f"))) == [
        ("a", "b", "f"),
        ("a", "c", "f"),
    ]
    assert sorted(store.list_namespaces(suffix=("*", "f"))) == [
        ("a", "b", "f"),
        ("a", "c", "f"),
        ("b", "a", "f"),
    ]
    assert store.list_namespaces(prefix=("nonexistent",)) == []
    assert store.list_namespaces(prefix=("users", "123")) == [("users", "123")]


def test_list_namespaces_with_wildcards(store: LaminaStore) -> None:
    """Mirrors test_list_namespaces_with_wildcards: '*' matches any one label; a prefix
    and a suffix that no namespace satisfies together list nothing."""
    _put_all(
        store,
        [
            ("users", "123"),
            ("users", "456"),
            ("users", "789", "settings"),
            ("admin", "users", "789"),
            ("guests", "123"),
            ("guests", "456", "preferences"),
        ],
    )
    assert sorted(store.list_namespaces(prefix=("users", "*"))) == [
        ("users", "123"),
        ("users", "456"),
        ("users", "789", "settings"),
    ]
    assert store.list_namespaces(suffix=("*", "preferences")) == [("guests", "456", "preferences")]
    assert store.list_namespaces(prefix=("*", "users"), suffix=("*", "settings")) == []
    store.put(("admin", "users", "settings", "789"), "foo", {"data": "some_val"})
    assert store.list_namespaces(prefix=("*", "users"), suffix=("settings", "*")) == [
        ("admin", "users", "settings", "789")
    ]


def test_list_namespaces_pagination(store: LaminaStore) -> None:
    """Mirrors test_list_namespaces_pagination: sorted pages by limit and offset."""
    _put_all(store, [("namespace", f"sub_{i:02d}") for i in range(20)])
    for offset in (0, 5, 15):
        page = store.list_namespaces(prefix=("namespace",), limit=5, offset=offset)
        assert page == [("namespace", f"sub_{i:02d}") for i in range(offset, offset + 5)]


def test_list_namespaces_max_depth(store: LaminaStore) -> None:
    """Mirrors test_list_namespaces_max_depth: namespaces cut to max_depth, deduplicated."""
    _put_all(
        store,
        [
            ("a", "b", "c", "d"),
            ("a", "b", "c", "e"),
            ("a", "b", "f"),
            ("a", "g"),
            ("h", "i", "j", "k"),
        ],
    )
    assert store.list_namespaces(max_depth=2) == [("a", "b"), ("a", "g"), ("h", "i")]


def test_list_namespaces_no_conditions(store: LaminaStore) -> None:
    """Mirrors test_list_namespaces_no_conditions: every namespace that holds items."""
    namespaces = [("a", "b"), ("c", "d"), ("e", "f", "g")]
    _put_all(store, namespaces)
    assert store.list_namespaces() == namespaces


def test_list_namespaces_empty_store(store: LaminaStore) -> None:
    """Mirrors test_list_namespaces_empty_store: an empty store lists nothing."""
    assert store.list_namespaces() == []


def test_list_namespaces_forgets_emptied_namespace(store: LaminaStore) -> None:
    """Mirrors the database stores (sqlite, postgres): a namespace is listed while it
    holds items. InMemoryStore keeps listing a namespace after its last delete (and
    after a get on a missing one), an artefact of its defaultdict; not mirrored."""
    store.put(("a",), "k1", {"v": 1})
    store.put(("a",), "k2", {"v": 2})
    store.get(("never", "written"), "k")
    store.delete(("a",), "k1")
    assert store.list_namespaces() == [("a",)]
    store.delete(("a",), "k2")
    assert store.list_namespaces() == []


def test_list_namespaces_op_in_batch(store: LaminaStore) -> None:
    """Mirrors ListNamespacesOp through batch: match conditions are ANDed."""
    _put_all(store, [("docs", "v1", "draft"), ("docs", "v2", "final"), ("img", "v1", "draft")])
    op = ListNamespacesOp(
        match_conditions=(
            MatchCondition(match_type="prefix", path=("docs",)),
            MatchCondition(match_type="suffix", path=("draft",)),
        )
    )
    assert store.batch([op]) == [[("docs", "v1", "draft")]]


# ------------------------------------------------------------------ namespaces
def test_cannot_put_empty_namespace(store: LaminaStore) -> None:
    """Mirrors test_cannot_put_empty_namespace: put/aput reject (), a label with '.', an
    empty label and the root label 'langgraph'; 'langgraph' deeper in the tuple works for
    put/get/search/delete; through batch, a 'langgraph' root is accepted."""
    doc = {"foo": "bar"}
    bad = [(), ("the", "thing.about"), ("some", "fun", ""), ("langgraph", "foo")]
    for namespace in bad:
        with pytest.raises(InvalidNamespaceError):
            store.put(namespace, "foo", doc)
        with pytest.raises(InvalidNamespaceError):
            asyncio.run(store.aput(namespace, "foo", doc))
    assert store.list_namespaces() == []

    inner = ("foo", "langgraph", "foo")
    store.put(inner, "bar", doc)
    assert store.get(inner, "bar").value == doc  # type: ignore[union-attr]
    assert store.search(inner, query="bar")[0].value == doc
    store.delete(inner, "bar")
    assert store.get(inner, "bar") is None

    async def via_async() -> None:
        await store.aput(inner, "bar", doc)
        assert (await store.aget(inner, "bar")).value == doc  # type: ignore[union-attr]
        assert (await store.asearch(inner, query="bar"))[0].value == doc
        await store.adelete(inner, "bar")
        assert await store.aget(inner, "bar") is None
        await store.abatch([PutOp(("langgraph", "foo"), "bar", doc)])
        assert (await store.aget(("langgraph", "foo"), "bar")).value == doc  # type: ignore[union-attr]
        assert (await store.asearch(("langgraph", "foo")))[0].value == doc
        await store.adelete(("langgraph", "foo"), "bar")
        assert await store.aget(("langgraph", "foo"), "bar") is None

    asyncio.run(via_async())
    store.batch([PutOp(("langgraph", "foo"), "bar", doc)])
    assert store.get(("langgraph", "foo"), "bar").value == doc  # type: ignore[union-attr]
    assert store.search(("langgraph", "foo"))[0].value == doc


def test_namespace_errors_are_lamina_and_langgraph_errors(store: LaminaStore) -> None:
    """Mirrors validate_op_namespace: batch ops with an empty, dotted or NUL label are
    rejected before anything runs; the error is LangGraph's and lamina's."""
    for op in (
        GetOp(("a", ""), "k"),
        SearchOp(("a.b",)),
        PutOp(("a", "b\x00"), "k", {"v": 1}),
        ListNamespacesOp(match_conditions=(MatchCondition("prefix", ("",)),)),
        PutOp((), "k", {"v": 1}),
    ):
        with pytest.raises(InvalidNamespaceError) as caught:
            store.batch([op])
        assert isinstance(caught.value, NamespaceError)
    with pytest.raises(InvalidNamespaceError):
        store.batch([PutOp(("ok",), "k", {"v": 1}), PutOp(("a", 7), "k", {"v": 1})])  # type: ignore[arg-type]
    assert store.list_namespaces() == []


# ------------------------------------------------------- batch and basic semantics
def test_batch_dedupes_puts_last_write_wins(store: LaminaStore) -> None:
    """Mirrors test_async_batch_store_deduplication's store semantics: puts to one key in
    a batch collapse to the last; gets of one key agree; a filter search finds the value."""
    store.batch(
        [
            PutOp(("test",), "same", {"value": "same"}),
            PutOp(("test",), "different", {"value": "different"}),
        ]
    )
    same_a, same_b, different = store.batch(
        [GetOp(("test",), "same"), GetOp(("test",), "same"), GetOp(("test",), "different")]
    )
    assert same_a == same_b
    assert same_a != different
    assert same_a.value == {"value": "same"}  # type: ignore[union-attr]
    assert different.value == {"value": "different"}  # type: ignore[union-attr]

    out = store.batch(
        [PutOp(("test",), "key", {"value": 1}), PutOp(("test",), "key", {"value": 2})]
    )
    assert out == [None, None]
    assert store.get(("test",), "key").value == {"value": 2}  # type: ignore[union-attr]
    first, second = store.batch(
        [SearchOp(("test",), filter={"value": 2}), SearchOp(("test",), filter={"value": 2})]
    )
    assert [i.value for i in first] == [{"value": 2}] == [i.value for i in second]


def test_batch_reads_see_state_before_its_writes(store: LaminaStore) -> None:
    """Mirrors InMemoryStore.batch: Get/Search/List ops are answered before the batch's
    puts are applied; results come back in op order, None for a put."""
    store.put(("ns",), "k", {"v": "old"})
    results = store.batch(
        [
            PutOp(("ns",), "k", {"v": "new"}),
            GetOp(("ns",), "k"),
            PutOp(("other",), "k", {"v": 1}),
            ListNamespacesOp(),
            SearchOp(("ns",)),
        ]
    )
    assert results[0] is None and results[2] is None
    assert results[1].value == {"v": "old"}  # type: ignore[union-attr]
    assert results[3] == [("ns",)]
    assert [i.value for i in results[4]] == [{"v": "old"}]  # type: ignore[union-attr]
    assert store.get(("ns",), "k").value == {"v": "new"}  # type: ignore[union-attr]
    assert store.list_namespaces() == [("ns",), ("other",)]


def test_get_put_delete_roundtrip(store: LaminaStore) -> None:
    """Mirrors Item semantics: a put stores the value verbatim (nested, non-ASCII, key
    order kept), a re-put replaces it and moves updated_at; a missing key gets None; a
    value of None deletes. created_at is kept on update, as in LangGraph's sqlite and
    postgres stores (InMemoryStore resets it on every put)."""
    value = {"z": 1, "a": [1, 2.5, None, True], "nested": {"名前": "Ünïcode"}, "empty": {}}
    store.put(("users", "alice"), "prefs", value)
    item = store.get(("users", "alice"), "prefs")
    assert item is not None
    assert item.value == value and list(item.value) == ["z", "a", "nested", "empty"]
    assert item.key == "prefs" and item.namespace == ("users", "alice")
    assert item.created_at.tzinfo is not None
    store.put(("users", "alice"), "prefs", {"theme": "dark"})
    updated = store.get(("users", "alice"), "prefs")
    assert updated is not None and updated.value == {"theme": "dark"}
    assert updated.created_at == item.created_at
    assert updated.updated_at > item.updated_at
    assert store.get(("users", "alice"), "missing") is None
    assert store.get(("users", "nobody"), "prefs") is None
    store.delete(("users", "alice"), "prefs")
    assert store.get(("users", "alice"), "prefs") is None
    store.delete(("users", "alice"), "prefs")  # deleting a missing key is a no-op


def test_keys_with_any_characters(store: LaminaStore) -> None:
    """Mirrors LangGraph keys being any string: separators, pipes, spaces, empty."""
    keys = ["a|b", "with space", "", "x/y.z", "ключ"]
    for n, key in enumerate(keys):
        store.put(("k",), key, {"n": n})
    assert [store.get(("k",), key).value for key in keys] == [{"n": n} for n in range(5)]  # type: ignore[union-attr]
    assert sorted(i.key for i in store.search(("k",))) == sorted(keys)


def test_unknown_op_rejected(store: LaminaStore) -> None:
    """Mirrors InMemoryStore.batch raising ValueError for an unknown operation type."""
    with pytest.raises(ValueError, match="unknown store operation"):
        store.batch([("not", "an", "op")])  # type: ignore[list-item]


# ------------------------------------------------------------------- semantic search
_AUTO = [
    ("doc1", {"text": "short text"}),
    ("doc2", {"text": "longer text document"}),
    ("doc3", {"text": "longest text document here"}),
    ("doc4", {"description": "text in description field"}),
    ("doc5", {"content": "text in content field"}),
    ("doc6", {"body": "text in body field"}),
]


def test_vector_store_initialization(vstore: LaminaStore) -> None:
    """Mirrors test_vector_store_initialization: the index config is kept on the store."""
    assert vstore.index_config is not None
    assert vstore.index_config["dims"] == 256
    assert vstore.index_config["embed"] is vstore.store.embeddings  # type: ignore[attr-defined]
    assert vstore.index_config["fields"] == ["$"]


def test_vector_insert_with_auto_embedding(vstore: LaminaStore) -> None:
    """Mirrors test_vector_insert_with_auto_embedding: puts are embedded on write and a
    query search ranks every item, whatever field holds the text."""
    for key, value in _AUTO:
        vstore.put(("test",), key, value)
    results = vstore.search(("test",), query="long text")
    keys = [r.key for r in results]
    assert {"doc2", "doc3"} <= set(keys)
    assert len(keys) == 6 and all(r.score is not None for r in results)


def test_async_vector_insert_with_auto_embedding(vstore: LaminaStore) -> None:
    """Mirrors test_async_vector_insert_with_auto_embedding (aput/asearch)."""

    async def scenario() -> list[str]:
        for key, value in _AUTO:
            await vstore.aput(("test",), key, value)
        return [r.key for r in await vstore.asearch(("test",), query="long text")]

    keys = asyncio.run(scenario())
    assert {"doc2", "doc3"} <= set(keys)


def _update_scenario(store: LaminaStore) -> None:
    store.put(("test",), "doc1", {"text": "zany zebra Xerxes"})
    store.put(("test",), "doc2", {"text": "something about dogs"})
    store.put(("test",), "doc3", {"text": "text about birds"})
    initial = store.search(("test",), query="Zany Xerxes")
    assert initial[0].key == "doc1"
    initial_score = initial[0].score
    assert initial_score is not None
    store.put(("test",), "doc1", {"text": "new text about dogs"})
    after = store.search(("test",), query="Zany Xerxes")
    after_score = next(r.score for r in after if r.key == "doc1")
    assert after_score is not None and after_score < initial_score
    renewed = store.search(("test",), query="new text about dogs")
    assert next(r.score for r in renewed if r.key == "doc1") > after_score  # type: ignore[operator]
    store.put(("test",), "doc4", {"text": "new text about dogs"}, index=False)
    limited = store.search(("test",), query="new text about dogs", limit=3)
    assert len(limited) == 3 and not any(r.key == "doc4" for r in limited)


def test_vector_update_with_embedding(vstore: LaminaStore) -> None:
    """Mirrors test_vector_update_with_embedding: a re-put replaces the item's vector (its
    old text scores lower, its new text higher); an index=False item is not ranked."""
    _update_scenario(vstore)


def test_async_vector_update_with_embedding(vstore: LaminaStore) -> None:
    """Mirrors test_async_vector_update_with_embedding (the same through abatch)."""

    class AsyncOnly:
        def __init__(self, store: LaminaStore) -> None:
            self.store = store

        def put(self, *args: Any, **kwargs: Any) -> None:
            asyncio.run(self.store.aput(*args, **kwargs))

        def search(self, *args: Any, **kwargs: Any) -> Any:
            return asyncio.run(self.store.asearch(*args, **kwargs))

    _update_scenario(AsyncOnly(vstore))  # type: ignore[arg-type]


_COLOURED = [
    ("doc1", {"text": "red apple", "color": "red", "score": 4.5}),
    ("doc2", {"text": "red car", "color": "red", "score": 3.0}),
    ("doc3", {"text": "green apple", "color": "green", "score": 4.0}),
    ("doc4", {"text": "blue car", "color": "blue", "score": 3.5}),
]


def test_vector_search_with_filters(vstore: LaminaStore) -> None:
    """Mirrors test_vector_search_with_filters: a query ranks within the items a filter
    keeps (equality, $gt, $gte, several conditions ANDed)."""
    for key, value in _COLOURED:
        vstore.put(("test",), key, value)
    results = vstore.search(("test",), query="apple", filter={"color": "red"})
    assert [r.key for r in results][:1] == ["doc1"] and len(results) == 2
    results = vstore.search(("test",), query="car", filter={"color": "red"})
    assert [r.key for r in results][:1] == ["doc2"] and len(results) == 2
    results = vstore.search(("test",), query="bbbbluuu", filter={"score": {"$gt": 3.2}})
    assert len(results) == 3 and results[0].key == "doc4"
    results = vstore.search(
        ("test",), query="apple", filter={"score": {"$gte": 4.0}, "color": "green"}
    )
    assert [r.key for r in results] == ["doc3"]


def test_async_vector_search_with_filters(vstore: LaminaStore) -> None:
    """Mirrors test_async_vector_search_with_filters (asearch)."""

    async def scenario() -> list[list[str]]:
        for key, value in _COLOURED:
            await vstore.aput(("test",), key, value)
        out = []
        for query, flt in [
            ("apple", {"color": "red"}),
            ("car", {"color": "red"}),
            ("bbbbluuu", {"score": {"$gt": 3.2}}),
            ("apple", {"score": {"$gte": 4.0}, "color": "green"}),
        ]:
            out.append([r.key for r in await vstore.asearch(("test",), query=query, filter=flt)])
        return out

    apple, car, blue, green = asyncio.run(scenario())
    assert apple[0] == "doc1" and len(apple) == 2
    assert car[0] == "doc2" and len(car) == 2
    assert blue[0] == "doc4" and len(blue) == 3
    assert green == ["doc3"]


def test_async_batched_vector_search_concurrent(vstore: LaminaStore) -> None:
    """Mirrors test_async_batched_vector_search_concurrent: concurrent aput/adelete/aput
    of 50 items, then concurrent filtered searches, each result honouring its filter."""
    colors = ["red", "blue", "green", "yellow", "purple"]
    things = ["apple", "car", "house", "book", "phone"]
    scores = [3.0, 3.5, 4.0, 4.5, 5.0]
    docs = [
        (f"doc{i}", {"text": f"{colors[i % 5]} {things[i % 5]}", "color": colors[i % 5],
                     "score": scores[i % 5], "index": i})
        for i in range(50)
    ]  # fmt: skip
    searches: list[tuple[str, dict[str, Any]]] = [
        ("apple", {"color": "red"}),
        ("car", {"color": "blue"}),
        ("house", {"color": "green"}),
        ("phone", {"score": {"$gt": 4.99}}),
        ("book", {"score": {"$lte": 3.5}}),
        ("apple", {"score": {"$gte": 3.0}, "color": "red"}),
        ("car", {"score": {"$lt": 5.1}, "color": "blue"}),
        ("house", {"index": {"$gt": 25}}),
        ("phone", {"index": {"$lte": 10}}),
    ]

    async def scenario() -> list[list[Any]]:
        await asyncio.gather(
            *[vstore.aput(("test",), k, v) for k, v in docs],
            *[vstore.adelete(("test",), k) for k, _ in docs],
            *[vstore.aput(("test",), k, v) for k, v in docs],
        )
        return await asyncio.gather(
            *[vstore.asearch(("test",), query=q, filter=f) for q, f in searches]
        )

    checks = {"$gt": float.__gt__, "$gte": float.__ge__, "$lt": float.__lt__, "$lte": float.__le__}
    for results, (query, flt) in zip(asyncio.run(scenario()), searches, strict=True):
        assert results, f"no results for {query!r} with {flt}"
        for result in results:
            for field, condition in flt.items():
                if isinstance(condition, dict):
                    for op, bound in condition.items():
                        assert checks[op](float(result.value[field]), float(bound))
                else:
                    assert result.value[field] == condition


def test_vector_search_pagination(vstore: LaminaStore) -> None:
    """Mirrors test_vector_search_pagination: limit/offset page through the ranking."""
    for i in range(5):
        vstore.put(("test",), f"doc{i}", {"text": f"test document number {i}"})
    page1 = vstore.search(("test",), query="test", limit=2)
    page2 = vstore.search(("test",), query="test", limit=2, offset=2)
    everything = vstore.search(("test",), query="test", limit=10)
    assert len(page1) == len(page2) == 2
    assert not {r.key for r in page1} & {r.key for r in page2}
    assert len(everything) == 5
    # the search's ranking decides the pages; within each page scores descend, as in
    # LangGraph's SQL store suite (test_vector_search_pagination)
    for page in (page1, page2, everything):
        scores = [r.score for r in page]
        assert all(s is not None for s in scores) and scores == sorted(scores, reverse=True)  # type: ignore[type-var]
    assert everything[0].score >= everything[2].score  # type: ignore[operator]


def test_async_vector_search_pagination(vstore: LaminaStore) -> None:
    """Mirrors test_async_vector_search_pagination (asearch)."""

    async def scenario() -> tuple[list[str], list[str], int]:
        for i in range(5):
            await vstore.aput(("test",), f"doc{i}", {"text": f"test document number {i}"})
        one = await vstore.asearch(("test",), query="test", limit=2)
        two = await vstore.asearch(("test",), query="test", limit=2, offset=2)
        return (
            [r.key for r in one],
            [r.key for r in two],
            len(await vstore.asearch(("test",), query="test", limit=10)),
        )

    one, two, total = asyncio.run(scenario())
    assert len(one) == len(two) == 2 and not set(one) & set(two) and total == 5


def test_deep_pages_match_the_full_ranking(dense: LaminaStore) -> None:
    """Mirrors InMemoryStore ranking every item before slicing: deep pages (which make
    the store deepen its lamina search) split the full ranking without gaps or repeats,
    with two vectors per item and a filter dropping half of them."""
    words = ["amber", "birch", "cedar", "dune", "ember", "fjord", "grove", "heath"]
    for n in range(40):
        value = {"a": f"{words[n % 8]} {n}", "b": f"{words[(n * 3) % 8]} note", "even": n % 2}
        dense.put(("deep",), f"k{n:02d}", value, index=["a", "b"])
    full = dense.search(("deep",), query="cedar grove", filter={"even": 0}, limit=100)
    assert len(full) == 20 and all(r.value["even"] == 0 for r in full)
    pages = [
        dense.search(("deep",), query="cedar grove", filter={"even": 0}, limit=5, offset=offset)
        for offset in (0, 5, 10, 15)
    ]
    keys = [r.key for page in pages for r in page]
    assert len(keys) == len(set(keys)) == 20 and set(keys) == {r.key for r in full}
    for page in [*pages, full]:  # scores descend within each page
        assert [r.score for r in page] == sorted((r.score for r in page), reverse=True)  # type: ignore[type-var]


@pytest.mark.parametrize("mode", MODES)
def test_embed_with_path(backend: ChromaMemoryStore, mode: str) -> None:
    """Mirrors test_embed_with_path: store-level and per-put index fields, one vector per
    field, max pooling over an item's vectors (equal best fields give equal scores),
    unindexed fields scoring lower, and an index=False item returned with score None.

    In both modes, since a score is the similarity to the query whatever ranked the
    item, and with the store's default index text (speaker and date added)."""
    store = LaminaStore(backend, index={"fields": ["key0", "key1", "key3"]}, search_mode=mode)  # type: ignore[arg-type]
    asyncio.run(store.aput(("test",), "doc1", {"key1": "xxx", "key2": "yyy", "key3": "zzz"}))
    doc2 = {"key0": "uuu", "key1": "vvv", "key2": "www", "key3": "xxx"}
    asyncio.run(store.aput(("test",), "doc2", doc2))

    results = store.search(("test",), query="xxx")
    assert len(results) == 2 and results[0].key != results[1].key
    best = results[0].score
    assert best is not None and results[1].score == pytest.approx(best, abs=1e-5)
    results = store.search(("test",), query="uuu")
    assert [r.key for r in results][0] == "doc2" and results[0].score > results[1].score  # type: ignore[operator]
    assert results[0].score == pytest.approx(best, abs=1e-5)
    results = store.search(("test",), query="www")  # only in the unindexed key2
    assert len(results) == 2 and all(r.score < best for r in results)  # type: ignore[operator]

    other = LaminaStore(backend, index={"fields": ["key17"]}, root="lg-other", search_mode=mode)  # type: ignore[arg-type]
    doc3 = {"key0": "aaa", "key1": "bbb", "key2": "ccc", "key3": "ddd"}
    doc4 = {"key0": "eee", "key1": "bbb", "key2": "fff", "key3": "ggg"}
    asyncio.run(other.aput(("test",), "doc3", doc3, index=["key0", "key1"]))
    asyncio.run(other.aput(("test",), "doc4", doc4, index=["key1", "key3"]))
    results = other.search(("test",), query="aaa")
    assert results[0].key == "doc3" and results[0].score > results[1].score  # type: ignore[operator]
    results = other.search(("test",), query="ggg")
    assert results[0].key == "doc4" and results[0].score > results[1].score  # type: ignore[operator]
    results = other.search(("test",), query="bbb")
    assert results[0].key != results[1].key
    assert results[0].score == pytest.approx(results[1].score, abs=1e-6)
    results = other.search(("test",), query="ccc")
    assert len(results) == 2 and all(r.score < best for r in results)  # type: ignore[operator]
    asyncio.run(other.aput(("test",), "doc5", {"key0": "hhh", "key1": "iii"}, index=False))
    results = other.search(("test",), query="hhh")
    assert len(results) == 3
    assert next(r for r in results if r.key == "doc5").score is None


def test_embed_with_path_ordering_hybrid(backend: ChromaMemoryStore) -> None:
    """Mirrors test_embed_with_path's orderings in hybrid mode: per-put index fields
    decide which item ranks first, and an index=False item comes last, unscored."""
    store = LaminaStore(backend, index={"fields": ["key17"]})
    store.put(("test",), "doc3", {"key0": "aaa", "key1": "bbb", "key2": "ccc"}, index=["key0"])
    store.put(("test",), "doc4", {"key0": "eee", "key1": "bbb", "key3": "ggg"}, index=["key3"])
    store.put(("test",), "doc5", {"key0": "hhh"}, index=False)
    assert [r.key for r in store.search(("test",), query="aaa")] == ["doc3", "doc4", "doc5"]
    ggg = store.search(("test",), query="ggg")
    assert [r.key for r in ggg] == ["doc4", "doc3", "doc5"]
    assert ggg[0].score > ggg[1].score and ggg[2].score is None  # type: ignore[operator]


def _cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


SCORE_QUERIES = ["aaa", "bbb", "ccc", "abcd", "poisson"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("query", SCORE_QUERIES)
def test_scores(
    backend: ChromaMemoryStore, embeddings: CharacterEmbeddings, mode: str, query: str
) -> None:
    """Mirrors test_scores of LangGraph's store suites: the one item indexed by
    ``key0 = "aaa"`` scores the cosine similarity of the query and "aaa" (1.0 for "aaa"),
    in both modes, with the store's default index text (speaker and date added)."""
    index = {"dims": embeddings.dims, "embed": embeddings, "fields": ["key0"]}
    store = LaminaStore(backend, index=index, search_mode=mode)  # type: ignore[arg-type]
    store.put(("test",), "doc", {"key0": "aaa"}, index=["key0", "key1"])
    results = store.search((), query=query)
    expected = _cosine(embeddings.embed_query(query), embeddings.embed_query("aaa"))
    assert len(results) == 1
    assert results[0].score == pytest.approx(expected, abs=1e-3)
    if query == "aaa":
        assert results[0].score == pytest.approx(1.0, abs=1e-6)


@pytest.mark.parametrize("mode", MODES)
def test_async_scores(
    backend: ChromaMemoryStore, embeddings: CharacterEmbeddings, mode: str
) -> None:
    """Mirrors the async test_scores (aput/asearch)."""
    index = {"dims": embeddings.dims, "embed": embeddings, "fields": ["key0"]}
    store = LaminaStore(backend, index=index, search_mode=mode)  # type: ignore[arg-type]

    async def scenario() -> list[float | None]:
        await store.aput(("test",), "doc", {"key0": "aaa"}, index=["key0"])
        return [r.score for q in SCORE_QUERIES for r in await store.asearch((), query=q)]

    scores = asyncio.run(scenario())
    vec0 = embeddings.embed_query("aaa")
    expected = [_cosine(embeddings.embed_query(q), vec0) for q in SCORE_QUERIES]
    assert scores == pytest.approx(expected, abs=1e-3)


@pytest.mark.parametrize("mode", MODES)
def test_scores_equal_in_memory_stores(
    backend: ChromaMemoryStore, embeddings: CharacterEmbeddings, mode: str
) -> None:
    """The same puts in LangGraph's InMemoryStore and in a LaminaStore give every item the
    same score for a query: the whole value (its sorted-key JSON, as LangGraph embeds
    it), store-level and per-put fields, several texts at one path (max pooling), and
    None for an item put with index=False."""
    from langgraph.store.memory import InMemoryStore

    index = {"dims": embeddings.dims, "embed": embeddings, "fields": ["text", "tags[*]"]}
    whole = {"dims": embeddings.dims, "embed": embeddings}
    puts: list[tuple[str, dict[str, Any], Any]] = [
        ("a", {"text": "red apple", "tags": ["fruit", "sweet"]}, None),
        ("b", {"text": "blue car", "tags": ["vehicle"]}, None),
        ("c", {"title": "green apple pie", "text": "bake it"}, ["title"]),
        ("d", {"text": "red apple"}, False),
    ]
    for config, root in ((index, "lg"), (whole, "lg-whole")):
        reference = InMemoryStore(index=config)  # type: ignore[arg-type]
        lamina = LaminaStore(backend, index=config, root=root, search_mode=mode)  # type: ignore[arg-type]
        for key, value, fields in puts:
            reference.put(("ns",), key, value, index=fields)
            lamina.put(("ns",), key, value, index=fields)
        for query in ("red apple", "vehicle", "apple pie", '{"tags": ["vehicle"]}'):
            theirs = {r.key: r.score for r in reference.search(("ns",), query=query, limit=10)}
            ours = {r.key: r.score for r in lamina.search(("ns",), query=query, limit=10)}
            assert ours.keys() == theirs.keys() and ours["d"] is None
            assert ours == pytest.approx(theirs, abs=1e-6), (root, query)
    exact = LaminaStore(backend, index=whole, root="lg-whole", search_mode=mode)  # type: ignore[arg-type]
    value = {"text": "blue car", "tags": ["vehicle"]}
    query = json.dumps(value, sort_keys=True, ensure_ascii=False)
    assert exact.search(("ns",), query=query)[0].score == pytest.approx(1.0, abs=1e-6)


def test_hybrid_keeps_its_ranking_and_reports_similarity(
    backend: ChromaMemoryStore, embeddings: CharacterEmbeddings
) -> None:
    """Hybrid search picks the page's items as lamina's fused search ranks them, while each
    score is the item's similarity to the query (the page ordered by it): an item BM25
    finds makes the page ahead of items whose characters are closer to the query."""
    store = LaminaStore(backend, index={"fields": ["text"]})
    store.put(("ns",), "word", {"text": "zebra crossing near the old railway station"})
    store.put(("ns",), "letters", {"text": "bazer arbez"})
    for n in range(8):
        store.put(("ns",), f"other{n}", {"text": f"note number {n} about lunch"})
    results = store.search(("ns",), query="zebra", limit=3)
    namespace = store.lamina_namespace(("ns",))
    hits = backend.search(
        "zebra", "raw", namespace, k=20, where={"metadata.lg_vector": True}, mode="hybrid"
    )
    fused = list(dict.fromkeys(str(h.record.metadata["lg_key"]) for h in hits))
    assert {r.key for r in results} == set(fused[:3])  # the fused ranking fills the page
    assert fused[:2] == ["word", "letters"]  # BM25 puts the word first ...
    by_key = {r.key: r.score for r in results}
    assert by_key["letters"] > by_key["word"]  # ... the characters are closer
    assert [r.score for r in results] == sorted(by_key.values(), reverse=True)  # type: ignore[type-var]
    for key, score in by_key.items():
        text = next(r.value["text"] for r in results if r.key == key)
        expected = _cosine(embeddings.embed_query("zebra"), embeddings.embed_query(text))
        assert score == pytest.approx(expected, abs=1e-6)
    assert all(r.score is None for r in store.search(("ns",)))  # no query: no score


@pytest.mark.parametrize("mode", MODES)
def test_a_query_search_reads_only_the_items_its_hits_name(
    backend: ChromaMemoryStore, mode: str
) -> None:
    """A search with a query reads the items its vector hits name, not the namespace,
    and still fills the page with unranked items (index=False) when too few rank."""
    counting = CountingStore(backend)
    store = LaminaStore(counting, search_mode=mode)  # type: ignore[arg-type]
    store.batch(
        [PutOp(("u", "m"), f"k{i}", {"text": f"note {i} about topic {i % 7}"}) for i in range(300)]
    )
    store.put(("u", "m"), "plain", {"text": "unranked"}, index=False)
    counting.read = 0
    hits = store.search(("u", "m"), query="topic 3", limit=5)
    assert len(hits) == 5 and all(h.score is not None for h in hits)
    assert counting.read < 60  # the namespace holds 301 items
    filtered = store.search(("u", "m"), query="topic 3", filter={"text": "note 3 about topic 3"})
    assert [h.key for h in filtered] == ["k3"]
    page = store.search(("u", "m"), query="topic", limit=400)
    assert len(page) == 301 and page[-1].key == "plain" and page[-1].score is None


def test_index_path_syntax(dense: LaminaStore) -> None:
    """Mirrors test_get_text_at_path's path syntax as index fields: nested fields,
    array wildcards and an index into an array each become search vectors."""
    value = {"info": {"title": "quantum physics"}, "items": [{"v": "gardening"}, {"v": "cooking"}]}
    dense.put(("p",), "a", value, index=["items[*].v"])
    dense.put(("p",), "b", value, index=["info.title"])
    dense.put(("p",), "c", {"tags": ["cooking", "baking"]}, index=["tags[1]"])
    assert dense.search(("p",), query="gardening")[0].key == "a"
    assert dense.search(("p",), query="quantum physics")[0].key == "b"
    assert dense.search(("p",), query="baking")[0].key == "c"


def test_non_ascii(vstore: LaminaStore) -> None:
    """Mirrors test_non_ascii: Chinese, Japanese, Korean, Russian and Hindi texts each
    rank first for their own text."""
    texts = ["这是中文", "これは日本語です", "이건 한국어야", "Это русский", "यह रूसी है"]
    for n, text in enumerate(texts, start=1):
        vstore.put(("user_123", "memories"), str(n), {"text": text})
    for n, text in enumerate(texts, start=1):
        assert vstore.search(("user_123", "memories"), query=text)[0].key == str(n)


# ------------------------------------------------------------- filters and prefixes
def test_filter_operators_without_query(store: LaminaStore) -> None:
    """Mirrors InMemoryStore's filter semantics (_compare_values/_apply_operator):
    equality, $eq, $ne, $gt, $gte, $lt, $lte, nested-dict and list equality; without a
    query, items come in the order they were first put, unscored."""
    rows = [
        ("a", {"n": 1, "tag": "x", "meta": {"lang": "en", "v": 2}, "list": [1, 2]}),
        ("b", {"n": 2, "tag": "y", "meta": {"lang": "fr", "v": 2}, "list": [1, 2, 3]}),
        ("c", {"n": 3, "tag": "x", "meta": {"lang": "en", "v": 3}}),
    ]
    for key, value in rows:
        store.put(("f",), key, value)

    def keys(flt: dict[str, Any]) -> list[str]:
        found = store.search(("f",), filter=flt)
        assert all(r.score is None for r in found)
        return [r.key for r in found]

    assert keys({}) == ["a", "b", "c"]
    assert keys({"tag": "x"}) == ["a", "c"]
    assert keys({"tag": {"$eq": "y"}}) == ["b"]
    assert keys({"tag": {"$ne": "x"}}) == ["b"]
    assert keys({"n": {"$gt": 1}}) == ["b", "c"]
    assert keys({"n": {"$gte": 2, "$lt": 3}}) == ["b"]
    assert keys({"n": {"$lte": 2}, "tag": "x"}) == ["a"]
    assert keys({"meta": {"lang": "en"}}) == ["a", "c"]
    assert keys({"meta": {"v": {"$gt": 2}}}) == ["c"]
    assert keys({"list": [1, 2]}) == ["a"]
    assert keys({"missing": {"$gt": 0}}) == []  # InMemoryStore raises TypeError here
    assert keys({"tag": {"$gt": "x"}}) == ["b"]  # strings order as strings
    assert [r.key for r in store.search(("f",), limit=1, offset=1)] == ["b"]
    with pytest.raises(InvalidInputError, match=r"\$regex"):
        store.search(("f",), filter={"tag": {"$regex": "x"}})


def test_search_namespace_prefix(store: LaminaStore) -> None:
    """Mirrors SearchOp.namespace_prefix: () searches the whole store; a prefix covers
    every deeper namespace; a label must match whole (no partial-label match)."""
    store.put(("docs", "a"), "1", {"text": "alpha"})
    store.put(("docs", "a", "deep"), "2", {"text": "beta"})
    store.put(("docs", "ab"), "3", {"text": "gamma"})
    store.put(("other",), "4", {"text": "delta"})
    assert sorted(r.key for r in store.search(())) == ["1", "2", "3", "4"]
    assert sorted(r.key for r in store.search(("docs",))) == ["1", "2", "3"]
    assert sorted(r.key for r in store.search(("docs", "a"))) == ["1", "2"]
    assert store.search(("docs", "a", "deep"))[0].namespace == ("docs", "a", "deep")
    assert store.search(("nothing",)) == []
    found = store.search(("docs",), query="beta", limit=1)
    assert [(r.namespace, r.key) for r in found] == [(("docs", "a", "deep"), "2")]


def test_namespace_isolation(store: LaminaStore) -> None:
    """Namespace isolation: another namespace's items never appear in get, search (with
    or without a query, filter or prefix of the other) or list_namespaces."""
    alice, bob = ("users", "alice"), ("users", "bob")
    store.put(alice, "k", {"text": "alice likes green tea", "owner": "alice"})
    store.put(bob, "k", {"text": "bob likes green tea", "owner": "bob"})
    store.put(bob, "only-bob", {"text": "bob's secret green tea recipe", "owner": "bob"})
    assert store.get(alice, "k").value["owner"] == "alice"  # type: ignore[union-attr]
    assert store.get(alice, "only-bob") is None
    for query in (None, "green tea", "bob secret recipe"):
        found = store.search(alice, query=query)
        assert [r.value["owner"] for r in found] == ["alice"]
    assert store.search(alice, filter={"owner": "bob"}) == []
    assert store.list_namespaces(prefix=alice) == [alice]
    store.delete(alice, "k")
    assert store.get(bob, "k").value["owner"] == "bob"  # type: ignore[union-attr]
    assert store.list_namespaces() == [bob]


def test_lamina_namespace_mapping(store: LaminaStore, backend: ChromaMemoryStore) -> None:
    """Namespace tuples map one-to-one onto lamina namespaces: labels with '/', ':'
    or non-ASCII characters never collide, and the records live where the mapping says."""
    one, two = ("a/b",), ("a", "b")
    store.put(one, "k", {"v": 1})
    store.put(two, "k", {"v": 2})
    assert store.lamina_namespace(one) != store.lamina_namespace(two)
    assert store.lamina_namespace(("user:alice", "mémoire")) == "lg/user:alice/m.c3.a9moire"
    assert store.get(one, "k").value == {"v": 1}  # type: ignore[union-attr]
    assert store.get(two, "k").value == {"v": 2}  # type: ignore[union-attr]
    raw = backend.get("raw", store.lamina_namespace(two))
    assert [r.text for r in raw] == ['{"v": 2}']
    with pytest.raises(InvalidNamespaceError, match="at most 256"):
        store.put(("x" * 300,), "k", {"v": 1})


# ---------------------------------------------------------------------- bad input
def test_non_json_value_rejected_nothing_written(store: LaminaStore) -> None:
    """A value JSON cannot hold (a datetime, a set, an object, NaN, a non-string key, a
    non-dict) is refused with an error naming it, and the whole batch writes nothing."""
    bad_values: list[Any] = [
        {"when": datetime(2024, 1, 1, tzinfo=UTC)},
        {"tags": {"a", "b"}},
        {"obj": object()},
        {"x": float("nan")},
        {"nested": {1: "int key"}},
        ["not", "a", "dict"],
        "text",
    ]
    for value in bad_values:
        with pytest.raises(InvalidTypeError) as caught:
            store.batch([PutOp(("ok",), "good", {"v": 1}), PutOp(("ok",), "bad", value)])
        assert isinstance(caught.value, LaminaError)
        assert store.get(("ok",), "good") is None
    with pytest.raises(InvalidTypeError, match=r"value\['when'\] is a datetime"):
        store.put(("ok",), "k", {"when": datetime(2024, 1, 1, tzinfo=UTC)})
    with pytest.raises(InvalidInputError, match="surrogate"):
        store.put(("ok",), "k", {"text": "broken \ud800"})
    assert store.list_namespaces() == []


def test_bad_arguments_rejected(store: LaminaStore, backend: ChromaMemoryStore) -> None:
    """Bad search pages, filters, index arguments and constructor settings get fix-it
    errors before anything runs."""
    with pytest.raises(InvalidInputError, match="limit"):
        store.search(("a",), limit=-1)
    with pytest.raises(InvalidTypeError, match="filter must be a dict"):
        store.search(("a",), filter=[("k", "v")])  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="surrogate"):  # even with nothing stored
        store.search(("a",), query="broken \ud800")
    with pytest.raises(InvalidTypeError, match="index must be"):
        store.batch([PutOp(("a",), "k", {"v": 1}, index="v")])  # type: ignore[arg-type]
    with pytest.raises(InvalidTypeError, match="key must be a str"):
        store.batch([PutOp(("a",), 5, {"v": 1})])  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="search_mode"):
        LaminaStore(backend, search_mode="fuzzy")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="own embeddings"):
        LaminaStore(backend, index={"dims": 8, "embed": CharacterEmbeddings(8)})
    with pytest.raises(InvalidInputError, match="own embeddings"):
        LaminaStore(backend, index={"embed": "openai:text-embedding-3-small"})
    with pytest.raises(InvalidInputError, match="unknown index settings"):
        LaminaStore(backend, index={"feilds": ["text"]})  # type: ignore[typeddict-unknown-key]
    with pytest.raises(InvalidTypeError, match="MemoryStore"):
        LaminaStore({"not": "a store"})  # type: ignore[arg-type]
    with pytest.raises(NamespaceError):
        LaminaStore(backend, root="/bad root")
    assert store.list_namespaces() == []


def test_bad_keys_queries_and_depths_get_lamina_errors(store: LaminaStore) -> None:
    """A query that is not a str is refused, not taken for no query (which listed every
    item); a key or label holding a lone surrogate, and a max_depth that is not an int
    >= 0, get lamina errors instead of UnicodeEncodeError / TypeError; nothing is written."""
    store.put(("a",), "k", {"text": "greyhound"})
    with pytest.raises(InvalidTypeError, match="query must be a str or None, got int"):
        store.search(("a",), query=5)  # type: ignore[arg-type]
    with pytest.raises(InvalidTypeError, match="query must be a str or None, got int"):
        asyncio.run(store.asearch(("a",), query=5))  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="key holds a lone UTF-16 surrogate"):
        store.put(("a",), "bad \ud800", {"text": "x"})
    with pytest.raises(InvalidInputError, match="key holds a lone UTF-16 surrogate"):
        store.get(("a",), "bad \ud800")
    with pytest.raises(NamespaceError, match="lone UTF-16 surrogate"):
        store.put(("\ud800",), "k", {"text": "x"})
    with pytest.raises(InvalidNamespaceError, match="lone UTF-16 surrogate"):
        asyncio.run(store.aget(("b", "\ud800"), "k"))
    with pytest.raises(InvalidInputError, match="max_depth must be an int >= 0"):
        store.list_namespaces(max_depth="1")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="max_depth must be an int >= 0"):
        store.list_namespaces(max_depth=-1)
    assert store.list_namespaces() == [("a",)]
    assert [i.key for i in store.search(("a",))] == ["k"]


# -------------------------------------------------------------------- in a graph
class _State(TypedDict):
    user: str
    note: str
    found: list[str]


def test_compiled_graph_get_store(store: LaminaStore) -> None:
    """LangGraph's store wiring: graph.compile(store=LaminaStore(...)) hands the
    store to nodes through get_store() and runtime.store, sync and async, each user's
    notes under their own namespace tuple."""

    def write(state: _State) -> dict[str, Any]:
        get_store().put(("notes", state["user"]), "latest", {"text": state["note"]})
        return {}

    def read(state: _State, runtime: Runtime[None]) -> dict[str, Any]:
        assert runtime.store is store
        items = runtime.store.search(("notes", state["user"]), query=state["note"])
        return {"found": [i.value["text"] for i in items]}

    async def awrite(state: _State) -> dict[str, Any]:
        await get_store().aput(("notes", state["user"]), "latest", {"text": state["note"]})
        return {}

    async def aread(state: _State) -> dict[str, Any]:
        items = await get_store().asearch(("notes", state["user"]), query=state["note"])
        return {"found": [i.value["text"] for i in items]}

    def build(first: Any, second: Any) -> Any:
        builder = StateGraph(_State)
        builder.add_node("write", first)
        builder.add_node("read", second)
        builder.add_edge(START, "write")
        builder.add_edge("write", "read")
        builder.add_edge("read", END)
        return builder.compile(store=store)

    graph = build(write, read)
    assert graph.invoke({"user": "alice", "note": "likes jasmine tea", "found": []})["found"] == [
        "likes jasmine tea"
    ]
    agraph = build(awrite, aread)
    out = asyncio.run(agraph.ainvoke({"user": "bob", "note": "plays chess", "found": []}))
    assert out["found"] == ["plays chess"]
    assert store.list_namespaces(prefix=("notes",)) == [("notes", "alice"), ("notes", "bob")]
    assert store.get(("notes", "alice"), "latest").value == {"text": "likes jasmine tea"}  # type: ignore[union-attr]


# ------------------------------------- behaviours of LangGraph's SQLite store tests
def test_batch_order(store: LaminaStore) -> None:
    """Mirrors checkpoint-sqlite test_batch_order/test_batch_get_ops/test_batch_put_ops:
    mixed ops answer in op order (Item, None for a put, lists for search and list,
    None for a missing key), and a PutOp with value None deletes."""
    store.put(("test", "foo"), "key1", {"data": "value1"})
    store.put(("test", "bar"), "key2", {"data": "value2"})
    results = store.batch(
        [
            GetOp(("test", "foo"), "key1"),
            PutOp(("test", "bar"), "key2", {"data": "value2"}),
            SearchOp(("test",), filter={"data": "value1"}),
            ListNamespacesOp(),
            GetOp(("test",), "key3"),
            PutOp(("test",), "key3", {"data": "value3"}),
            PutOp(("test", "foo"), "key1", None),
        ]
    )
    assert results[0].namespace == ("test", "foo") and results[0].value == {"data": "value1"}  # type: ignore[union-attr]
    assert results[1] is None and results[5] is None and results[6] is None
    assert [(i.key, i.value) for i in results[2]] == [("key1", {"data": "value1"})]  # type: ignore[union-attr]
    assert results[3] == [("test", "bar"), ("test", "foo")]
    assert results[4] is None
    assert store.get(("test",), "key3").value == {"data": "value3"}  # type: ignore[union-attr]
    assert store.get(("test", "foo"), "key1") is None


def test_search_edge_cases(vstore: LaminaStore) -> None:
    """Mirrors checkpoint-sqlite test_vector_search_edge_cases: an empty or None query
    lists, and long or punctuation-only queries still search."""
    vstore.put(("test",), "doc1", {"text": "test document"})
    for query in ("", None, "test " * 100, "test!@#$%^&*()", "   "):
        assert [r.key for r in vstore.search(("test",), query=query)] == ["doc1"]


def test_namespace_matching_is_literal(store: LaminaStore) -> None:
    """Mirrors checkpoint-sqlite's namespace tests: prefixes stop at label boundaries
    ('foo' never matches 'foobar'), are case-sensitive, treat '*', '%', '_', '?', '['
    literally in search, tell 'alice' from 'alice\\n', and () is unconstrained."""
    namespaces = [
        ("foo",),
        ("foo", "child"),
        ("foobar",),
        ("foobar", "baz"),
        ("foo2",),
        ("Foo",),
        ("user_1",),
        ("userX1",),
        ("a%b",),
        ("axxb",),
        ("star*",),
        ("starX",),
        ("q?m",),
        ("br[ack]et",),
        ("users", "alice"),
        ("users", "alice\n"),
        ("uid", "users", "malice"),
    ]
    for ns in namespaces:
        store.put(ns, "k", {"v": 1})

    def found(prefix: tuple[str, ...]) -> set[tuple[str, ...]]:
        return {i.namespace for i in store.search(prefix, limit=100)}

    assert found(("foo",)) == {("foo",), ("foo", "child")}
    assert found(("foobar",)) == {("foobar",), ("foobar", "baz")}
    assert found(("fo",)) == set()
    assert found(("Foo",)) == {("Foo",)}
    for label in ("user_1", "a%b", "star*", "q?m", "br[ack]et"):
        assert found((label,)) == {(label,)}
        assert store.list_namespaces(prefix=(label,)) == [(label,)]
    assert found(()) == set(namespaces)
    assert store.list_namespaces(suffix=("alice",)) == [("users", "alice")]
    assert store.list_namespaces(prefix=("users", "alice")) == [("users", "alice")]


def test_filter_values_and_keys_are_data(store: LaminaStore) -> None:
    """Mirrors checkpoint-sqlite's filter safety tests: injection-like values match
    literally, quotes work, inf/-inf/NaN/huge/negative numbers compare safely, booleans
    are not numbers, and keys with hyphens, leading digits or dotted nesting work."""
    store.put(("docs",), "public", {"access": "public", "title": "O'Brien's Document"})
    store.put(("docs",), "private", {"access": "private", "password": "123"})
    for value in ("public' OR '1'='1", "public'; --", "''''", "public\x00' OR 'א'='א"):
        assert store.search(("docs",), filter={"access": value}) == []
    assert [i.key for i in store.search(("docs",), filter={"title": "O'Brien's Document"})] == [
        "public"
    ]

    for n, price in enumerate([10, 20, 30, -10]):
        store.put(("items",), f"item{n}", {"price": price, "flag": n % 2 == 0, "one": 1})

    def keys(flt: dict[str, Any]) -> list[str]:
        return [i.key for i in store.search(("items",), filter=flt)]

    assert keys({"price": {"$gt": 15}}) == ["item1", "item2"]
    assert len(keys({"price": {"$lt": float("inf")}})) == 4
    assert len(keys({"price": {"$gt": float("-inf")}})) == 4
    assert keys({"price": {"$eq": float("nan")}}) == []
    assert len(keys({"price": {"$lt": 10**100}})) == 4
    assert keys({"price": {"$lt": 0}}) == ["item3"]
    assert keys({"flag": True}) == ["item0", "item2"]
    assert keys({"flag": False}) == ["item1", "item3"]
    assert keys({"one": True}) == []  # JSON true is not 1

    store.put(("keys",), "hyphen", {"access-level": "public", "user": {"access-level": "nested"}})
    store.put(("keys",), "digit", {"123abc": "ok", "user": {"123abc": "ok2"}})
    for flt, expected in [
        ({"access-level": "public"}, ["hyphen"]),
        ({"user.access-level": "nested"}, ["hyphen"]),
        ({"123abc": "ok"}, ["digit"]),
        ({"user.123abc": "ok2"}, ["digit"]),
    ]:
        assert [i.key for i in store.search(("keys",), filter=flt)] == expected


# ----------------------------------------------------------- optional ingest route
def test_put_with_messages_is_ingested(backend: ChromaMemoryStore) -> None:
    """With ingest=Memory(...), a put whose value holds a conversation is stored
    verbatim and also added to lamina's ingest graph in the same namespace (raw turns
    with their speakers, then facts, per the memory's trigger policy: eager here);
    other puts make no LLM call; the LangGraph view (get/search/list) still shows only
    the items."""
    model = SchemaChatModel().script(
        "ConstructionLines", "T|Baking\nS|Alice baked bread.\nF|t1|Alice|Alice bakes bread"
    )
    config = MemoryConfig(context={"trigger_policy": "eager"})
    with Memory(config=config, store=backend, chat_model=model) as memory:
        store = LaminaStore(backend, ingest=memory)
        thread = {
            "messages": [
                {"role": "user", "name": "Alice", "content": "we baked bread today"},
                {"role": "assistant", "content": "How did it turn out?"},
            ],
            "title": "baking chat",
        }
        store.put(("chats", "alice"), "thread-1", thread)
        namespace = store.lamina_namespace(("chats", "alice"))
        assert [f.text for f in backend.get("fact", namespace)] == ["Alice bakes bread"]
        turns = [r for r in backend.get("raw", namespace) if r.session_id != "langgraph-store"]
        assert [(t.speaker, t.text) for t in turns] == [
            ("Alice", "we baked bread today"),
            ("assistant", "How did it turn out?"),
        ]
        assert store.get(("chats", "alice"), "thread-1").value == thread  # type: ignore[union-attr]
        calls = len(model.calls)
        store.put(("chats", "alice"), "note", {"content": "no conversation here"})
        assert len(model.calls) == calls
        assert sorted(i.key for i in store.search(("chats", "alice"))) == ["note", "thread-1"]
        assert store.list_namespaces() == [("chats", "alice")]
        hits = memory.search("bread", namespace=namespace, granularities=["fact"])
        assert [h.text for h in hits] == ["Alice bakes bread"]

        with pytest.raises(InvalidInputError, match="content"):
            store.put(("chats", "bob"), "t", {"messages": [{"role": "user", "content": ""}]})
        with pytest.raises(InvalidInputError, match="non-empty list"):
            store.put(("chats", "bob"), "t", {"messages": "hello"})
        assert store.list_namespaces() == [("chats", "alice")]


def test_ingest_needs_a_memory_over_the_same_store(backend: ChromaMemoryStore) -> None:
    """The ingest option is checked at construction: it must be a Memory (has add())
    whose store is the one the items live in."""
    other = ChromaMemoryStore.ephemeral(embeddings=backend.embeddings)
    with Memory(store=other, chat_model=SchemaChatModel()) as memory:
        with pytest.raises(InvalidInputError, match="same_store"):
            LaminaStore(backend, ingest=memory)
    with pytest.raises(InvalidTypeError, match="ingest must be"):
        LaminaStore(backend, ingest="memory")  # type: ignore[arg-type]


@pytest.mark.integration
def test_items_persist_across_processes(tmp_path: Path, embeddings: CharacterEmbeddings) -> None:
    """Mirrors LangGraph's persistent stores (sqlite, postgres): items, their vectors
    and the namespace listing survive reopening the store on the same disk."""
    first = LaminaStore(ChromaMemoryStore.persistent(tmp_path / "chroma", embeddings=embeddings))
    first.put(("users", "alice"), "tea", {"text": "green tea with jasmine"})
    first.put(("users", "bob"), "tea", {"text": "black coffee"})
    created = first.get(("users", "alice"), "tea")
    reopened = LaminaStore(ChromaMemoryStore.persistent(tmp_path / "chroma", embeddings=embeddings))
    assert reopened.get(("users", "alice"), "tea") == created
    assert reopened.list_namespaces() == [("users", "alice"), ("users", "bob")]
    [hit] = reopened.search(("users", "alice"), query="jasmine tea")
    assert hit.key == "tea" and hit.score is not None
