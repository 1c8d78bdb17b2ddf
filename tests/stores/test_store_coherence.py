"""Two stores over one Chroma (standing in for two processes): every write is seen by the
other store's next search, on both channels, without ``refresh_lexical()``."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from lamina.records import Granularity, RawTurn
from lamina.stores import ChromaMemoryStore, MirrorConfig
from lamina.stores import changelog as changelog_module
from lamina.stores.changelog import ChangeLog
from lamina.stores.chroma_calls import ChromaCalls
from lamina.testing import FakeEmbeddings, alternating_turn

NS, OTHER = "user:alice", "user:bob"
T0 = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)


def turn(ns: str, i: int, text: str) -> RawTurn:
    return alternating_turn(ns, i, text, T0)


@pytest.fixture
def pair() -> tuple[ChromaMemoryStore, ChromaMemoryStore]:
    """Two stores on one client and prefix, each with its own mirrors and change log."""
    a = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    prefix = a._collections[Granularity.RAW].name.removesuffix("_raw")
    b = ChromaMemoryStore(a.client, embeddings=FakeEmbeddings(), collection_prefix=prefix)
    return a, b


def ids(store: ChromaMemoryStore, query: str, mode: str = "hybrid", ns: str = NS) -> list[str]:
    return [h.record.id for h in store.search(query, "raw", ns, k=10, mode=mode)]  # type: ignore[arg-type]


def test_every_write_of_one_store_reaches_the_others_next_search(pair) -> None:  # type: ignore[no-untyped-def]
    a, b = pair
    a.add(NS, [turn(NS, i, f"filler words number {i}") for i in range(5)])
    assert ids(b, "zeppelin", "bm25") == []  # b's mirror is loaded now
    added = turn(NS, 7, "we rode a zeppelin over Lisbon")
    a.add(NS, [added])
    hit = b.search("zeppelin Lisbon", "raw", NS, k=3)[0]
    assert hit.record.id == added.id and set(hit.ranks) == {"dense", "bm25"}
    assert ids(b, "zeppelin", "bm25") == [added.id]

    a.update(NS, added.model_copy(update={"text": "we took a ferry to Porto"}))
    assert ids(b, "zeppelin", "bm25") == []
    assert ids(b, "ferry Porto", "bm25") == [added.id]
    assert b.search("ferry Porto", "raw", NS, k=1, mode="dense")[0].record.text.startswith(
        "we took"
    )

    a.delete("raw", NS, [added.id])
    assert added.id not in ids(b, "ferry Porto") + ids(b, "ferry Porto", "dense")
    assert b.lexical_index("raw", NS).ids() == {r.id for r in a.get("raw", NS)}

    a.delete_namespace(NS)
    assert ids(b, "filler words") == [] and ids(b, "filler words", "dense") == []
    assert b.lexical_index("raw", NS).ids() == set()
    again = turn(NS, 9, "a zeppelin again")
    a.add(NS, [again])
    assert ids(b, "zeppelin") == [again.id]


def test_a_mirror_behind_the_pruned_log_rebuilds(pair, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(changelog_module, "HEAD_EVERY", 2)
    monkeypatch.setattr(changelog_module, "PRUNE_EVERY", 4)
    monkeypatch.setattr(changelog_module, "KEEP", 4)
    a, b = pair
    assert ids(b, "anything") == []
    loads = b._mirrors.loads
    turns = [turn(NS, i, f"parrot number {i}") for i in range(20)]
    for t in turns:  # one slot each: slots 1-8 are pruned on the way
        a.add(NS, [t])
    assert ids(b, "parrot number 13", "bm25")[0] == turns[13].id
    assert b.lexical_index("raw", NS).ids() == {t.id for t in turns}
    assert b._mirrors.loads == loads + 1  # the gap was noticed: rebuilt once
    fresh = ChromaMemoryStore(
        a.client,
        embeddings=FakeEmbeddings(),
        collection_prefix=a._collections[Granularity.RAW].name.removesuffix("_raw"),
    )
    assert fresh._log.end(Granularity.RAW, NS) == 20  # found past the pruned slots


def test_racing_writers_get_distinct_gap_free_slots(pair) -> None:  # type: ignore[no-untyped-def]
    a, _ = pair
    name = a._log._collection.name
    logs = [ChangeLog(a.client, name, ChromaCalls("test", a._lock)) for _ in range(3)]
    for log in logs:
        log.end(Granularity.FACT, NS)  # every writer believes slot 0 is the end
    claimed = [logs[i % 3].claim(Granularity.FACT, NS, [f"f{i}"]) for i in range(12)]
    assert sorted(claimed) == list(range(1, 13))
    found = logs[0].since(Granularity.FACT, NS, 0)
    assert found is not None
    changes, position = found
    assert position == 12 and [c.ids for c in changes] == [(f"f{i}",) for i in range(12)]


def test_mirrors_stay_within_their_memory_budget() -> None:
    store = ChromaMemoryStore.ephemeral(
        embeddings=FakeEmbeddings(), mirrors=MirrorConfig(budget_bytes=60_000)
    )
    spaces = [f"user:{n}" for n in range(12)]
    for ns in spaces:
        store.add(ns, [turn(ns, i, f"{ns} owns a kayak number {i}") for i in range(10)])
    for ns in spaces:
        assert {h.record.namespace for h in store.search("kayak", "raw", ns, k=5)} == {ns}
    assert 1 <= len(store._mirrors) < len(spaces)
    assert store._mirrors.nbytes() <= 60_000 or len(store._mirrors) == 1
    first = store.search("kayak number 3", "raw", spaces[0], k=1, mode="bm25")  # evicted: reloaded
    assert first[0].record.namespace == spaces[0]


def test_a_namespace_that_does_not_exist_returns_nothing(pair) -> None:  # type: ignore[no-untyped-def]
    a, _ = pair
    a.add(NS, [turn(NS, i, f"Rex the puppy chewed shoe {i}") for i in range(8)])
    for mode in ("hybrid", "dense", "bm25"):
        assert a.search("Rex puppy shoe", "raw", "user:nobody", mode=mode) == []  # type: ignore[arg-type]
        assert a.search("Rex", "fact", "user:nobody", mode=mode, where={"kind": "fact"}) == []  # type: ignore[arg-type]
    assert a.lexical_index("raw", "user:nobody").ids() == set()
    assert a.get("raw", "user:nobody") == [] and a.count("raw", "user:nobody") == 0
    assert a.list_audit("user:nobody") == [] and a.get_profile("user:nobody") is None


def test_threads_touching_a_cold_namespace_load_it_once(pair) -> None:  # type: ignore[no-untyped-def]
    from concurrent.futures import ThreadPoolExecutor

    a, b = pair
    a.add(NS, [turn(NS, i, f"lantern festival night {i}") for i in range(30)])
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(
            pool.map(lambda _: ids(b, "lantern festival night 17", "bm25")[0], range(16))
        )
    assert results == [turn(NS, 17, "x").id] * 16
    assert b._mirrors.loads == 1


def test_a_batch_of_several_pages_is_one_slot_and_seen_whole(tmp_path) -> None:  # type: ignore[no-untyped-def]
    a = ChromaMemoryStore.persistent(tmp_path, embeddings=FakeEmbeddings())
    b = ChromaMemoryStore.persistent(tmp_path, embeddings=FakeEmbeddings())
    a._max_batch = 7  # 40 records: six pages of rows, one change-log claim
    assert ids(b, "walrus") == []  # b's mirror is loaded before the batch
    batch = [turn(NS, i, f"walrus colony sighting {i}") for i in range(40)]
    before = a._log.end(Granularity.RAW, NS)
    a.add(NS, batch)
    assert a._log.end(Granularity.RAW, NS) == before + 1
    found = b._log.since(Granularity.RAW, NS, before)
    assert found is not None and sorted(found[0][0].ids) == sorted(t.id for t in batch)
    assert b.lexical_index("raw", NS).ids() == {t.id for t in batch}
    for t in (batch[0], batch[20], batch[39]):
        for mode in ("bm25", "dense"):
            assert ids(b, t.text, mode)[0] == t.id


def test_a_fresh_namespace_is_written_without_reading_its_rows(pair, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from lamina.stores import chroma as chroma_module

    a, b = pair
    reads: list[str] = []
    real = chroma_module.stored_vectors
    monkeypatch.setattr(
        chroma_module,
        "stored_vectors",
        lambda *args, **kw: reads.append(args[4]) or real(*args, **kw),
    )
    first = turn(NS, 1, "a heron by the pond")
    a.add(NS, [first])
    assert reads == []  # the log says nothing was ever written here: nothing to reuse
    b.add(NS, [first, turn(NS, 2, "a second heron")])  # b's log position is read: rows exist
    assert reads == [NS]
    assert sorted(ids(a, "heron")) == sorted([first.id, turn(NS, 2, "x").id])


def test_a_relative_path_opens_the_folder_it_names_from_the_current_working_folder(
    tmp_path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    """chromadb keeps one client per path string per process; ``persistent(".lamina/chroma")``
    in a second working folder must open that folder's database, not the first one's."""
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    monkeypatch.chdir(first)
    a = ChromaMemoryStore.persistent(".lamina/chroma", embeddings=FakeEmbeddings())
    a.add(NS, [turn(NS, 0, "we rode a zeppelin over Lisbon")])
    monkeypatch.chdir(second)
    b = ChromaMemoryStore.persistent(".lamina/chroma", embeddings=FakeEmbeddings())
    assert ids(b, "zeppelin", "bm25") == []
    b.add(NS, [turn(NS, 1, "we took a ferry to Porto")])
    assert ids(b, "ferry", "bm25") == [turn(NS, 1, "x").id]
    assert (second / ".lamina" / "chroma").is_dir()
    assert ids(a, "ferry", "bm25") == []
