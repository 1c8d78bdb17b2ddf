"""Store faults: a supersede and its audit entry land together or not at all; a Chroma
server that cannot be reached gives one clear error; odd namespaces are refused."""

from __future__ import annotations

import socket
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from lamina.errors import NamespaceError, StoreUnavailableError
from lamina.records import AuditEntry, FactRecord, Granularity, RawTurn
from lamina.stores import ChromaMemoryStore
from lamina.stores.audited import PENDING, PENDING_ENTRY
from lamina.stores.chroma_calls import ChromaCalls
from lamina.stores.codec import row_id
from lamina.testing import FakeEmbeddings

NS = "user:alice"
T0 = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def store() -> ChromaMemoryStore:
    return ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())


def facts(store: ChromaMemoryStore) -> tuple[FactRecord, FactRecord, AuditEntry]:
    old = FactRecord(namespace=NS, text="Alice lives in Boston", occurred_at=T0, valid_from=T0)
    later = T0 + timedelta(days=30)
    new = FactRecord(
        namespace=NS, text="Alice lives in Denver", occurred_at=later, valid_from=later
    )
    store.add(NS, [old, new])
    entry = AuditEntry(
        namespace=NS,
        actor="refresher",
        action="supersede",
        granularity="fact",
        target_id=old.id,
        before=old.text,
        after=f"superseded by {new.id}",
        at=later,
    )
    return old, new, entry


def fact_row(store: ChromaMemoryStore, fact_id: str) -> dict[str, object]:
    rows = store._collections[Granularity.FACT].get(
        ids=[row_id(NS, fact_id)], include=["metadatas"]
    )
    return dict(rows["metadatas"][0])  # type: ignore[index]


def test_a_supersede_and_its_audit_entry_land_together(store) -> None:  # type: ignore[no-untyped-def]
    old, new, entry = facts(store)
    closed = store.mark_superseded(NS, old.id, superseded_by=new.id, at=new.valid_from, audit=entry)
    assert closed.superseded_by == new.id
    assert [e.id for e in store.list_audit(NS)] == [entry.id]
    assert PENDING not in fact_row(store, old.id)  # moved out of the fact row


def test_an_audit_write_that_fails_is_finished_by_the_next_list_audit(store, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    old, new, entry = facts(store)

    def server_died(*args: object, **kwargs: object) -> None:
        raise StoreUnavailableError("the Chroma server died")

    with monkeypatch.context() as patch:
        patch.setattr(store._audit, "put", server_died)
        with pytest.raises(StoreUnavailableError):
            store.mark_superseded(NS, old.id, superseded_by=new.id, audit=entry)
    assert store.get("fact", NS, [old.id])[0].superseded_by == new.id  # type: ignore[attr-defined]
    assert fact_row(store, old.id)[PENDING] is True  # the entry waits inside the fact row
    assert [e.model_dump() for e in store.list_audit(NS)] == [entry.model_dump()]
    assert PENDING not in fact_row(store, old.id) and PENDING_ENTRY not in fact_row(store, old.id)
    assert len(store.list_audit(NS)) == 1  # landed once


def test_a_supersede_that_fails_writes_no_audit_entry(store, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    old, new, entry = facts(store)
    collection = store._collections[Granularity.FACT]

    def server_died(**kwargs: object) -> None:
        raise httpx.ConnectError("connection refused")

    monkeypatch.setattr(collection, "upsert", server_died)
    with pytest.raises(StoreUnavailableError, match="idempotent"):
        store.mark_superseded(NS, old.id, superseded_by=new.id, audit=entry)
    monkeypatch.undo()
    assert store.get("fact", NS, [old.id])[0].superseded_by is None  # type: ignore[attr-defined]
    assert store.list_audit(NS) == []


def test_a_redacted_entry_is_never_overwritten_by_its_pending_copy(store, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    old, new, entry = facts(store)
    with monkeypatch.context() as patch:  # the fact row keeps its copy: clearing it "fails"
        patch.setattr("lamina.stores.chroma.clear_pending", lambda *a: None)
        store.mark_superseded(NS, old.id, superseded_by=new.id, audit=entry)
    store.replace_audit(entry.model_copy(update={"before": None}))  # a forget redacts it
    (kept,) = store.list_audit(NS)
    assert kept.before is None
    assert PENDING not in fact_row(store, old.id)


def test_an_audit_entry_about_another_fact_is_refused(store) -> None:  # type: ignore[no-untyped-def]
    old, new, entry = facts(store)
    with pytest.raises(ValueError, match="needs an entry about that fact"):
        store.mark_superseded(
            NS, old.id, superseded_by=new.id, audit=entry.model_copy(update={"target_id": new.id})
        )
    assert store.get("fact", NS, [old.id])[0].superseded_by is None  # type: ignore[attr-defined]


def test_a_server_that_is_not_running_gives_one_clear_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again when the block ends: nothing listens
    with pytest.raises(StoreUnavailableError, match=f"127.0.0.1:{port}.*Restart the server"):
        ChromaMemoryStore.http("127.0.0.1", port, embeddings=FakeEmbeddings())


@pytest.mark.parametrize(
    "error",
    [httpx.ConnectError("refused"), httpx.ReadError("reset"), httpx.RemoteProtocolError("eof")],
)
def test_a_transport_failure_becomes_store_unavailable(error: Exception) -> None:
    import threading

    calls = ChromaCalls("the Chroma server at 10.0.0.1:8000", threading.RLock())

    def fail(**kwargs: object) -> None:
        raise error

    with pytest.raises(StoreUnavailableError, match="10.0.0.1:8000 is unreachable") as info:
        calls.write(fail, ids=["x"])
    assert info.value.__cause__ is error


ODD = [
    "",
    " ",
    "a|b",
    "../etc/passwd",
    "user alice",
    "user:alice\n",
    "ns\x00",
    "Zoë",
    "a" * 300,
    "'; DROP TABLE embeddings; --",
    '{"$ne": "x"}',
    "-leading-dash",
]


@pytest.mark.parametrize("namespace", ODD)
def test_odd_namespaces_are_refused_everywhere(store, namespace: str) -> None:  # type: ignore[no-untyped-def]
    turn = RawTurn(
        namespace=NS, text="hello", speaker="A", session_id="s", turn_index=0, occurred_at=T0
    )
    store.add(NS, [turn])
    calls = [
        lambda: store.add(namespace, [turn]),
        lambda: store.get("raw", namespace),
        lambda: store.get("raw", namespace, [turn.id]),
        lambda: store.search("hello", "raw", namespace),
        lambda: store.search("hello", "raw", namespace, mode="bm25"),
        lambda: store.count("raw", namespace),
        lambda: store.delete("raw", namespace, [turn.id]),
        lambda: store.delete_namespace(namespace),
        lambda: store.lexical_index("raw", namespace),
        lambda: store.vectors("raw", namespace, [turn.id]),
        lambda: store.list_audit(namespace),
        lambda: store.get_profile(namespace),
    ]
    for call in calls:
        with pytest.raises(NamespaceError, match="invalid namespace|namespace must be"):
            call()
    assert [r.id for r in store.get("raw", NS)] == [turn.id]  # nothing touched


@pytest.mark.parametrize("namespace", [None, 7, b"user:alice", ["user:alice"]])
def test_a_namespace_that_is_not_a_string_is_refused(store, namespace: object) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(NamespaceError, match="namespace must be a str"):
        store.search("hello", "raw", namespace)
