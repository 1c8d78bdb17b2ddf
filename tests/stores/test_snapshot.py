"""Mirror snapshots: a cold mirror mapped from one file searches exactly as the mirror
that was saved, stays exact through later writes, and a damaged or foreign snapshot is
never trusted."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from lamina.records import Granularity, RawTurn
from lamina.stores import ChromaMemoryStore
from lamina.stores import journal as journal_module
from lamina.stores.filters import SearchFilter
from lamina.stores.lexical import Analyzer
from lamina.stores.mirror import MirrorRow, NamespaceMirror
from lamina.stores.mirror_snapshot import mirror_from_snapshot, snapshot_arrays
from lamina.stores.okapi import BM25Params
from lamina.stores.snapshot import read_snapshot, write_snapshot
from lamina.stores.snapshot_merge import merge_rows
from lamina.testing import FakeEmbeddings, alternating_turn

NS = "user:alice"
RAW = Granularity.RAW
T0 = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)
WORDS = "kite hill wind boat canal river paper sail storm harbour gull rope".split()
QUERIES = ["kite hill", "paper boat canal", "storm gull rope rope", "nothing here", "sail"]


def row(i: int, text: str, **meta: object) -> MirrorRow:
    rng = np.random.default_rng(i)
    metadata = {"namespace": NS, "occurred_ts": 1_700_000_000.0 + i, "speaker": f"s{i % 3}"}
    metadata.update(meta)
    return MirrorRow(f"id{i:03d}", text, metadata, rng.standard_normal(8).tolist())


def texts(n: int, seed: int = 0) -> list[str]:
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(WORDS, size=int(rng.integers(3, 9)))) for _ in range(n)]


def mirror_of(rows: list[MirrorRow]) -> NamespaceMirror:
    m = NamespaceMirror(RAW, NS)
    m.upsert_rows(rows)
    m.position = 7
    return m


def round_trip(m: NamespaceMirror, tmp_path: Path) -> NamespaceMirror:
    header, arrays = snapshot_arrays(m)
    write_snapshot(tmp_path / "m.snap", {"namespace": NS, **header}, arrays)
    found = read_snapshot(tmp_path / "m.snap", {"namespace": NS})
    assert found is not None
    loaded = mirror_from_snapshot(
        RAW, NS, found[0], found[1], analyzer=Analyzer(), params=BM25Params(), vectors=True
    )
    assert loaded is not None
    return loaded


def same(a: NamespaceMirror, b: NamespaceMirror) -> None:
    assert a.ids() == b.ids() and a.position == b.position
    q = np.linspace(-1, 1, 8)
    every = SearchFilter(namespace=NS)
    s1 = SearchFilter(namespace=NS, where={"speaker": "s1"})
    for query in QUERIES:
        assert a.scores(query) == b.scores(query)  # BM25, to the last bit
        assert a.search(query, 5) == b.search(query, 5)
        assert a.search(query, 5, allowed=a.allowed(s1)) == b.search(
            query, 5, allowed=b.allowed(s1)
        )
    assert sorted(a.window_ids(a.allowed(s1))) == sorted(b.window_ids(b.allowed(s1)))
    assert a.dense(q, 5, a.allowed(every)) == b.dense(q, 5, b.allowed(every))
    assert a.distinct("speaker") == b.distinct("speaker")
    assert a.latest() == b.latest()
    assert a.nbytes() == pytest.approx(b.nbytes(), rel=0.1)  # an estimate; capacity differs

    def rows(m: NamespaceMirror) -> str:  # repr: NaN equals itself there
        return repr(
            sorted((r.record_id, dict(r.metadata), sorted(r.terms or ())) for r in m.rows())
        )

    assert rows(a) == rows(b)


def test_a_snapshot_searches_as_the_mirror_it_was_taken_from(tmp_path: Path) -> None:
    rows = [row(i, t) for i, t in enumerate(texts(60))]
    rows[5] = row(5, "paper boat on the canal", tags=["a", "b"], score=math.nan)
    m = mirror_of(rows)
    m.delete(["id010", "id011"])
    loaded = round_trip(m, tmp_path)
    same(m, loaded)
    # a row's metadata survives whatever it holds (a list, NaN)
    meta = next(r.metadata for r in loaded.rows() if r.record_id == "id005")
    assert meta["tags"] == ["a", "b"] and math.isnan(meta["score"])  # type: ignore[arg-type]


def test_a_mapped_mirror_stays_exact_through_writes(tmp_path: Path) -> None:
    base = [row(i, t) for i, t in enumerate(texts(40))]
    m = mirror_of(base)
    loaded = round_trip(m, tmp_path)
    later = [row(i, t) for i, t in enumerate(texts(12, seed=1), start=35)]  # 35-39 replaced
    for mirror in (m, loaded):
        mirror.upsert_rows(later)
        mirror.delete(["id001", "id002", "id039"])
        mirror.upsert_rows([row(3, "storm storm gull", speaker="s9")])
    same(m, loaded)
    assert loaded.distinct("speaker")[0] == "s9"


def test_many_deletes_after_mapping_compact_the_slots(tmp_path: Path) -> None:
    m = mirror_of([row(i, t) for i, t in enumerate(texts(2200))])
    loaded = round_trip(m, tmp_path)
    for mirror in (m, loaded):
        mirror.delete([f"id{i:03d}" for i in range(1500)])  # dead slots outnumber live ones
    same(m, loaded)


@pytest.mark.parametrize("damage", ["flip", "truncate", "header", "foreign"])
def test_a_damaged_or_foreign_snapshot_is_refused(tmp_path: Path, damage: str) -> None:
    header, arrays = snapshot_arrays(mirror_of([row(i, t) for i, t in enumerate(texts(30))]))
    path = tmp_path / "m.snap"
    write_snapshot(path, {"namespace": NS, **header}, arrays)
    data = bytearray(path.read_bytes())
    expected = {"namespace": NS}
    if damage == "flip":
        data[-10] ^= 0xFF
    elif damage == "truncate":
        data = data[: len(data) - 100]
    elif damage == "header":
        data[:20] = b"x" * 20
    else:
        expected = {"namespace": "user:bob"}
    path.write_bytes(bytes(data))
    assert read_snapshot(path, expected) is None
    assert read_snapshot(tmp_path / "absent.snap", expected) is None


# ---------------------------------------------------------------- through the store


def turn(i: int, text: str) -> RawTurn:
    return alternating_turn(NS, i, text, T0)


def open_store(path: Path) -> ChromaMemoryStore:
    return ChromaMemoryStore.persistent(path, embeddings=FakeEmbeddings())


def hits(store: ChromaMemoryStore, query: str, mode: str = "hybrid") -> list[str]:
    return [h.record.id for h in store.search(query, "raw", NS, k=10, mode=mode)]  # type: ignore[arg-type]


def exact(store: ChromaMemoryStore) -> None:
    """The store's mirror holds what Chroma holds, and scores as a fresh build does."""
    live, built = store.lexical_index("raw", NS), store._mirrors.load(RAW, NS)
    assert live.ids() == built.ids() == {r.id for r in store.get("raw", NS)}
    for query in QUERIES:
        assert live.scores(query) == built.scores(query)


