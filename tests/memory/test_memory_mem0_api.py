"""What mem0 users expect from the facade, in lamina's style.

``add(metadata=, infer=False)``, ``search(filters=, top_k=, threshold=)``, ``get_all``,
``update``, ``delete`` and ``delete_all``. Every bad input gets a clear error and leaves
the store exactly as it was (records of every granularity, profiles and audit logs of
every namespace, compared with a snapshot); every call stays inside its namespace.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from lamina import Memory, MemoryConfig
from lamina.errors import (
    InvalidInputError,
    InvalidTypeError,
    NamespaceError,
    RecordNotFoundError,
)
from lamina.records import EpisodeRecord, FactRecord, Granularity, RawTurn
from lamina.stores import ChromaMemoryStore
from lamina.testing import FakeEmbeddings, SchemaChatModel, store_snapshot

NS = "user:alice"
OTHER = "user:bob"
T0 = datetime(2024, 5, 8, 18, 20, tzinfo=UTC)
NAMESPACES = (NS, OTHER, "user:nobody")


class NoServer:
    """A local server factory that fails the test if anything asks for a model."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, config: MemoryConfig) -> Any:
        self.calls += 1
        raise AssertionError("a model was asked for")


@pytest.fixture
def store() -> ChromaMemoryStore:
    return ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())


@pytest.fixture
def no_server() -> NoServer:
    return NoServer()


@pytest.fixture
def memory(store: ChromaMemoryStore, no_server: NoServer) -> Memory:
    """A Memory with no chat model at all: every call here must work without one."""
    memory = Memory(store=store, local_server_factory=no_server)
    memory.add("I adopted a greyhound called Biscuit", namespace=NS, at=T0, infer=False)
    memory.add(
        "Dinner at Luigi's on Friday",
        namespace=NS,
        at=T0 + timedelta(days=1),
        infer=False,
        metadata={"topic": "food", "priority": 2},
    )
    memory.add(
        "Flight to Lisbon booked",
        namespace=NS,
        at=T0 + timedelta(days=2),
        infer=False,
        metadata={"topic": "travel", "priority": 1},
    )
    memory.add(
        "Luigi's is my favourite restaurant",
        namespace=OTHER,
        at=T0,
        infer=False,
        metadata={"topic": "food"},
    )
    store.add(
        NS,
        [
            FactRecord(id="f-old", namespace=NS, text="Alice lives in Paris", occurred_at=T0),
        ],
    )
    return memory


def snapshot(store: ChromaMemoryStore) -> dict[str, Any]:
    """Everything stored in every namespace the tests use: records, profile, audit log."""
    return store_snapshot(store, NAMESPACES)


def raw_id(store: ChromaMemoryStore, namespace: str, text: str) -> str:
    return next(r.id for r in store.get("raw", namespace) if r.text == text)


# ----------------------------------------------------------- add(infer=False)
def test_infer_false_stores_the_text_verbatim_with_metadata_and_no_model(
    memory: Memory, store: ChromaMemoryStore, no_server: NoServer
) -> None:
    result = memory.add(
        "  Gate code: 4417 (keep the spaces)  ",
        namespace=NS,
        infer=False,
        metadata={"source": "import", "score": 0.5, "pinned": True},
    )
    [record] = store.get("raw", NS, result.new_raw_ids)
    assert isinstance(record, RawTurn)
    assert record.text == "  Gate code: 4417 (keep the spaces)  "
    assert record.metadata == {"source": "import", "score": 0.5, "pinned": True}
    assert result.llm_calls == [] and result.written == []
    assert no_server.calls == 0 and memory.local_server is None
    assert store.count("fact", NS) == 1 and store.count("episode", NS) == 0


def test_a_verbatim_turn_is_never_consolidated_by_a_later_add(store: ChromaMemoryStore) -> None:
    model = SchemaChatModel()
    config = MemoryConfig(context={"trigger_policy": "session"})
    memory = Memory(config=config, store=store, chat_model=model)
    kept = memory.add(
        "wifi password hint: parrot", namespace=NS, at=T0, session_id="s1", infer=False
    )
    memory.add("we baked bread", namespace=NS, at=T0, session_id="s1", session_closed=True)
    assert model.count("ConstructionLines") >= 1  # the session was consolidated
    prompts = [m.content for _, messages in model.calls for m in messages]
    assert not any("parrot" in str(p) for p in prompts)
    [verbatim] = store.get("raw", NS, kept.new_raw_ids)
    assert isinstance(verbatim, RawTurn) and verbatim.consolidated_into == []


