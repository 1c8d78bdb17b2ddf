"""``Memory.add_facts``: facts given directly, stored with no LLM call, then update-checked.

The facts go through the Judge's update check exactly as constructed facts do: the
model is asked only about pairs it must decide, a confirmed pair supersedes the older
fact with an audit entry, and a failed check leaves both current and flagged for a
retry. No model is started when no pair needs one.
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from lamina import Memory, MemoryConfig
from lamina.agents.ingest.nodes.conflicts import PENDING, PENDING_KEY
from lamina.errors import InvalidInputError, InvalidTypeError, NamespaceError
from lamina.memory.given import GIVEN_KEY, FactInput
from lamina.records import FactRecord, Granularity
from lamina.stores import ChromaMemoryStore
from lamina.testing import FakeEmbeddings, SchemaChatModel

NS = "user:alice"
T0 = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)
CHECK = "SupersessionCheck"


def no_local_model(config: MemoryConfig) -> Any:
    raise AssertionError("add_facts started a model although no pair needed one")


def memory(model: SchemaChatModel | None = None, **context: Any) -> Memory:
    store = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    config = MemoryConfig(context=context) if context else MemoryConfig()
    if model is None:
        return Memory(config=config, store=store, local_server_factory=no_local_model)
    return Memory(config=config, store=store, chat_model=model)


def facts(m: Memory) -> dict[str, FactRecord]:
    found = m.store.get(Granularity.FACT, NS)
    return {f.text: f for f in found if isinstance(f, FactRecord)}


def test_facts_are_stored_as_given_with_no_model() -> None:
    m = memory()
    result = m.add_facts(
        [
            "Alice works at Acme as CTO",
            {"text": "Alice's daughter is called Zoe", "kind": "fact", "metadata": {"crm": 7}},
            FactInput(text="Alice prefers email", kind="preference"),
        ],
        namespace=NS,
        subject="Alice",
        valid_from=T0,
    )
    assert len(result.new_fact_ids) == 3 and result.llm_calls == [] and not result.failures
    stored = facts(m)
    cto = stored["Alice works at Acme as CTO"]
    assert cto.subject == "Alice" and cto.valid_from == T0 and cto.source_ids == []
    assert cto.metadata[GIVEN_KEY] == "given"
    assert stored["Alice's daughter is called Zoe"].metadata["crm"] == 7
    assert stored["Alice prefers email"].kind == "preference"


def test_the_same_fact_given_again_is_stored_once() -> None:
    m = memory()
    first = m.add_facts(["Alice works at Acme"], namespace=NS, subject="Alice", valid_from=T0)
    again = m.add_facts(["Alice  works at Acme"], namespace=NS, subject="Alice", valid_from=T0)
    assert again.new_fact_ids == [] and again.duplicate_fact_ids == first.new_fact_ids
    assert len(facts(m)) == 1


def test_a_cued_change_supersedes_without_a_model() -> None:
    m = memory()  # the default profile: English cues settle "moved to" with no model
    m.add_facts(["Alice lives in Boston"], namespace=NS, subject="Alice", valid_from=T0)
    later = T0 + timedelta(days=60)
    result = m.add_facts(["Alice moved to Denver"], namespace=NS, subject="Alice", valid_from=later)
    assert result.llm_calls == [] and not result.failures, "no model was needed"
    boston = facts(m)["Alice lives in Boston"]
    assert boston.superseded_by == result.new_fact_ids[0] and boston.valid_to == later
    assert [w.id for w in result.written] == [boston.id]
    history = m.history(boston.id, namespace=NS)
    assert [e.action for e in history if e.action != "add"] == ["supersede"]
    assert sorted(e.after or "" for e in history if e.action == "add") == [
        "Alice lives in Boston",
        "Alice moved to Denver",
    ]


def test_the_model_decides_the_pairs_it_must() -> None:
    model = SchemaChatModel()
    model.script(CHECK, json.dumps({"verdicts": [{"pair": "p1", "outdated": True}]}))
    m = memory(model)  # no update cues: every near pair goes to the model
    m.add_facts(["Alice works at the bakery"], namespace=NS, subject="Alice", valid_from=T0)
    result = m.add_facts(
        ["Alice is a nurse at St Mary's now"],
        namespace=NS,
        subject="Alice",
        valid_from=T0 + timedelta(days=30),
    )
    assert model.count(CHECK) == 1 and len(result.llm_calls) == 1
    assert facts(m)["Alice works at the bakery"].superseded_by == result.new_fact_ids[0]


def test_a_failed_check_keeps_both_facts_and_flags_a_retry() -> None:
    model = SchemaChatModel()
    model.script(CHECK, *["not json"] * 3)
    m = memory(model)
    m.add_facts(["Alice works at the bakery"], namespace=NS, subject="Alice", valid_from=T0)
    result = m.add_facts(
        ["Alice is a nurse now"], namespace=NS, subject="Alice", valid_from=T0 + timedelta(1)
    )
    assert result.failures and result.written == []
    stored = facts(m)
    assert all(f.superseded_by is None for f in stored.values())
    assert stored["Alice is a nurse now"].metadata[PENDING_KEY] == PENDING


@pytest.mark.parametrize(
    ("given", "kwargs", "error", "message"),
    [
        ("Alice works at Acme", {"subject": "Alice"}, InvalidTypeError, "list"),
        ([], {"subject": "Alice"}, InvalidInputError, "empty"),
        (["Works at Acme"], {}, InvalidInputError, r"facts\[0\] names no person"),
        ([{"text": ""}], {"subject": "Alice"}, InvalidInputError, r"facts\[0\]\.text"),
        ([{"txt": "x"}], {"subject": "Alice"}, InvalidInputError, r"facts\[0\]\.(txt|text)"),
        ([42], {"subject": "Alice"}, InvalidTypeError, r"facts\[0\] is a int"),
        (
            ["ok", {"text": "x", "valid_from": "2024-03-01T12:00:00"}],
            {"subject": "Alice"},
            InvalidInputError,
            r"facts\[1\]\.valid_from is a naive",
        ),
        # checked as add() checks them (were AttributeError, UnicodeEncodeError, TypeError,
        # or an error blaming facts[0] for the call's metadata)
        (["Alice likes tea"], {"subject": 5}, InvalidTypeError, "subject must be a str"),
        (["likes tea"], {"subject": "Al\ud800"}, InvalidInputError, r"facts\[0\] subject holds"),
        (
            ["ok", {"text": "likes tea", "subject": "Bo\ud800"}],
            {"subject": "Alice"},
            InvalidInputError,
            r"facts\[1\] subject holds a lone UTF-16 surrogate",
        ),
        (
            ["Alice likes tea"],
            {"subject": "Alice", "metadata": "tea"},
            InvalidTypeError,
            "metadata must be a dict",
        ),
        (
            ["Alice likes tea"],
            {"subject": "Alice", "metadata": {"tags": ["a", "b"]}},
            InvalidTypeError,
            r"metadata\['tags'\] must be a str, int, float or bool, got list",
        ),
        (
            ["Alice likes tea"],
            {"subject": "Alice", "metadata": {"occurred_at": "2024"}},
            InvalidInputError,
            "metadata key 'occurred_at' is reserved",
        ),
    ],
)
def test_bad_input_is_refused_before_anything_is_stored(
    given: Any, kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    m = memory()
    with pytest.raises(error, match=message):
        m.add_facts(given, namespace=NS, **kwargs)
    assert facts(m) == {}


def test_a_namespace_is_required() -> None:
    with pytest.raises(NamespaceError):
        memory().add_facts(["Alice works at Acme"], namespace="", subject="Alice")


def test_forget_by_subject_removes_a_given_fact() -> None:
    m = memory()
    m.add_facts(["Alice's door code is 4711"], namespace=NS, subject="Alice")
    m.forget(namespace=NS, subject="4711")
    assert facts(m) == {}


def test_the_async_twin_stores_the_same() -> None:
    m = memory()
    result = asyncio.run(m.aadd_facts(["Alice works at Acme"], namespace=NS, subject="Alice"))
    assert facts(m)["Alice works at Acme"].id == result.new_fact_ids[0]


def test_a_failing_supersede_is_reported_and_the_facts_stay(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    m = memory()
    m.add_facts(["Alice lives in Boston"], namespace=NS, subject="Alice", valid_from=T0)

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the store went away")

    monkeypatch.setattr(m.store, "mark_superseded", broken)
    result = m.add_facts(
        ["Alice moved to Denver"], namespace=NS, subject="Alice", valid_from=T0 + timedelta(60)
    )
    assert result.written == [] and [f.step for f in result.failures] == ["supersede"]
    assert set(facts(m)) == {"Alice lives in Boston", "Alice moved to Denver"}


def test_a_fact_whose_supersede_failed_is_judged_again_at_the_next_write(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The flag outlives a failed supersede (a kill there is the same), and the next
    add_facts checks the flagged fact again and supersedes what it replaces."""
    m = memory()
    m.add_facts(["Alice lives in Boston"], namespace=NS, subject="Alice", valid_from=T0)
    assert PENDING_KEY not in facts(m)["Alice lives in Boston"].metadata  # settled at once
    mark = m.store.mark_superseded

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the store went away")

    monkeypatch.setattr(m.store, "mark_superseded", broken)
    m.add_facts(
        ["Alice moved to Denver"], namespace=NS, subject="Alice", valid_from=T0 + timedelta(60)
    )
    assert facts(m)["Alice moved to Denver"].metadata[PENDING_KEY] == PENDING
    monkeypatch.setattr(m.store, "mark_superseded", mark)
    result = m.add_facts(["Alice likes tea"], namespace=NS, subject="Alice")
    stored = facts(m)
    assert stored["Alice lives in Boston"].superseded_by == stored["Alice moved to Denver"].id
    assert [w.action for w in result.written] == ["superseded"]
    assert all(PENDING_KEY not in f.metadata for f in stored.values())
