"""lamina.testing.stores: a store pool renewed on schedule, and the store snapshot."""

from __future__ import annotations

import pytest

from lamina.records import AuditEntry, ProfileRecord
from lamina.stores import ChromaMemoryStore
from lamina.testing import FakeEmbeddings, StorePool, store_snapshot


def test_the_pool_reuses_its_store_and_renews_it_every_n_uses() -> None:
    pool = StorePool(renew_every=3)
    first, second = pool.next(), pool.next()
    assert isinstance(first, ChromaMemoryStore) and first is second
    third = pool.next()
    assert third is not first
    assert pool.next() is third


def test_the_pool_rejects_a_renewal_period_below_one() -> None:
    with pytest.raises(ValueError, match="renew_every"):
        StorePool(renew_every=0)


def test_the_snapshot_sees_records_profiles_and_audit_entries_of_its_namespaces_only(
    make_turn,  # type: ignore[no-untyped-def]
) -> None:
    store = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    empty = store_snapshot(store, ["user:alice"])
    assert empty["user:alice/raw"] == [] and empty["user:alice/profile"] is None
    assert set(empty) == {
        f"user:alice/{part}" for part in ("raw", "fact", "episode", "scene", "profile", "audit")
    }
    store.add("user:bob", [make_turn("user:bob", "hello", 0)])
    assert store_snapshot(store, ["user:alice"]) == empty  # another namespace
    changes = [
        lambda: store.add("user:alice", [make_turn("user:alice", "hi", 0)]),
        lambda: store.put_profile(ProfileRecord(namespace="user:alice", explicit_facts=["x"])),
        lambda: store.append_audit(
            AuditEntry(
                namespace="user:alice",
                actor="test",
                action="update",
                granularity="raw",
                target_id="t1",
            )
        ),
    ]
    before = empty
    for change in changes:
        change()
        after = store_snapshot(store, ["user:alice"])
        assert after != before
        before = after