@pytest.fixture
def snapshotted(tmp_path: Path) -> ChromaMemoryStore:
    """A store whose raw namespace has a snapshot (a cold load from Chroma leaves one)."""
    writer = open_store(tmp_path)
    turns = [turn(i, t) for i, t in enumerate(texts(80))]
    for i in range(0, 80, 20):
        writer.add(NS, turns[i : i + 20])
    journals = writer._mirrors.journals
    assert journals is not None
    journals.path(RAW, NS).unlink()  # no journal: the next cold load reads Chroma
    loader = open_store(tmp_path)
    loader.lexical_index("raw", NS)
    assert loader._mirrors.loads == 1
    assert journals.snapshot_path(RAW, NS).exists()
    exact(loader)
    return writer


def test_a_cold_store_maps_the_snapshot_and_reads_nothing_from_chroma(
    snapshotted: ChromaMemoryStore, tmp_path: Path
) -> None:
    cold = open_store(tmp_path)
    found = hits(cold, "paper boat canal", "bm25")
    assert cold._mirrors.snapshots == 1 and cold._mirrors.loads == 0
    assert found == hits(snapshotted, "paper boat canal", "bm25")
    exact(cold)
    text = snapshotted.get("raw", NS)[7].text
    assert hits(cold, text, "dense")[:3] == hits(snapshotted, text, "dense")[:3]


