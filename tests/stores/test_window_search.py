"""Dense search inside a time window: exact over the window's records in the namespace
mirror; for namespaces too large to mirror vectors, Chroma ranks the window's ids or
the HNSW index is oversampled."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from lamina.records import Granularity, RawTurn
from lamina.stores import ChromaMemoryStore, TimeWindow
from lamina.stores import hnsw as hnsw_module
from lamina.stores.mirror import MirrorConfig
from lamina.testing import FakeEmbeddings

NS = "user:alice"
OTHER = "user:bob"
T0 = datetime(2024, 1, 1, tzinfo=UTC)
WORDS = "dog park bread oven trail summit pottery bowl bakery loan beach kite".split()


def turns(namespace: str, n: int, seed: int) -> list[RawTurn]:
    rng = random.Random(seed)
    return [
        RawTurn(
            namespace=namespace,
            text=" ".join(rng.choice(WORDS) for _ in range(6)),
            speaker=rng.choice(["Alice", "Theo"]),
            session_id=f"s{i // 10}",
            turn_index=i % 10,
            occurred_at=T0 + timedelta(hours=i),
        )
        for i in range(n)
    ]


@pytest.fixture(scope="module")
def store() -> ChromaMemoryStore:
    s = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    s.add(NS, turns(NS, 600, seed=1))
    s.add(OTHER, turns(OTHER, 200, seed=2))  # same times, other tenant
    return s


def brute_force(
    store: ChromaMemoryStore, query: str, window: TimeWindow, speaker: str | None = None
) -> list[str]:
    """Every record of NS in the window, ranked by cosine to the query (ties by id)."""
    inside = [
        r
        for r in store.get("raw", NS)
        if window.contains(r.occurred_at.timestamp())
        and (speaker is None or getattr(r, "speaker", None) == speaker)
    ]
    vectors = store.vectors("raw", NS, [r.id for r in inside])
    q = np.asarray(store.embeddings.embed_query(query))
    scored = []
    for r in inside:
        v = np.asarray(vectors[r.id])
        scored.append((-float(q @ v / (np.linalg.norm(q) * np.linalg.norm(v))), r.id))
    return [rid for _, rid in sorted(scored)]


@pytest.mark.parametrize("hours", [5, 48, 300])
def test_windowed_dense_search_is_exact_over_the_window(
    store: ChromaMemoryStore, hours: int
) -> None:
    window = TimeWindow.between(T0 + timedelta(hours=100), T0 + timedelta(hours=100 + hours))
    expected = brute_force(store, "bakery oven bread", window)
    k = min(10, len(expected))
    hits = store.search("bakery oven bread", "raw", NS, k=k, window=window, mode="dense")
    got = [h.record.id for h in hits]
    assert len(got) == k
    # the same records as an exhaustive scan (order may differ only among equal scores)
    assert set(got) == set(expected[:k]) or got[: k - 1] == expected[: k - 1]
    assert all(window.contains(h.record.occurred_at.timestamp()) for h in hits)
    assert all(h.record.namespace == NS for h in hits)


def test_window_and_metadata_filter_combine(store: ChromaMemoryStore) -> None:
    window = TimeWindow.between(T0 + timedelta(hours=10), T0 + timedelta(hours=80))
    expected = brute_force(store, "trail summit", window, speaker="Theo")
    hits = store.search(
        "trail summit", "raw", NS, k=5, window=window, where={"speaker": "Theo"}, mode="dense"
    )
    assert [h.record.id for h in hits][:4] == expected[:4]
    assert {getattr(h.record, "speaker", None) for h in hits} == {"Theo"}


def test_an_empty_window_returns_nothing(store: ChromaMemoryStore) -> None:
    window = TimeWindow.after_(T0 + timedelta(days=3650))
    assert store.search("bread", "raw", NS, k=5, window=window, mode="dense") == []
    assert store.search("bread", "raw", NS, k=5, window=window) == []


@pytest.mark.parametrize(("cap", "by_ids"), [(2000, True), (50, False)])
def test_the_hnsw_path_ranks_a_window_like_the_exact_mirror(
    store: ChromaMemoryStore, monkeypatch: pytest.MonkeyPatch, cap: int, by_ids: bool
) -> None:
    """A namespace above ``exact_limit`` ranks dense through Chroma: a window of at most
    ``EXACT_CAP`` records by id, a wider one by oversampling the HNSW index."""
    window = TimeWindow.between(T0, T0 + timedelta(hours=400))
    exact = [
        h.record.id for h in store.search("kite beach", "raw", NS, k=5, window=window, mode="dense")
    ]
    prefix = store._collections[Granularity.RAW].name.removesuffix("_raw")
    large = ChromaMemoryStore(
        store.client,
        embeddings=store.embeddings,
        collection_prefix=prefix,
        mirrors=MirrorConfig(exact_limit=0),
    )
    queries: list[bool] = []
    collection = large._collections[Granularity.RAW]
    original = collection.query

    def spy(**kwargs):  # type: ignore[no-untyped-def]
        queries.append("ids" in kwargs)
        return original(**kwargs)

    monkeypatch.setattr(collection, "query", spy)
    monkeypatch.setattr(hnsw_module, "EXACT_CAP", cap)
    hits = large.search("kite beach", "raw", NS, k=5, window=window, mode="dense")
    assert queries and all(q is by_ids for q in queries)
    assert [h.record.id for h in hits] == exact
    assert all(window.contains(h.record.occurred_at.timestamp()) for h in hits)


def test_the_window_selection_follows_deletes_and_updates(store: ChromaMemoryStore) -> None:
    s = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    records = turns(NS, 30, seed=3)
    s.add(NS, records)
    window = TimeWindow.between(T0, T0 + timedelta(hours=5))
    s.lexical_index("raw", NS)  # mirror built before the changes
    s.delete("raw", NS, [records[0].id])
    moved = records[1].model_copy(update={"occurred_at": T0 + timedelta(days=30)})
    s.update(NS, moved)
    ids = {h.record.id for h in s.search("dog", "raw", NS, k=10, window=window, mode="dense")}
    assert ids == {r.id for r in records[2:5]}
