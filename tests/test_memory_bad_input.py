"""Bad input to every ``Memory`` method: a clear error, and nothing stored changes.

For each facade method (and its async twin) the matrix tries a wrong type, an empty
string, an unknown namespace and an unknown id:

| method | wrong type | empty string | unknown namespace | unknown id |
|---|---|---|---|---|
| add | bytes, int, None | "" text, "" namespace | stored there only | - (no id) |
| search | int query, str k | "" query | empty list | - |
| answer | bytes question, window of ints | "" question | refusal, no error | - |
| history | int id | "" id | not found | not found |
| profile | int namespace | "" namespace | None | - |
| inspect | int limit, int granularity | "" granularity | empty lists | unknown granularity |
| forget | str memory_ids, int id | "" id | not found | not found, nothing deleted |

An error names the type it got and the types it accepts. After every call the store
(records of every granularity, profiles and audit entries of both namespaces) is compared
with a snapshot taken before.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from memstrata import Memory
from memstrata.errors import (
    InvalidInputError,
    InvalidTypeError,
    NamespaceError,
    RecordNotFoundError,
)
from memstrata.stores import ChromaMemoryStore, Granularity
from memstrata.testing import FakeEmbeddings, SchemaChatModel

NS = "user:alice"
OTHER = "user:bob"
NEW = "user:nobody"
T0 = datetime(2024, 5, 8, 18, 20, tzinfo=UTC)


@pytest.fixture
def memory() -> Memory:
    store = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    memory = Memory(store=store, chat_model=SchemaChatModel())
    memory.add("I adopted a greyhound called Biscuit", namespace=NS, speaker="Alice", at=T0)
    memory.add("My cat is called Tom", namespace=OTHER, speaker="Bob", at=T0)
    return memory


def snapshot(memory: Memory) -> dict[str, Any]:
    """Everything stored, per namespace: records, profile and audit log."""
    out: dict[str, Any] = {}
    for ns in (NS, OTHER, NEW):
        for gran in Granularity:
            out[f"{ns}/{gran.value}"] = sorted(
                r.model_dump_json() for r in memory.store.get(gran, ns)
            )
        profile = memory.store.get_profile(ns)
        out[f"{ns}/profile"] = profile.model_dump_json() if profile else None
        out[f"{ns}/audit"] = sorted(e.model_dump_json() for e in memory.store.list_audit(ns))
    return out


Call = Callable[[Memory], Any]

ERRORS: list[tuple[str, Call, type[Exception], str]] = [
    # ------------------------------------------------------------------ add
    (
        "add bytes",
        lambda m: m.add(b"hi", namespace=NS),  # type: ignore[arg-type]
        InvalidTypeError,
        r"add\(\) takes a str, a LangChain message, a dict with role/content .*got bytes "
        r"\(decode it first",
    ),
    (
        "add int",
        lambda m: m.add(42, namespace=NS),  # type: ignore[arg-type]
        InvalidTypeError,
        r"add\(\) takes a str, .*; got int",
    ),
    (
        "add None",
        lambda m: m.add(None, namespace=NS),  # type: ignore[arg-type]
        InvalidTypeError,
        r"got NoneType",
    ),
    ("add empty text", lambda m: m.add("", namespace=NS), InvalidInputError, "has no text"),
    ("add empty list", lambda m: m.add([], namespace=NS), InvalidInputError, "empty list"),
    (
        "add empty namespace",
        lambda m: m.add("hi", namespace=""),
        NamespaceError,
        "namespace is an empty string",
    ),
    (
        "add int namespace",
        lambda m: m.add("hi", namespace=7),  # type: ignore[arg-type]
        NamespaceError,
        "namespace must be a str .*got int",
    ),
    (
        "add str time",
        lambda m: m.add("hi", namespace=NS, at="2024-05-08"),  # type: ignore[arg-type]
        InvalidTypeError,
        "at must be a timezone-aware datetime or None, got str",
    ),
    (
        "add int speaker",
        lambda m: m.add("hi", namespace=NS, speaker=3),  # type: ignore[arg-type]
        InvalidTypeError,
        "speaker must be a str, got int",
    ),
    (
        "add str session_closed",
        lambda m: m.add("hi", namespace=NS, session_closed="yes"),  # type: ignore[arg-type]
        InvalidTypeError,
        "session_closed must be a bool, got str",
    ),
    # --------------------------------------------------------------- search
    (
        "search int query",
        lambda m: m.search(5, namespace=NS),  # type: ignore[arg-type]
        InvalidTypeError,
        "query must be a str, got int",
    ),
    (
        "search bytes query",
        lambda m: m.search(b"dog", namespace=NS),  # type: ignore[arg-type]
        InvalidTypeError,
        "query must be a str, got bytes; decode it first",
    ),
    ("search empty query", lambda m: m.search("", namespace=NS), InvalidInputError, "empty"),
    (
        "search str k",
        lambda m: m.search("dog", namespace=NS, k="5"),  # type: ignore[arg-type]
        InvalidTypeError,
        "k must be an int, got str",
    ),
    (
        "search dict window",
        lambda m: m.search("dog", namespace=NS, window={"after": T0}),  # type: ignore[arg-type]
        InvalidTypeError,
        "window must be a TimeWindow .*got dict",
    ),
    (
        "search int granularities",
        lambda m: m.search("dog", namespace=NS, granularities=3),  # type: ignore[arg-type]
        InvalidTypeError,
        "granularities must be a list of 'raw', 'fact', 'episode', 'scene' or None, got int",
    ),
    (
        "search empty namespace",
        lambda m: m.search("dog", namespace=""),
        NamespaceError,
        "empty string",
    ),
    # --------------------------------------------------------------- answer
    (
        "answer bytes question",
        lambda m: m.answer(b"what?", namespace=NS),  # type: ignore[arg-type]
        InvalidTypeError,
        "question must be a str, got bytes",
    ),
    (
        "answer empty question",
        lambda m: m.answer("  ", namespace=NS),
        InvalidInputError,
        "question is an empty string",
    ),
    (
        "answer window of ints",
        lambda m: m.answer("what?", namespace=NS, window=[1, 2]),  # type: ignore[list-item]
        InvalidTypeError,
        r"window\[0\] must be a str, got int",
    ),
    (
        "answer naive as_of",
        lambda m: m.answer("what?", namespace=NS, as_of=datetime(2024, 1, 1)),
        InvalidInputError,
        "as_of is a naive datetime",
    ),
    (
        "answer empty namespace",
        lambda m: m.answer("what?", namespace=""),
        NamespaceError,
        "empty string",
    ),
    # -------------------------------------------------------------- history
    (
        "history int id",
        lambda m: m.history(12, namespace=NS),  # type: ignore[arg-type]
        InvalidTypeError,
        "memory_id must be a str, got int",
    ),
    ("history empty id", lambda m: m.history("", namespace=NS), InvalidInputError, "empty"),
    (
        "history unknown id",
        lambda m: m.history("no-such-id", namespace=NS),
        RecordNotFoundError,
        "no memory 'no-such-id' in namespace 'user:alice'",
    ),
    (
        "history unknown namespace",
        lambda m: m.history(m.store.get("raw", NS)[0].id, namespace=NEW),
        RecordNotFoundError,
        "in namespace 'user:nobody'",
    ),
    (
        "history empty namespace",
        lambda m: m.history("x", namespace=""),
        NamespaceError,
        "empty string",
    ),
    # -------------------------------------------------------------- profile
    (
        "profile int namespace",
        lambda m: m.profile(namespace=1),  # type: ignore[arg-type]
        NamespaceError,
        "got int",
    ),
    ("profile empty namespace", lambda m: m.profile(namespace=""), NamespaceError, "empty"),
    # -------------------------------------------------------------- inspect
    (
        "inspect str limit",
        lambda m: m.inspect(namespace=NS, limit="3"),  # type: ignore[arg-type]
        InvalidTypeError,
        "limit must be an int, got str",
    ),
    (
        "inspect int granularity",
        lambda m: m.inspect(namespace=NS, granularity=2),  # type: ignore[arg-type]
        InvalidTypeError,
        "granularity must be a str, got int",
    ),
    (
        "inspect empty granularity",
        lambda m: m.inspect(namespace=NS, granularity=" "),
        InvalidInputError,
        "granularity is an empty string",
    ),
    (
        "inspect unknown granularity",
        lambda m: m.inspect(namespace=NS, granularity="memes"),
        InvalidInputError,
        "unknown granularity 'memes'; use one of: raw, fact, episode, scene",
    ),
    (
        "inspect empty namespace",
        lambda m: m.inspect(namespace=""),
        NamespaceError,
        "empty string",
    ),
    # --------------------------------------------------------------- forget
    (
        "forget str ids",
        lambda m: m.forget(namespace=NS, memory_ids="abc"),
        InvalidTypeError,
        r"memory_ids must be a list of str, got a single str; pass \['abc'\]",
    ),
    (
        "forget int id",
        lambda m: m.forget(namespace=NS, memory_ids=[1]),  # type: ignore[list-item]
        InvalidTypeError,
        r"memory_ids\[0\] must be a str, got int",
    ),
    (
        "forget empty id",
        lambda m: m.forget(namespace=NS, memory_ids=[""]),
        InvalidInputError,
        r"memory_ids\[0\] is an empty string",
    ),
    (
        "forget unknown id",
        lambda m: m.forget(namespace=NS, memory_ids=["no-such-id"]),
        RecordNotFoundError,
        "no memory 'no-such-id' in namespace 'user:alice'",
    ),
    (
        "forget a known and an unknown id",  # all or nothing: the known one stays
        lambda m: m.forget(namespace=NS, memory_ids=[m.store.get("raw", NS)[0].id, "nope"]),
        RecordNotFoundError,
        "no memory 'nope'",
    ),
    (
        "forget another namespace's id",
        lambda m: m.forget(namespace=NS, memory_ids=[m.store.get("raw", OTHER)[0].id]),
        RecordNotFoundError,
        "in namespace 'user:alice'",
    ),
    (
        "forget in an unknown namespace",
        lambda m: m.forget(namespace=NEW, memory_ids=[m.store.get("raw", NS)[0].id]),
        RecordNotFoundError,
        "in namespace 'user:nobody'",
    ),
    (
        "forget int subject",
        lambda m: m.forget(namespace=NS, subject=5),  # type: ignore[arg-type]
        InvalidTypeError,
        "subject must be a str, got int",
    ),
    (
        "forget empty subject",
        lambda m: m.forget(namespace=NS, subject=""),
        InvalidInputError,
        "subject is an empty string",
    ),
    (
        "forget str all",
        lambda m: m.forget(namespace=NS, all="yes"),  # type: ignore[arg-type]
        InvalidTypeError,
        "all must be a bool, got str",
    ),
    (
        "forget empty namespace",
        lambda m: m.forget(namespace="", all=True),
        NamespaceError,
        "empty string",
    ),
]


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [case[1:] for case in ERRORS],
    ids=[case[0] for case in ERRORS],
)
def test_bad_input_gets_a_clear_error_and_changes_nothing(
    memory: Memory, call: Call, error: type[Exception], message: str
) -> None:
    before = snapshot(memory)
    with pytest.raises(error, match=message):
        call(memory)
    assert snapshot(memory) == before


ASYNC: list[tuple[str, Call, type[Exception], str]] = [
    ("aadd bytes", lambda m: m.aadd(b"x", namespace=NS), InvalidTypeError, "got bytes"),
    ("aadd empty", lambda m: m.aadd("", namespace=NS), InvalidInputError, "has no text"),
    (
        "aadd unknown keyword",
        lambda m: m.aadd("x", namespace=NS, sesion_id="s1"),  # type: ignore[call-arg]
        InvalidTypeError,
        "unexpected keyword argument 'sesion_id'",
    ),
    ("asearch int", lambda m: m.asearch(1, namespace=NS), InvalidTypeError, "got int"),
    ("asearch empty", lambda m: m.asearch("", namespace=NS), InvalidInputError, "empty"),
    ("aanswer int", lambda m: m.aanswer(1, namespace=NS), InvalidTypeError, "got int"),
    ("aanswer empty", lambda m: m.aanswer("", namespace=NS), InvalidInputError, "empty"),
    (
        "ahistory unknown id",
        lambda m: m.ahistory("nope", namespace=NS),
        RecordNotFoundError,
        "no memory 'nope'",
    ),
    ("ahistory int", lambda m: m.ahistory(3, namespace=NS), InvalidTypeError, "got int"),
    ("aprofile empty", lambda m: m.aprofile(namespace=""), NamespaceError, "empty"),
    (
        "aforget unknown id",
        lambda m: m.aforget(namespace=NS, memory_ids=["nope"]),
        RecordNotFoundError,
        "no memory 'nope'",
    ),
    (
        "aforget str ids",
        lambda m: m.aforget(namespace=NS, memory_ids="nope"),
        InvalidTypeError,
        "single str",
    ),
]


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [case[1:] for case in ASYNC],
    ids=[case[0] for case in ASYNC],
)
def test_async_twins_reject_the_same_input(
    memory: Memory, call: Call, error: type[Exception], message: str
) -> None:
    before = snapshot(memory)
    with pytest.raises(error, match=message):
        asyncio.run(call(memory))
    assert snapshot(memory) == before


def test_reads_of_an_unknown_namespace_are_empty_and_change_nothing(memory: Memory) -> None:
    before = snapshot(memory)
    assert memory.search("greyhound", namespace=NEW) == []
    assert memory.inspect(namespace=NEW) == {g.value: [] for g in Granularity}
    assert memory.profile(namespace=NEW) is None
    result = memory.answer("What is my dog called?", namespace=NEW)
    assert result.refused and result.memories == []
    assert snapshot(memory) == before


def test_add_to_an_unknown_namespace_creates_it_and_touches_no_other(memory: Memory) -> None:
    before = snapshot(memory)
    result = memory.add("first words", namespace=NEW, at=T0)
    after = snapshot(memory)
    assert len(result.new_raw_ids) == 1
    changed = {key for key in after if after[key] != before[key]}
    assert changed == {f"{NEW}/raw"}


def test_a_known_id_without_history_is_an_empty_history_not_an_error(memory: Memory) -> None:
    raw_id = memory.store.get("raw", NS)[0].id
    assert memory.history(raw_id, namespace=NS) == []


def test_a_forgotten_id_keeps_its_tombstone_in_history(memory: Memory) -> None:
    raw_id = memory.store.get("raw", NS)[0].id
    memory.forget(namespace=NS, memory_ids=[raw_id])
    (tombstone,) = memory.history(raw_id, namespace=NS)
    assert tombstone.action == "forget"
    with pytest.raises(RecordNotFoundError):  # gone: forgetting it again is an error
        memory.forget(namespace=NS, memory_ids=[raw_id])