def test_writes_after_the_snapshot_come_from_the_journal_and_the_change_log(
    snapshotted: ChromaMemoryStore, tmp_path: Path
) -> None:
    mapped = open_store(tmp_path)
    exact(mapped)  # mapped from the snapshot; later writes reach it by the change log
    first = snapshotted.get("raw", NS)
    snapshotted.add(NS, [turn(100, "an albatross on the mast")])
    snapshotted.delete("raw", NS, [first[0].id, first[1].id])
    snapshotted.update(NS, first[2].model_copy(update={"text": "a zeppelin over the harbour"}))
    assert hits(mapped, "albatross", "bm25") == [turn(100, "x").id]
    exact(mapped)
    cold = open_store(tmp_path)  # the snapshot, then the journal's entries after it
    assert hits(cold, "zeppelin harbour", "bm25")[0] == first[2].id
    assert cold._mirrors.snapshots == 1 and cold._mirrors.loads == 0
    exact(cold)


def test_a_damaged_snapshot_in_a_store_falls_back_to_chroma(
    snapshotted: ChromaMemoryStore, tmp_path: Path
) -> None:
    journals = snapshotted._mirrors.journals
    assert journals is not None
    path = journals.snapshot_path(RAW, NS)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    cold = open_store(tmp_path)
    exact(cold)
    assert cold._mirrors.snapshots == 0


def test_a_wiped_namespace_leaves_no_snapshot(
    snapshotted: ChromaMemoryStore, tmp_path: Path
) -> None:
    journals = snapshotted._mirrors.journals
    assert journals is not None
    snapshotted.delete_namespace(NS)
    assert not journals.snapshot_path(RAW, NS).exists()
    again = turn(200, "a fresh start with kites")
    snapshotted.add(NS, [again])
    cold = open_store(tmp_path)
    assert cold.lexical_index("raw", NS).ids() == {again.id}


# ------------------------------------------------------------- writer-side merging


def with_terms(r: MirrorRow) -> MirrorRow:
    return MirrorRow(r.record_id, r.text, r.metadata, r.vector, tuple(Analyzer()(r.text)))


def test_journal_rows_merged_into_a_snapshot_search_as_the_mirror_they_built(
    tmp_path: Path,
) -> None:
    base = [with_terms(row(i, t)) for i, t in enumerate(texts(50))]
    m = mirror_of(base)
    header, arrays = snapshot_arrays(m)
    later = [with_terms(row(i, t, speaker="s7")) for i, t in enumerate(texts(15, seed=2), start=45)]
    later.append(with_terms(row(7, "storm storm gull over the harbour")))
    later.sort(key=lambda r: r.record_id)
    gone = {"id001", "id002", "id046"}  # 46 is written, then deleted
    merged = merge_rows(header, arrays, [r for r in later if r.record_id not in gone], gone, 9)
    assert merged is not None
    m.upsert_rows([r for r in later if r.record_id not in gone])
    m.delete(sorted(gone))
    m.position = 9
    write_snapshot(tmp_path / "m.snap", {"namespace": NS, **merged[0]}, merged[1])
    found = read_snapshot(tmp_path / "m.snap", {"namespace": NS})
    assert found is not None
    loaded = mirror_from_snapshot(
        RAW, NS, *found, analyzer=Analyzer(), params=BM25Params(), vectors=True
    )
    assert loaded is not None
    same(m, loaded)
    # a first snapshot, from journal rows alone
    first = merge_rows(None, None, sorted(base, key=lambda r: r.record_id), set(), 7)
    assert first is not None
    alone = mirror_from_snapshot(
        RAW, NS, *first, analyzer=Analyzer(), params=BM25Params(), vectors=True
    )
    assert alone is not None
    same(mirror_of(sorted(base, key=lambda r: r.record_id)), alone)


def test_rows_with_and_without_vectors_are_not_merged() -> None:
    header, arrays = snapshot_arrays(mirror_of([with_terms(row(i, "kite")) for i in range(5)]))
    bare = MirrorRow("id100", "kite", {"namespace": NS}, None, ("kite",))
    assert merge_rows(header, arrays, [bare], set(), 3) is None