def test_the_same_verbatim_turn_twice_is_a_duplicate(memory: Memory) -> None:
    first = memory.add("Ping", namespace=NS, at=T0, infer=False)
    again = memory.add("Ping", namespace=NS, at=T0, infer=False)
    assert again.new_raw_ids == [] and again.duplicate_raw_ids == first.new_raw_ids


def test_call_metadata_applies_to_every_turn_and_a_turns_own_wins(
    memory: Memory, store: ChromaMemoryStore
) -> None:
    result = memory.add(
        [
            {"role": "user", "content": "one", "metadata": {"topic": "own"}},
            {"role": "user", "content": "two"},
        ],
        namespace=NS,
        infer=False,
        metadata={"topic": "call", "run_id": "r1"},
    )
    records = store.get("raw", NS, result.new_raw_ids)
    assert [r.metadata for r in records] == [
        {"topic": "own", "run_id": "r1"},
        {"topic": "call", "run_id": "r1"},
    ]


def test_metadata_with_infer_true_is_kept_on_the_raw_turns(store: ChromaMemoryStore) -> None:
    memory = Memory(store=store, chat_model=SchemaChatModel())
    result = memory.add("we baked bread", namespace=NS, metadata={"run_id": "r7"})
    [record] = store.get("raw", NS, result.new_raw_ids)
    assert record.metadata == {"run_id": "r7"}
    hits = memory.search("bread", namespace=NS, filters={"run_id": "r7"})
    assert [h.id for h in hits] == result.new_raw_ids


# ------------------------------------------------------------------- search
def test_search_filters_on_metadata(memory: Memory) -> None:
    hits = memory.search("dinner flight greyhound", namespace=NS, filters={"topic": "food"})
    assert [h.text for h in hits] == ["Dinner at Luigi's on Friday"]
    assert hits[0].metadata == {"topic": "food", "priority": 2}
    any_of = memory.search("dinner flight", namespace=NS, filters={"topic": ["food", "travel"]})
    assert {h.text for h in any_of} == {"Dinner at Luigi's on Friday", "Flight to Lisbon booked"}
    ops = memory.search("dinner flight", namespace=NS, filters={"topic": {"in": ["travel"]}})
    assert [h.text for h in ops] == ["Flight to Lisbon booked"]
    both = memory.search("dinner", namespace=NS, filters={"topic": {"eq": "food"}, "priority": 1})
    assert both == []


def test_search_filters_on_a_time_range(memory: Memory) -> None:
    window = {"gte": T0 + timedelta(days=1), "lt": (T0 + timedelta(days=2)).isoformat()}
    hits = memory.search("Luigi flight greyhound", namespace=NS, filters={"occurred_at": window})
    assert [h.text for h in hits] == ["Dinner at Luigi's on Friday"]


def test_search_filters_never_reach_another_namespace(memory: Memory) -> None:
    hits = memory.search("Luigi's restaurant", namespace=NS, filters={"topic": "food"})
    assert hits and all(h.id in {r.id for r in memory.store.get("raw", NS)} for h in hits)
    assert "favourite" not in " ".join(h.text for h in hits)


def test_threshold_keeps_only_similar_memories(memory: Memory) -> None:
    query = "Flight to Lisbon booked"
    everything = memory.search(query, namespace=NS, granularities=["raw"])
    sims = [h.similarity for h in everything]
    assert len(everything) == 3 and all(s is not None for s in sims)
    assert everything[0].text == query and sims[0] == max(sims)  # type: ignore[type-var]
    ranked = sorted((s or 0.0 for s in sims), reverse=True)
    top = memory.search(query, namespace=NS, granularities=["raw"], threshold=ranked[0] - 1e-6)
    assert [h.text for h in top] == [query]
    two = memory.search(query, namespace=NS, granularities=["raw"], threshold=ranked[1] - 1e-6)
    assert len(two) == 2 and all((h.similarity or 0) >= ranked[1] - 1e-6 for h in two)
    assert memory.search(query, namespace=NS, threshold=1.0) == []


