"""NamespaceMirror: filter masks agree with SearchFilter's predicate, dense ranking is
exact, and vectors stay with their records through deletes and compaction."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from lamina.records import Granularity, RawTurn
from lamina.stores import TimeWindow
from lamina.stores.bm25 import BM25Index
from lamina.stores.codec import to_metadata
from lamina.stores.filters import SearchFilter
from lamina.stores.mirror import MirrorRow, NamespaceMirror

NS = "user:alice"
T0 = datetime(2024, 1, 1, tzinfo=UTC)
SPEAKERS = ["Alice", "Theo", "Mia"]
WORDS = "dog park bread oven trail summit pottery bowl bakery loan beach kite".split()


def rows(n: int, seed: int, dim: int = 16) -> list[MirrorRow]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        turn = RawTurn(
            namespace=NS,
            text=" ".join(rng.choice(WORDS) for _ in range(5)),
            speaker=rng.choice(SPEAKERS),
            session_id=f"s{i % 7}",
            turn_index=i,
            occurred_at=T0 + timedelta(hours=i),
            consolidated_into=["e1"] if i % 5 == 0 else [],
        )
        vector = [rng.gauss(0, 1) for _ in range(dim)]
        out.append(MirrorRow(turn.id, turn.text, to_metadata(turn), vector))
    return out


def mirror_of(data: list[MirrorRow]) -> NamespaceMirror:
    mirror = NamespaceMirror(Granularity.RAW, NS)
    mirror.upsert_rows(data)
    return mirror


def brute_force(data: list[MirrorRow], query: np.ndarray, flt: SearchFilter, k: int) -> list[str]:
    test = flt.predicate(Granularity.RAW)
    scored = []
    for row in data:
        if test(row.metadata):
            v = np.asarray(row.vector, dtype=np.float32)
            scored.append((-float(v @ query / np.linalg.norm(v)), row.record_id))
    return [rid for _, rid in sorted(scored)[:k]]


FILTERS = [
    SearchFilter(NS),
    SearchFilter(NS, where={"speaker": "Theo"}),
    SearchFilter(NS, where={"speaker": ["Theo", "Mia"], "consolidated": False}),
    SearchFilter(NS, TimeWindow.between(T0 + timedelta(hours=30), T0 + timedelta(hours=90))),
    SearchFilter(NS, TimeWindow.after_(T0 + timedelta(hours=150)), where={"session_id": "s3"}),
    SearchFilter(NS, where={"speaker": "Nobody"}),
    SearchFilter("user:bob"),
]


@pytest.mark.parametrize("flt", FILTERS)
def test_the_mask_agrees_with_the_predicate_and_dense_is_exact(flt: SearchFilter) -> None:
    data = rows(200, seed=1)
    mirror = mirror_of(data)
    allowed = mirror.allowed(flt)
    test = flt.predicate(Granularity.RAW)
    assert set(mirror.window_ids(allowed)) == {r.record_id for r in data if test(r.metadata)}
    query = np.asarray(rows(1, seed=99)[0].vector, dtype=np.float32)
    query /= np.linalg.norm(query)
    got = [rid for rid, _ in mirror.dense(list(query), 10, allowed)]
    assert got == brute_force(data, query, flt, 10)
    lexical = mirror.search("bakery oven", 10, allowed=allowed)
    assert all(test(data_by_id(data)[h.record_id].metadata) for h in lexical)


def data_by_id(data: list[MirrorRow]) -> dict[str, MirrorRow]:
    return {r.record_id: r for r in data}


def test_vectors_follow_their_records_through_deletes_updates_and_compaction() -> None:
    data = rows(3000, seed=2)
    mirror = mirror_of(data)
    doomed = [r.record_id for r in data[:2600]]
    mirror.delete(doomed)  # more than half dead: the slots are compacted
    assert len(mirror._ids) < 3000
    kept = data[2600:]
    moved = [MirrorRow(r.record_id, r.text, r.metadata, [-x for x in r.vector]) for r in kept[:50]]
    mirror.upsert_rows(moved)  # updates flip the vector of 50 records
    current = moved + kept[50:]
    flt = SearchFilter(NS, where={"speaker": "Alice"})
    for seed in range(5):
        query = np.asarray(rows(1, seed=100 + seed)[0].vector, dtype=np.float32)
        query /= np.linalg.norm(query)
        got = [rid for rid, _ in mirror.dense(list(query), 8, mirror.allowed(flt))]
        assert got == brute_force(current, query, flt, 8)
    assert mirror.ids() == {r.record_id for r in current}
    for row in current[:20]:
        v = np.asarray(row.vector) / np.linalg.norm(row.vector)
        assert np.allclose(mirror.vector(row.record_id), v, atol=1e-6)  # type: ignore[arg-type]


def test_distinct_values_come_from_the_column_as_the_index_would_list_them() -> None:
    data = rows(3000, seed=4)
    mirror = mirror_of(data)
    plain = BM25Index()
    plain.upsert((r.record_id, r.text, r.metadata) for r in data)

    def both(key: str, limit: int = 64) -> tuple[list[object], list[object]]:
        return mirror.distinct(key, limit), plain.distinct(key, limit)

    ours, theirs = both("speaker")
    assert ours == theirs and len(ours) == 3  # newest first
    last_mia = max(n for n, r in enumerate(data) if r.metadata["speaker"] == "Mia")
    gone = [r.record_id for r in data[last_mia - 2500 : last_mia + 1]]
    gone += [r.record_id for r in data if r.metadata["speaker"] == "Mia"]
    mirror.delete(gone)  # compacts, and no Mia turn is left
    plain.delete(gone)
    ours, theirs = both("speaker")
    assert ours == theirs and "Mia" not in ours
    added = rows(1, seed=5)[0]
    row = MirrorRow("late", added.text, {**added.metadata, "speaker": "Zoë"}, added.vector)
    mirror.upsert_rows([row])
    plain.upsert([(row.record_id, row.text, row.metadata)])
    ours, theirs = both("speaker")
    assert ours == theirs and ours[0] == "Zoë"
    assert both("speaker", 1) == (["Zoë"], ["Zoë"])
    assert both("session_id")[0] == both("session_id")[1]
    assert both("no such field") == ([], [])


def test_rows_of_another_namespace_never_enter() -> None:
    data = rows(5, seed=3)
    stray = MirrorRow("x", "bakery", {**data[0].metadata, "namespace": "user:bob"}, data[0].vector)
    mirror = mirror_of([*data, stray])
    assert "x" not in mirror.ids() and len(mirror) == 5


def test_the_size_estimate_grows_and_shrinks_with_the_records() -> None:
    mirror = NamespaceMirror(Granularity.RAW, NS)
    empty = mirror.nbytes()
    data = rows(500, seed=4, dim=384)
    mirror.upsert_rows(data)
    full = mirror.nbytes()
    assert full - empty >= 500 * 384 * 4
    mirror.delete([r.record_id for r in data[:400]])
    assert mirror.nbytes() < full