def test_a_writer_keeps_the_snapshot_fresh_so_a_cold_load_replays_little(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(journal_module, "MERGE_BYTES", 4000)
    monkeypatch.setattr(journal_module, "MERGE_SHARE", 10**9)  # size alone decides here
    writer = open_store(tmp_path)
    turns = [turn(i, t) for i, t in enumerate(texts(120, seed=3))]
    for i in range(0, 120, 10):
        writer.add(NS, turns[i : i + 10])
    writer.delete("raw", NS, [turns[0].id])
    writer.update(NS, turns[1].model_copy(update={"text": "a zeppelin over the harbour"}))
    journals = writer._mirrors.journals
    assert journals is not None
    assert journals.snapshot_path(RAW, NS).exists()
    assert journals.path(RAW, NS).stat().st_size < 4000 + 3000  # folded as it grew
    cold = open_store(tmp_path)
    assert hits(cold, "zeppelin harbour", "bm25")[0] == turns[1].id
    assert cold._mirrors.snapshots == 1 and cold._mirrors.loads == 0
    exact(cold)


def test_a_large_snapshot_is_rewritten_only_when_the_journal_is_a_share_of_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(journal_module, "MERGE_BYTES", 4000)
    writer = open_store(tmp_path)
    journals = writer._mirrors.journals
    assert journals is not None
    turns = [turn(i, t) for i, t in enumerate(texts(200, seed=4))]
    rewrites, last = 0, None
    for i in range(0, 200, 5):
        writer.add(NS, turns[i : i + 5])
        snap = journals.snapshot_path(RAW, NS)
        stamp = snap.stat().st_mtime_ns if snap.exists() else None
        rewrites += stamp != last
        last = stamp
        journal, snapshot = (
            journals.path(RAW, NS).stat().st_size,
            snap.stat().st_size if snap.exists() else 0,
        )
        assert journal < max(4000, snapshot // journal_module.MERGE_SHARE) + 3000
    assert 3 <= rewrites <= 20  # folds as the namespace grows, not on every write
    exact(open_store(tmp_path))


def test_a_journal_with_a_lost_append_is_not_folded_nor_reread_on_every_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(journal_module, "MERGE_BYTES", 2000)
    monkeypatch.setattr(journal_module, "MERGE_SHARE", 10**9)
    writer = open_store(tmp_path)
    turns = [turn(i, t) for i, t in enumerate(texts(120, seed=5))]
    original = journal_module.Journals.append

    def lost(*args: object, **kwargs: object) -> None:
        raise OSError("disk full")

    writer.add(NS, turns[:5])
    with monkeypatch.context() as patch:
        patch.setattr(journal_module.Journals, "append", lost)
        writer.add(NS, turns[5:10])  # a slot the journal never proves
    tries: list[int] = []
    merge = journal_module.Journals.merge

    def counted(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        tries.append(1)
        return merge(self, *args, **kwargs)

    monkeypatch.setattr(journal_module.Journals, "merge", counted)
    assert journal_module.Journals.append is original
    for i in range(10, 120, 5):
        writer.add(NS, turns[i : i + 5])
    assert 1 <= len(tries) <= 6  # 22 writes past the size: retried as the journal doubles
    exact(open_store(tmp_path))


def test_a_filter_column_keeps_true_and_one_apart_through_snapshots(tmp_path: Path) -> None:
    """``True`` and ``1`` are two values of a filter column (``1`` and ``1.0`` one), in the
    mirror, in a snapshot of it, and in one that journal rows were merged into: a filter on
    one never selects the other, as Chroma's ``where`` and Postgres compare them."""
    values: list[object] = [True, 1, False, 0, 1.0, "1"]
    rows = [with_terms(row(i, t, **{"meta.flag": values[i % 6]})) for i, t in enumerate(texts(24))]
    m = mirror_of(rows)
    header, arrays = snapshot_arrays(m)
    assert "meta.flag" in header["columns"]
    later = [with_terms(row(i, "kite", **{"meta.flag": values[i % 6]})) for i in range(24, 30)]
    merged = merge_rows(header, arrays, later, set(), 9)
    assert merged is not None
    combined = mirror_from_snapshot(
        RAW, NS, *merged, analyzer=Analyzer(), params=BM25Params(), vectors=True
    )
    assert combined is not None
    m_all = mirror_of(rows + later)

    def selected(mirror: NamespaceMirror, wanted: object) -> set[int]:
        allowed = mirror.allowed(SearchFilter(NS, where={"metadata.flag": wanted}))  # type: ignore[dict-item]
        return {int(rid.removeprefix("id")) % 6 for rid in mirror.window_ids(allowed)}

    for mirror in (m, round_trip(m, tmp_path), combined, m_all):
        assert selected(mirror, 1) == {1, 4}
        assert selected(mirror, True) == {0}
        assert selected(mirror, 0) == {3}
        assert selected(mirror, [False, "1"]) == {2, 5}
        assert sorted(map(repr, mirror.distinct("meta.flag"))) == ["'1'", "0", "1", "False", "True"]
