"""A superseded fact is valid until the new state's event time, never until the clock.

Every path that closes a fact runs with a clock years away from the conversation's
dates, so a ``valid_to`` taken from the clock could not pass for an event time.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from lamina.agents.common.deps import NodeDeps, StepLog
from lamina.agents.recall.refresher import _apply_edit, make_recall_refresher
from lamina.core.context import MemoryContext
from lamina.core.state import Candidate
from lamina.graphs.ingest import build_ingest_graph
from lamina.llm.structured import StructuredCaller
from lamina.memory.revision import supersede_fact, update_record
from lamina.records import FactRecord, RawTurn
from lamina.records.audit import AuditEntry
from lamina.stores import ChromaMemoryStore
from lamina.testing import FakeEmbeddings, SchemaChatModel

NS = "user:alice"
T0 = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)
CLOCK = datetime(2031, 7, 4, 9, 30, tzinfo=UTC)
"""The injected clock: years after every date in the data."""
UTC_ZONE = ZoneInfo("UTC")


def clock() -> datetime:
    return CLOCK


@pytest.fixture
def store(empty_store: ChromaMemoryStore) -> ChromaMemoryStore:
    """An empty store on each backend (Chroma, Postgres)."""
    return empty_store


def fact(fid: str, text: str, when: datetime, ns: str = NS, **kw: object) -> FactRecord:
    return FactRecord.model_validate(
        {
            "id": fid,
            "namespace": ns,
            "text": text,
            "subject": "Alice",
            "occurred_at": when,
            "valid_from": when,
            **kw,
        }
    )


def turn(ns: str, i: int, text: str, when: datetime) -> RawTurn:
    return RawTurn(
        namespace=ns, text=text, speaker="Alice", session_id="s1", turn_index=i, occurred_at=when
    )


def test_the_ingest_graph_closes_a_fact_at_the_new_turns_time(store) -> None:  # type: ignore[no-untyped-def]
    store.add(NS, [fact("boston", "Alice lives in Boston", T0 - timedelta(days=90))])
    model = SchemaChatModel()
    model.script("ConstructionLines", "T|Move\nS|Alice moved.\nF|t1|Alice|Alice moved to Denver.")
    model.script("SupersessionCheck", json.dumps({"verdicts": [{"pair": "p1", "outdated": True}]}))
    graph = build_ingest_graph(chat_model=model, store=store, clock=clock).compile()
    said = {"speaker": "Alice", "text": "I moved to Denver!", "occurred_at": T0, "session_id": "s"}
    graph.invoke(
        {"turns": [said], "session_closed": True},
        context=MemoryContext(namespace=NS, trigger_policy="session"),
    )
    (old,) = store.get("fact", NS, ["boston"])
    assert isinstance(old, FactRecord) and old.superseded_by is not None
    assert old.valid_to == T0 != CLOCK
    (entry,) = store.list_audit(NS)
    assert entry.at == CLOCK  # the audit records when memory changed
    assert entry.after is not None and entry.after.startswith(f"valid until {T0.isoformat()}")
    (new,) = store.get("fact", NS, [old.superseded_by])
    assert new.recorded_at == CLOCK and new.occurred_at == T0


def test_a_recall_refresh_closes_the_fact_at_the_evidence_time(store) -> None:  # type: ignore[no-untyped-def]
    ns = "default"  # the context a node gets without a runtime
    boston = fact("boston", "Alice lives in Boston", T0 - timedelta(days=90), ns=ns)
    store.add(ns, [boston])
    model = SchemaChatModel()
    edit = {"label": "m1", "new_content": "Alice lives in Denver"}
    model.script(
        "RefreshPlan", json.dumps({"action": "update", "reason": "moved", "edits": [edit]})
    )
    deps = NodeDeps(store=store, caller=StructuredCaller(model), clock=clock)
    candidates = [
        Candidate(
            granularity="fact",
            id="boston",
            text=boston.text,
            occurred_at=boston.occurred_at,
            score=1.0,
        ),
        Candidate(granularity="raw", id="r1", text="I moved to Denver", occurred_at=T0, score=1.0),
    ]
    state = {"candidates": candidates, "verdict": {"conflicting_ids": ["boston", "r1"]}}
    out = make_recall_refresher(deps)(state, None)
    assert [w.action for w in out["written"]] == ["superseded"]
    (old,) = store.get("fact", ns, ["boston"])
    assert isinstance(old, FactRecord) and old.valid_to == T0
    (new,) = store.get("fact", ns, [old.superseded_by or ""])
    assert isinstance(new, FactRecord) and new.valid_from == T0 and new.recorded_at == CLOCK


def test_a_recall_edit_never_opens_the_replacement_before_the_old_fact(store) -> None:  # type: ignore[no-untyped-def]
    start = T0 + timedelta(days=10)
    plan = fact("plan", "Alice moves to Lisbon in May", start)
    store.add(NS, [plan])
    log = StepLog(
        "refresher", NodeDeps(store=store, caller=StructuredCaller(SchemaChatModel()), clock=clock)
    )
    done = _apply_edit(
        log, MemoryContext(namespace=NS), plan, "update", "Alice moves to Porto", "x", T0
    )
    assert done is not None and done.action == "superseded"
    (old,) = store.get("fact", NS, ["plan"])
    assert isinstance(old, FactRecord) and old.valid_to == start  # not before it began


def test_an_application_update_takes_the_time_it_is_given(store) -> None:  # type: ignore[no-untyped-def]
    store.add(NS, [fact("boston", "Alice lives in Boston", T0)])
    at = T0 + timedelta(days=31)
    (old,) = store.get("fact", NS, ["boston"])
    result = update_record(store, old, "Alice lives in Denver", CLOCK, UTC_ZONE, at)
    (closed,) = store.get("fact", NS, ["boston"])
    assert isinstance(closed, FactRecord) and closed.valid_to == at
    (new,) = store.get("fact", NS, [result.id])
    assert isinstance(new, FactRecord) and new.valid_from == at and new.recorded_at == CLOCK
    (entry,) = store.list_audit(NS)
    assert "the time the caller gave" in entry.reason


def test_an_application_update_defaults_to_the_newest_turn(store) -> None:  # type: ignore[no-untyped-def]
    said = turn(NS, 0, "I live in Boston", T0)
    later = turn(NS, 1, "Actually I moved to Denver", T0 + timedelta(days=40))
    store.add(NS, [said, later])
    store.add(NS, [fact("boston", "Alice lives in Boston", T0, source_ids=[said.id])])
    (old,) = store.get("fact", NS, ["boston"])
    assert isinstance(old, FactRecord)
    supersede_fact(store, old, "Alice lives in Denver", CLOCK)
    (closed,) = store.get("fact", NS, ["boston"])
    assert isinstance(closed, FactRecord) and closed.valid_to == later.occurred_at != CLOCK
    (entry,) = store.list_audit(NS)
    assert "the newest turn of the conversation" in entry.reason


def test_an_application_update_without_any_turn_says_it_used_the_clock(store) -> None:  # type: ignore[no-untyped-def]
    store.add(NS, [fact("boston", "Alice lives in Boston", T0)])
    (old,) = store.get("fact", NS, ["boston"])
    assert isinstance(old, FactRecord)
    supersede_fact(store, old, "Alice lives in Denver", CLOCK)
    (closed,) = store.get("fact", NS, ["boston"])
    assert isinstance(closed, FactRecord) and closed.valid_to == CLOCK
    (entry,) = store.list_audit(NS)
    assert "the clock time" in entry.reason


def test_memory_update_takes_at_and_otherwise_the_newest_turn() -> None:
    from lamina import Memory

    memory = Memory(store=ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings()))
    memory.add("I live in Boston", namespace=NS, at=T0, infer=False)
    memory.add("Big news: I moved to Denver", namespace=NS, at=T0 + timedelta(days=9), infer=False)
    memory.store.add(NS, [fact("boston", "Alice lives in Boston", T0)])
    first = memory.update("boston", "Alice lives in Denver", namespace=NS)
    (closed,) = memory.store.get("fact", NS, ["boston"])
    assert isinstance(closed, FactRecord) and closed.valid_to == T0 + timedelta(days=9)
    at = T0 + timedelta(days=20)
    memory.update(first.id, "Alice lives in Austin", namespace=NS, at=at)
    (denver,) = memory.store.get("fact", NS, [first.id])
    assert isinstance(denver, FactRecord) and denver.valid_to == at


def test_the_store_defaults_to_the_replacing_facts_event_time(store) -> None:  # type: ignore[no-untyped-def]
    store.add(
        NS,
        [
            fact("old", "Alice lives in Boston", T0),
            fact("new", "Alice moved", T0 + timedelta(days=3)),
        ],
    )
    closed = store.mark_superseded(NS, "old", superseded_by="new")
    assert closed.valid_to == T0 + timedelta(days=3)


def test_the_store_falls_back_to_the_clock_only_without_a_replacing_fact_and_says_so(store) -> None:  # type: ignore[no-untyped-def]
    store.add(NS, [fact("old", "Alice lives in Boston", T0)])
    entry = AuditEntry(
        namespace=NS, actor="test", action="supersede", granularity="fact", target_id="old"
    )
    before = datetime.now(UTC)
    closed = store.mark_superseded(NS, "old", superseded_by="gone", audit=entry)
    assert closed.valid_to is not None and closed.valid_to >= before
    (logged,) = store.list_audit(NS)
    assert "valid_to is the clock time" in logged.reason


def test_a_refresh_plan_with_no_conflicting_memory_changes_nothing(store) -> None:  # type: ignore[no-untyped-def]
    model = SchemaChatModel()
    edit = {"label": "m1", "new_content": "Alice lives in Denver"}
    model.script("RefreshPlan", json.dumps({"action": "update", "reason": "x", "edits": [edit]}))
    deps = NodeDeps(store=store, caller=StructuredCaller(model), clock=clock)
    state = {"candidates": [], "verdict": {"conflicting_ids": ["gone"]}}
    out = make_recall_refresher(deps)(state, None)
    assert out["written"] == [] and out["failures"] == []
