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

from lamina import Memory
from lamina.errors import (
    InvalidInputError,
    InvalidTypeError,
    NamespaceError,
    RecordNotFoundError,
)
from lamina.records import Granularity
from lamina.stores import ChromaMemoryStore
from lamina.testing import FakeEmbeddings, SchemaChatModel, store_snapshot

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
    return store_snapshot(memory.store, (NS, OTHER, NEW))


Call = Callable[[Memory], Any]
Case = tuple[str, Call, type[Exception], str]


def wrong_type(name: str, method: str, *args: object, must_be: str, **keyword: object) -> Case:
    """A case: ``method(*args, namespace=NS, **keyword)`` with one keyword of a wrong type.

    The error names the keyword, the types it accepts (``must_be``) and the type it got.
    """
    ((key, value),) = keyword.items()
    message = f"{key} must be {must_be}, got {type(value).__name__}"
    return (
        name,
        lambda m: getattr(m, method)(*args, namespace=NS, **keyword),
        InvalidTypeError,
        message,
    )


ERRORS: list[Case] = [
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
    wrong_type(
        "add str time", "add", "hi", at="2024-05-08", must_be="a timezone-aware datetime or None"
    ),
    wrong_type("add int speaker", "add", "hi", speaker=3, must_be="a str"),
    wrong_type("add str session_closed", "add", "hi", session_closed="yes", must_be="a bool"),
    (
        "add verbatim with an unknown consolidate",  # infer=False used to store it anyway
        lambda m: m.add("hi", namespace=NS, infer=False, consolidate="later"),  # type: ignore[arg-type]
        InvalidInputError,
        "consolidate must be one of",
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
    wrong_type("search str k", "search", "dog", k="5", must_be="an int"),
    wrong_type(
        "search dict window", "search", "dog", window={"after": T0}, must_be="a TimeWindow .*"
    ),
    wrong_type(
        "search int granularities",
        "search",
        "dog",
        granularities=3,
        must_be="a list of 'raw', 'fact', 'episode', 'scene' or None",
    ),
    (
        "search no granularity",  # an empty list used to search all four
        lambda m: m.search("dog", namespace=NS, granularities=[]),
        InvalidInputError,
        "granularities must name at least one granularity",
    ),
    (
        "get_all no granularity",
        lambda m: m.get_all(namespace=NS, granularities=()),
        InvalidInputError,
        "granularities must name at least one granularity",
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
    wrong_type("inspect str limit", "inspect", limit="3", must_be="an int"),
    wrong_type("inspect int granularity", "inspect", granularity=2, must_be="a str"),
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
    # ------------------------------------------- text that is not valid (a lone surrogate)
    (
        "update surrogate text",  # was a bare pydantic ValidationError
        lambda m: m.update(m.store.get("raw", NS)[0].id, "bad \ud800", namespace=NS),
        InvalidInputError,
        "text holds a lone UTF-16 surrogate",
    ),
    (
        "update surrogate id",
        lambda m: m.update("x\ud800", "new text", namespace=NS),
        InvalidInputError,
        "memory_id holds a lone UTF-16 surrogate",
    ),
    (
        "delete surrogate id",  # was a UnicodeEncodeError
        lambda m: m.delete("x\ud800", namespace=NS),
        InvalidInputError,
        "memory_id holds a lone UTF-16 surrogate",
    ),
    (
        "history surrogate id",
        lambda m: m.history("x\ud800", namespace=NS),
        InvalidInputError,
        "memory_id holds a lone UTF-16 surrogate",
    ),
    (
        "forget surrogate id",
        lambda m: m.forget(namespace=NS, memory_ids=["x\ud800"]),
        InvalidInputError,
        r"memory_ids\[0\] holds a lone UTF-16 surrogate",
    ),
    (
        "forget surrogate subject",  # was accepted: a tombstone was written
        lambda m: m.forget(namespace=NS, subject="Biscuit \ud800"),
        InvalidInputError,
        "subject holds a lone UTF-16 surrogate",
    ),
    (
        "answer surrogate window line",  # was handed to the chat model
        lambda m: m.answer("what?", namespace=NS, window=["fine", "bad \ud800"]),
        InvalidInputError,
        r"window\[1\] holds a lone UTF-16 surrogate",
    ),
    (
        "get_all surrogate filter value",  # was chromadb's InvalidArgumentError
        lambda m: m.get_all(namespace=NS, filters={"pet": "dog \ud800"}),
        InvalidInputError,
        r"filters\['pet'\] holds a lone UTF-16 surrogate",
    ),
    (
        "search surrogate filter key",
        lambda m: m.search("dog", namespace=NS, filters={"p\ud800": 1}),
        InvalidInputError,
        "filters key .* holds a lone UTF-16 surrogate",
    ),
    (
        "add surrogate instructions",  # was stored and handed to the chat model
        lambda m: m.add("hi", namespace=NS, instructions="keep pets \ud800"),
        InvalidInputError,
        "instructions hold a lone UTF-16 surrogate",
    ),
    (
        "add background surrogate instructions",  # was stored in the pending mark
        lambda m: m.add("hi", namespace=NS, instructions="keep \ud800", consolidate="background"),
        InvalidInputError,
        "instructions hold a lone UTF-16 surrogate",
    ),
    # ------------------------------------------- an int no float holds (was an OverflowError)
    (
        "add ttl past any float",
        lambda m: m.add("hi", namespace=NS, infer=False, ttl=10**400),
        InvalidInputError,
        "ttl of inf s is longer than 365000 days",
    ),
    (
        "add ttl below any float",
        lambda m: m.add("hi", namespace=NS, infer=False, ttl=-(10**400)),
        InvalidInputError,
        "ttl must be positive",
    ),
    (
        "set_default_ttl past any float",
        lambda m: m.set_default_ttl(NS, 10**400),
        InvalidInputError,
        "longer than 365000 days",
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
    wrong_type("forget int subject", "forget", subject=5, must_be="a str"),
    (
        "forget empty subject",
        lambda m: m.forget(namespace=NS, subject=""),
        InvalidInputError,
        "subject is an empty string",
    ),
    wrong_type("forget str all", "forget", all="yes", must_be="a bool"),
    (
        "forget empty namespace",
        lambda m: m.forget(namespace="", all=True),
        NamespaceError,
        "empty string",
    ),
]


def params(cases: list[Case]) -> list[Any]:
    """The cases as ``(call, error, message)`` parameters, each with its name as id."""
    return [pytest.param(*case[1:], id=case[0]) for case in cases]


def raises_and_changes_nothing(
    memory: Memory, run: Callable[[], Any], error: type[Exception], message: str
) -> None:
    """``run()`` raises ``error`` matching ``message``, and the store stays as it was."""
    before = snapshot(memory)
    with pytest.raises(error, match=message):
        run()
    assert snapshot(memory) == before


@pytest.mark.parametrize(("call", "error", "message"), params(ERRORS))
def test_bad_input_gets_a_clear_error_and_changes_nothing(
    memory: Memory, call: Call, error: type[Exception], message: str
) -> None:
    raises_and_changes_nothing(memory, lambda: call(memory), error, message)


ASYNC: list[Case] = [
    ("aadd bytes", lambda m: m.aadd(b"x", namespace=NS), InvalidTypeError, "got bytes"),
    ("aadd empty", lambda m: m.aadd("", namespace=NS), InvalidInputError, "has no text"),
    (
        "aadd unknown keyword",
        lambda m: m.aadd("x", namespace=NS, sesion_id="s1"),  # type: ignore[call-arg]
        InvalidTypeError,
        "unexpected keyword argument 'sesion_id'",
    ),
    (
        "aadd verbatim with an unknown consolidate",
        lambda m: m.aadd("x", namespace=NS, infer=False, consolidate="later"),  # type: ignore[typeddict-item]
        InvalidInputError,
        "consolidate must be one of",
    ),
    ("asearch int", lambda m: m.asearch(1, namespace=NS), InvalidTypeError, "got int"),
    (
        "asearch no granularity",
        lambda m: m.asearch("dog", namespace=NS, granularities=[]),
        InvalidInputError,
        "at least one granularity",
    ),
    (
        "aget_all no granularity",
        lambda m: m.aget_all(namespace=NS, granularities=[]),
        InvalidInputError,
        "at least one granularity",
    ),
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
        "aforget surrogate subject",
        lambda m: m.aforget(namespace=NS, subject="Biscuit \ud800"),
        InvalidInputError,
        "subject holds a lone UTF-16 surrogate",
    ),
    (
        "aupdate surrogate text",
        lambda m: m.aupdate(m.store.get("raw", NS)[0].id, "bad \ud800", namespace=NS),
        InvalidInputError,
        "text holds a lone UTF-16 surrogate",
    ),
    (
        "aanswer surrogate window line",
        lambda m: m.aanswer("what?", namespace=NS, window=["bad \ud800"]),
        InvalidInputError,
        r"window\[0\] holds a lone UTF-16 surrogate",
    ),
    (
        "aget_all surrogate filter value",
        lambda m: m.aget_all(namespace=NS, filters={"pet": ["cat", "dog \ud800"]}),
        InvalidInputError,
        r"filters\['pet'\]\[1\] holds a lone UTF-16 surrogate",
    ),
    (
        "aforget str ids",
        lambda m: m.aforget(namespace=NS, memory_ids="nope"),
        InvalidTypeError,
        "single str",
    ),
]


@pytest.mark.parametrize(("call", "error", "message"), params(ASYNC))
def test_async_twins_reject_the_same_input(
    memory: Memory, call: Call, error: type[Exception], message: str
) -> None:
    raises_and_changes_nothing(memory, lambda: asyncio.run(call(memory)), error, message)


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"timeout": "5"}, InvalidTypeError, "timeout must be a number of seconds or None"),
        ({"timeout": float("nan")}, InvalidTypeError, "timeout must be a number"),
        ({"namespace": ""}, NamespaceError, "namespace is an empty string"),
        ({"namespace": 7}, NamespaceError, "got int"),
    ],
)
def test_flush_refuses_bad_arguments_before_starting_the_worker(
    memory: Memory, options: dict[str, Any], error: type[Exception], message: str
) -> None:
    """flush() and aflush() check their arguments first: a bad one used to start the
    background worker (which then failed on it) or raise a bare TypeError."""
    with pytest.raises(error, match=message):
        memory.flush(**options)
    with pytest.raises(error, match=message):
        asyncio.run(memory.aflush(**options))
    assert memory._worker is None


def test_flush_with_a_timeout_past_any_float_waits_as_none_does(memory: Memory) -> None:
    memory.flush(timeout=10**400)  # was an OverflowError (nothing is pending)
    asyncio.run(memory.aflush(timeout=10**400))


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


def test_a_memory_that_never_changed_has_its_version_as_its_history(memory: Memory) -> None:
    record = memory.store.get("raw", NS)[0]
    (added,) = memory.history(record.id, namespace=NS)  # was [] (issue 64)
    assert (added.action, added.target_id, added.after) == ("add", record.id, record.text)
    assert added.at == record.recorded_at and added.before is None


def test_a_forgotten_id_keeps_its_tombstone_in_history(memory: Memory) -> None:
    raw_id = memory.store.get("raw", NS)[0].id
    memory.forget(namespace=NS, memory_ids=[raw_id])
    (tombstone,) = memory.history(raw_id, namespace=NS)
    assert tombstone.action == "forget"
    with pytest.raises(RecordNotFoundError):  # gone: forgetting it again is an error
        memory.forget(namespace=NS, memory_ids=[raw_id])