def test_threshold_computes_the_similarity_of_a_lexical_only_hit(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = memory.store
    original = store.search

    def lexical_only(*args: Any, **kwargs: Any) -> Any:
        hits = original(*args, **kwargs)
        return [h.__class__(h.record, h.score, h.ranks, {}) for h in hits]  # no dense score

    monkeypatch.setattr(store, "search", lexical_only)
    hits = memory.search("Flight to Lisbon", namespace=NS, granularities=["raw"], threshold=0.5)
    assert [h.text for h in hits] == ["Flight to Lisbon booked"]
    assert hits[0].similarity is not None and hits[0].similarity >= 0.5


def test_top_k_is_k(memory: Memory) -> None:
    assert len(memory.search("Alice", namespace=NS, top_k=2)) == 2
    assert len(memory.search("Alice", namespace=NS, k=1)) == 1


# ------------------------------------------------------------------ get_all
def test_get_all_lists_current_memories_oldest_first(
    memory: Memory, store: ChromaMemoryStore
) -> None:
    texts = [r.text for r in memory.get_all(namespace=NS)]
    assert texts == [
        "I adopted a greyhound called Biscuit",
        "Alice lives in Paris",
        "Dinner at Luigi's on Friday",
        "Flight to Lisbon booked",
    ]
    memory.update("f-old", "Alice lives in Rome", namespace=NS)
    facts = memory.get_all(namespace=NS, granularities=["fact"])
    assert [f.text for f in facts] == ["Alice lives in Rome"]  # the superseded one is history
    assert [r.text for r in memory.get_all(namespace=NS, limit=1)] == ["Flight to Lisbon booked"]
    food = memory.get_all(namespace=NS, filters={"topic": "food"})
    assert [r.text for r in food] == ["Dinner at Luigi's on Friday"]
    window = {"occurred_at": {"lt": T0 + timedelta(hours=1)}}
    assert [r.text for r in memory.get_all(namespace=NS, filters=window, granularities="raw")] == [
        "I adopted a greyhound called Biscuit"
    ]
    assert [r.text for r in memory.get_all(namespace=OTHER)] == [
        "Luigi's is my favourite restaurant"
    ]
    assert memory.get_all(namespace="user:nobody") == []


# ------------------------------------------------------------------- update
def test_update_supersedes_a_fact_and_keeps_the_old_one(
    memory: Memory, store: ChromaMemoryStore
) -> None:
    result = memory.update("f-old", "Alice lives in Rome", namespace=NS)
    assert result.action == "superseded" and result.previous_id == "f-old"
    assert result.id != "f-old" and result.granularity == "fact"
    [old] = store.get("fact", NS, ["f-old"])
    assert isinstance(old, FactRecord)
    assert old.text == "Alice lives in Paris" and old.superseded_by == result.id
    texts = [h.text for h in memory.search("Alice lives", namespace=NS, granularities=["fact"])]
    assert texts == ["Alice lives in Rome"]
    # the change takes effect at the conversation's newest turn, not at the clock time
    assert old.valid_to == T0 + timedelta(days=2)
    before = T0 + timedelta(days=2) - timedelta(seconds=1)
    then = memory.search("Alice lives", namespace=NS, granularities=["fact"], as_of=before)
    assert [h.text for h in then] == ["Alice lives in Paris"]
    for memory_id in ("f-old", result.id):
        history = memory.history(memory_id, namespace=NS)
        assert [(e.action, e.after) for e in history if e.action == "add"] == [
            ("add", "Alice lives in Paris"),
            ("add", "Alice lives in Rome"),
        ]  # every version, as stored
        [entry] = [e for e in history if e.action != "add"]
        assert (entry.action, entry.before, entry.after) == (
            "supersede",
            "Alice lives in Paris",
            "Alice lives in Rome",
        )
        assert entry.id == result.audit_id
    with pytest.raises(InvalidInputError, match="already superseded"):
        memory.update("f-old", "Alice lives in Oslo", namespace=NS)


def test_update_revises_a_verbatim_turn_in_place_and_audits_the_old_text(
    memory: Memory, store: ChromaMemoryStore
) -> None:
    rid = raw_id(store, NS, "Flight to Lisbon booked")
    result = memory.update(rid, "Flight to Porto booked for next Friday", namespace=NS)
    assert (result.action, result.id, result.granularity) == ("revised", rid, "raw")
    [record] = store.get("raw", NS, [rid])
    assert isinstance(record, RawTurn)
    assert record.text == "Flight to Porto booked for next Friday"
    assert record.metadata == {"topic": "travel", "priority": 1} and record.trivial
    assert [t.expression for t in record.time_refs] == ["next Friday"]
    added, entry = memory.history(rid, namespace=NS)
    assert (added.action, added.after) == ("add", "Flight to Lisbon booked")  # as stored
    assert (entry.before, entry.after) == (
        "Flight to Lisbon booked",
        "Flight to Porto booked for next Friday",
    )
    assert [h.id for h in memory.search("Porto", namespace=NS, k=1)] == [rid]


def test_update_revises_an_episode_in_place(memory: Memory, store: ChromaMemoryStore) -> None:
    store.add(
        NS,
        [
            EpisodeRecord(
                id="e-1", namespace=NS, title="Trip", text="Alice flew to Lisbon.", occurred_at=T0
            )
        ],
    )
    result = memory.update("e-1", "Alice flew to Porto.", namespace=NS)
    assert (result.action, result.id, result.granularity) == ("revised", "e-1", "episode")
    [episode] = store.get("episode", NS, ["e-1"])
    assert isinstance(episode, EpisodeRecord)
    assert (episode.title, episode.text) == ("Trip", "Alice flew to Porto.")
    added, entry = memory.history("e-1", namespace=NS)
    assert (added.action, added.after) == ("add", "Alice flew to Lisbon.")  # as stored
    assert (entry.action, entry.before) == ("update", "Alice flew to Lisbon.")
    assert [h.id for h in memory.search("Porto", namespace=NS, granularities=["episode"])] == [
        "e-1"
    ]


def test_update_with_the_same_text_changes_nothing(
    memory: Memory, store: ChromaMemoryStore
) -> None:
    before = snapshot(store)
    result = memory.update("f-old", "Alice lives in Paris", namespace=NS)
    assert result.action == "unchanged" and result.audit_id is None
    assert snapshot(store) == before


def test_update_refuses_a_turn_that_memories_were_derived_from(
    memory: Memory, store: ChromaMemoryStore
) -> None:
    rid = raw_id(store, NS, "I adopted a greyhound called Biscuit")
    store.add(
        NS,
        [
            FactRecord(
                id="f-dog",
                namespace=NS,
                text="Alice has a greyhound",
                occurred_at=T0,
                source_ids=[rid],
            )
        ],
    )
    before = snapshot(store)
    with pytest.raises(InvalidInputError, match=r"derived from it \(f-dog\); update those"):
        memory.update(rid, "I adopted a cat", namespace=NS)
    assert snapshot(store) == before


@pytest.mark.parametrize("failing", ["add", "mark_superseded"])
def test_a_failing_fact_update_restores_the_store(
    memory: Memory, store: ChromaMemoryStore, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    before = snapshot(store)

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise OSError("disk full")

    # the new fact's write fails, or the supersede (which carries the audit entry) does
    # after the new fact was written
    monkeypatch.setattr(store, failing, broken)
    with pytest.raises(OSError, match="disk full"):
        memory.update("f-old", "Alice lives in Rome", namespace=NS)
    monkeypatch.undo()
    assert snapshot(store) == before


def test_a_failing_revision_restores_the_turn(
    memory: Memory, store: ChromaMemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    rid = raw_id(store, NS, "Flight to Lisbon booked")
    before = snapshot(store)

    def broken(entry: Any) -> Any:
        raise OSError("disk full")

    monkeypatch.setattr(store, "append_audit", broken)
    with pytest.raises(OSError):
        memory.update(rid, "Flight to Porto booked", namespace=NS)
    monkeypatch.undo()
    assert snapshot(store) == before


# ------------------------------------------------------- delete, delete_all
def test_delete_forgets_a_memory_and_its_earlier_versions(
    memory: Memory, store: ChromaMemoryStore
) -> None:
    newest = memory.update("f-old", "Alice lives in Rome", namespace=NS).id
    other_before = snapshot(store)[f"{OTHER}/raw"]
    result = memory.delete(newest, namespace=NS)
    assert sorted(result.deleted["fact"]) == sorted(["f-old", newest])
    assert store.get("fact", NS) == []
    assert all("Paris" not in (e.before or "") for e in store.list_audit(NS))  # redacted
    assert snapshot(store)[f"{OTHER}/raw"] == other_before
    assert store.count("raw", NS) == 3


def test_delete_all_refuses_without_a_namespace(memory: Memory, store: ChromaMemoryStore) -> None:
    before = snapshot(store)
    with pytest.raises(NamespaceError, match=r"delete_all\(\) needs namespace=.*nothing was"):
        memory.delete_all()
    with pytest.raises(NamespaceError, match="delete_all"):
        memory.delete_all(namespace=None)
    with pytest.raises(NamespaceError, match="empty string"):
        memory.delete_all(namespace="")
    with pytest.raises(NamespaceError, match="invalid namespace"):
        memory.delete_all(namespace="*")
    with pytest.raises(TypeError):
        memory.delete_all(NS)  # type: ignore[misc]
    assert snapshot(store) == before


def test_delete_all_wipes_exactly_one_namespace(memory: Memory, store: ChromaMemoryStore) -> None:
    other = snapshot(store)
    result = memory.delete_all(namespace=NS)
    assert result.count == 4 and result.tombstone_ids
    assert memory.get_all(namespace=NS) == []
    after = snapshot(store)
    for key in other:
        if not key.startswith(f"{NS}/"):
            assert after[key] == other[key], key


# ------------------------------------------------------------- bad input
Call = Callable[[Memory], Any]

BAD: list[tuple[str, Call, type[Exception], str]] = [
    # add(metadata=, infer=)
    (
        "metadata None value",
        lambda m: m.add("x", namespace=NS, metadata={"a": None}),
        InvalidTypeError,
        r"metadata\['a'\] is None; JSON null cannot be stored",
    ),
    (
        "metadata nested dict",
        lambda m: m.add("x", namespace=NS, metadata={"a": {"b": 1}}),
        InvalidTypeError,
        r"metadata\['a'\] must be a str, int, float or bool, got dict",
    ),
    (
        "metadata list",
        lambda m: m.add("x", namespace=NS, metadata={"tags": ["a", "b"]}),
        InvalidTypeError,
        "got list; store a list as a comma-separated str",
    ),
    (
        "metadata nan",
        lambda m: m.add("x", namespace=NS, metadata={"a": float("nan")}),
        InvalidInputError,
        "not a JSON number",
    ),
    (
        "metadata huge int",
        lambda m: m.add("x", namespace=NS, metadata={"a": 2**70}),
        InvalidInputError,
        "does not fit in 64 bits",
    ),
    (
        "metadata int key",
        lambda m: m.add("x", namespace=NS, metadata={1: "a"}),
        InvalidTypeError,
        "metadata keys must be str, got int",
    ),
    (
        "metadata blank key",
        lambda m: m.add("x", namespace=NS, metadata={" ": "a"}),
        InvalidInputError,
        "metadata keys must be 1-256 characters",
    ),
    (
        "metadata reserved key",
        lambda m: m.add("x", namespace=NS, metadata={"occurred_at": "now"}),
        InvalidInputError,
        "reserved for the time range",
    ),
    (
        "metadata not a dict",
        lambda m: m.add("x", namespace=NS, metadata="topic=food"),
        InvalidTypeError,
        "metadata must be a dict of str to str, int, float or bool, got str",
    ),
    (
        "metadata in a turn",
        lambda m: m.add({"role": "user", "content": "x", "metadata": {"a": [1]}}, namespace=NS),
        InvalidInputError,
        "not a valid turn",
    ),
    (
        "infer not a bool",
        lambda m: m.add("x", namespace=NS, infer="no"),
        InvalidTypeError,
        "infer must be a bool, got str",
    ),
    (
        "infer false, bad namespace",
        lambda m: m.add("x", namespace="", infer=False),
        NamespaceError,
        "namespace is an empty string",
    ),
    (
        "infer false, empty text",
        lambda m: m.add("", namespace=NS, infer=False),
        InvalidInputError,
        "has no text",
    ),
    # search(filters=, top_k=, threshold=)
    (
        "filters not a dict",
        lambda m: m.search("x", namespace=NS, filters=[("topic", "food")]),
        InvalidTypeError,
        "filters must be a dict of metadata key to value, got list",
    ),
    (
        "filters unsupported operator",
        lambda m: m.search("x", namespace=NS, filters={"priority": {"gt": 1}}),
        InvalidInputError,
        "the operators are 'eq' and 'in'",
    ),
    (
        "filters logical key",
        lambda m: m.search("x", namespace=NS, filters={"OR": [{"topic": "a"}]}),
        InvalidInputError,
        "always combined with AND",
    ),
    (
        "filters empty list",
        lambda m: m.search("x", namespace=NS, filters={"topic": []}),
        InvalidInputError,
        "empty list; it would match nothing",
    ),
    (
        "filters None value",
        lambda m: m.search("x", namespace=NS, filters={"topic": None}),
        InvalidTypeError,
        r"filters\['topic'\] is None",
    ),
    (
        "filters naive time",
        lambda m: m.search(
            "x", namespace=NS, filters={"occurred_at": {"gte": datetime(2024, 1, 1)}}
        ),
        InvalidInputError,
        "has no timezone",
    ),
    (
        "filters bad time string",
        lambda m: m.search("x", namespace=NS, filters={"occurred_at": {"gte": "last week"}}),
        InvalidInputError,
        "not an ISO 8601 time",
    ),
    (
        "filters unknown time operator",
        lambda m: m.search("x", namespace=NS, filters={"occurred_at": {"lte": T0}}),
        InvalidInputError,
        r"must be a dict with 'gte' \(inclusive start\) and/or 'lt'",
    ),
    (
        "filters empty time range",
        lambda m: m.search(
            "x", namespace=NS, filters={"occurred_at": {"gte": T0, "lt": T0 - timedelta(1)}}
        ),
        InvalidInputError,
        "empty time window",
    ),
    (
        "threshold above one",
        lambda m: m.search("x", namespace=NS, threshold=1.5),
        InvalidInputError,
        "minimum cosine similarity between 0 and 1, got 1.5",
    ),
    (
        "threshold a str",
        lambda m: m.search("x", namespace=NS, threshold="0.5"),
        InvalidTypeError,
        "threshold must be a float between 0 and 1, got str",
    ),
    (
        "k and top_k",
        lambda m: m.search("x", namespace=NS, k=3, top_k=5),
        InvalidInputError,
        "give k or top_k, not both",
    ),
    (
        "top_k zero",
        lambda m: m.search("x", namespace=NS, top_k=0),
        InvalidInputError,
        "top_k must be a positive int",
    ),
    # get_all
    (
        "get_all no namespace",
        lambda m: m.get_all(namespace=""),
        NamespaceError,
        "namespace is an empty string",
    ),
    (
        "get_all bad limit",
        lambda m: m.get_all(namespace=NS, limit=0),
        InvalidInputError,
        "limit must be a positive int",
    ),
    (
        "get_all bad filters",
        lambda m: m.get_all(namespace=NS, filters={"topic": {"ne": "x"}}),
        InvalidInputError,
        "the operators are 'eq' and 'in'",
    ),
    (
        "get_all bad granularity",
        lambda m: m.get_all(namespace=NS, granularities=["facts"]),
        InvalidInputError,
        "unknown granularity 'facts'",
    ),
    # update
    (
        "update unknown id",
        lambda m: m.update("nope", "x", namespace=NS),
        RecordNotFoundError,
        "no memory 'nope' in namespace 'user:alice'",
    ),
    (
        "update another namespace's id",
        lambda m: m.update(
            raw_id(m.store, OTHER, "Luigi's is my favourite restaurant"), "x", namespace=NS
        ),
        RecordNotFoundError,
        "in namespace 'user:alice'",
    ),
    (
        "update empty text",
        lambda m: m.update("f-old", "   ", namespace=NS),
        InvalidInputError,
        "text is an empty string",
    ),
    (
        "update bytes text",
        lambda m: m.update("f-old", b"Rome", namespace=NS),
        InvalidTypeError,
        "text must be a str, got bytes",
    ),
    (
        "update int id",
        lambda m: m.update(7, "x", namespace=NS),
        InvalidTypeError,
        "memory_id must be a str, got int",
    ),
    (
        "update bad namespace",
        lambda m: m.update("f-old", "x", namespace="bad namespace"),
        NamespaceError,
        "invalid namespace",
    ),
    # delete
    (
        "delete unknown id",
        lambda m: m.delete("nope", namespace=NS),
        RecordNotFoundError,
        "no memory 'nope'",
    ),
    (
        "delete another namespace's id",
        lambda m: m.delete(
            raw_id(m.store, OTHER, "Luigi's is my favourite restaurant"), namespace=NS
        ),
        RecordNotFoundError,
        "in namespace 'user:alice'",
    ),
    (
        "delete list of ids",
        lambda m: m.delete(["f-old"], namespace=NS),
        InvalidTypeError,
        "memory_id must be a str, got list",
    ),
    (
        "delete empty id",
        lambda m: m.delete("", namespace=NS),
        InvalidInputError,
        "memory_id is an empty string",
    ),
    # delete_all
    (
        "delete_all int namespace",
        lambda m: m.delete_all(namespace=7),
        NamespaceError,
        "namespace must be a str",
    ),
]


@pytest.mark.parametrize(("name", "call", "error", "message"), BAD, ids=[b[0] for b in BAD])
def test_bad_input_is_refused_and_nothing_stored_changes(
    memory: Memory, store: ChromaMemoryStore, name: str, call: Call, error: type, message: str
) -> None:
    before = snapshot(store)
    with pytest.raises(error, match=message):
        call(memory)
    assert snapshot(store) == before


# ------------------------------------------------------------- isolation
def test_every_new_method_stays_in_its_namespace(memory: Memory, store: ChromaMemoryStore) -> None:
    bob = raw_id(store, OTHER, "Luigi's is my favourite restaurant")
    alice = {r.id for g in Granularity for r in store.get(g, NS)}
    assert all(r.namespace == NS for r in memory.get_all(namespace=NS))
    hits = memory.search("Luigi's favourite restaurant", namespace=NS, top_k=50, threshold=0.0)
    assert hits and {h.id for h in hits} <= alice
    memory.update(
        raw_id(store, NS, "Dinner at Luigi's on Friday"), "Lunch at Luigi's", namespace=NS
    )
    memory.delete("f-old", namespace=NS)
    memory.delete_all(namespace=NS)
    [kept] = store.get("raw", OTHER)
    assert kept.id == bob and kept.text == "Luigi's is my favourite restaurant"
    assert store.list_audit(OTHER) == []
    assert memory.get_all(namespace=OTHER, filters={"topic": "food"})[0].id == bob


def test_async_twins(memory: Memory, store: ChromaMemoryStore) -> None:
    async def scenario() -> tuple[Any, ...]:
        added = await memory.aadd("async note", namespace=NS, infer=False, metadata={"k": 1})
        found = await memory.asearch("async note", namespace=NS, filters={"k": 1}, top_k=1)
        listed = await memory.aget_all(namespace=NS, filters={"k": 1})
        updated = await memory.aupdate(added.new_raw_ids[0], "async note 2", namespace=NS)
        deleted = await memory.adelete(added.new_raw_ids[0], namespace=NS)
        wiped = await memory.adelete_all(namespace=NS)
        return added, found, listed, updated, deleted, wiped

    added, found, listed, updated, deleted, wiped = asyncio.run(scenario())
    assert [h.id for h in found] == added.new_raw_ids == [r.id for r in listed]
    assert updated.action == "revised"
    assert deleted.deleted == {"raw": added.new_raw_ids}
    assert wiped.count == 4 and store.count("raw", OTHER) == 1


def test_results_serialise(memory: Memory) -> None:
    result = memory.update("f-old", "Alice lives in Rome", namespace=NS)
    assert json.loads(result.model_dump_json())["action"] == "superseded"
