"""Mirror journals: a cold store on a persistent path replays a namespace's journal
instead of reading its rows from Chroma, and never serves what the journal cannot prove."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from lamina.records import Granularity, RawTurn
from lamina.stores import ChromaMemoryStore, journal_format
from lamina.stores import journal as journal_module
from lamina.testing import FakeEmbeddings, alternating_turn

NS, OTHER = "user:alice", "user:bob"
T0 = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)
RAW = Granularity.RAW


def turn(ns: str, i: int, text: str) -> RawTurn:
    return alternating_turn(ns, i, text, T0)


def open_store(path: Path) -> ChromaMemoryStore:
    return ChromaMemoryStore.persistent(path, embeddings=FakeEmbeddings())


def ids(store: ChromaMemoryStore, query: str, mode: str = "hybrid", ns: str = NS) -> list[str]:
    return [h.record.id for h in store.search(query, "raw", ns, k=10, mode=mode)]  # type: ignore[arg-type]


def write_whole_namespace(journals, rows, position: int) -> None:  # type: ignore[no-untyped-def]
    """Replace the journal by one whole-namespace entry, as versions before snapshots did."""
    entry = journal_format.encode_entry(0, position, rows, (), base=True)
    journals.path(RAW, NS).write_bytes(journals._header(RAW, NS) + entry)


@pytest.fixture
def written(tmp_path: Path) -> tuple[ChromaMemoryStore, list[RawTurn]]:
    store = open_store(tmp_path)
    turns = [turn(NS, i, f"kite flying on windy hill number {i}") for i in range(30)]
    for i in range(0, 30, 10):
        store.add(NS, turns[i : i + 10])
    store.delete("raw", NS, [turns[3].id])
    store.update(NS, turns[4].model_copy(update={"text": "a paper boat on the canal"}))
    return store, turns


def test_a_cold_store_replays_the_journal_and_matches_a_chroma_build(written, tmp_path) -> None:  # type: ignore[no-untyped-def]
    writer, turns = written
    cold = open_store(tmp_path)
    assert ids(cold, "paper boat canal", "bm25")[0] == turns[4].id
    assert cold._mirrors.replays == 1 and cold._mirrors.loads == 0  # no row read from Chroma
    live, built = cold.lexical_index("raw", NS), cold._mirrors.load(RAW, NS)
    assert live.ids() == built.ids() == {t.id for t in turns} - {turns[3].id}
    assert live.scores("kite windy hill 7") == built.scores("kite windy hill 7")
    for t in (turns[0], turns[29]):
        assert ids(cold, t.text, "dense")[0] == t.id
        assert cold.search(t.text, "raw", NS, k=1, mode="dense")[0].score == pytest.approx(
            writer.search(t.text, "raw", NS, k=1, mode="dense")[0].score
        )


def test_a_write_the_journal_missed_is_read_from_the_change_log(
    written, tmp_path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    writer, turns = written

    def lost(*args: object, **kwargs: object) -> None:
        raise OSError("disk full")

    late = turn(NS, 40, "a zeppelin drifted past the kites")
    with monkeypatch.context() as patch:
        patch.setattr(journal_module.Journals, "append", lost)
        writer.add(NS, [late])
        writer.delete("raw", NS, [turns[5].id])
    writer.add(NS, [turn(NS, 41, "after the gap")])  # journalled, but after an uncovered slot
    cold = open_store(tmp_path)
    assert ids(cold, "zeppelin", "bm25") == [late.id]
    assert ids(cold, "zeppelin drifted past the kites", "dense")[0] == late.id
    assert turns[5].id not in cold.lexical_index("raw", NS).ids()
    assert cold.lexical_index("raw", NS).ids() == {r.id for r in writer.get("raw", NS)}
    assert cold._mirrors.replays == 1


def test_a_write_after_a_compacted_journal_is_seen(written, tmp_path) -> None:  # type: ignore[no-untyped-def]
    writer, _ = written
    first = open_store(tmp_path)
    write_whole_namespace(
        first._mirrors.journals,
        first.lexical_index("raw", NS).rows(),  # type: ignore[attr-defined]
        first.lexical_index("raw", NS).position,  # type: ignore[attr-defined]
    )
    late = turn(NS, 50, "an albatross on the mast")
    writer.add(NS, [late])
    cold = open_store(tmp_path)
    assert ids(cold, "albatross", "bm25") == [late.id]
    assert cold._mirrors.replays == 1 and cold._mirrors.loads == 0


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage"])
def test_a_damaged_journal_is_never_trusted(written, tmp_path, damage) -> None:  # type: ignore[no-untyped-def]
    writer, turns = written
    path = writer._mirrors.journals.path(RAW, NS)  # type: ignore[union-attr]
    data = bytearray(path.read_bytes())
    if damage == "truncate":
        data = data[: len(data) // 2]
    elif damage == "flip":
        data[len(data) // 3] ^= 0xFF
    else:
        data = bytearray(b"not a journal at all\n" * 40)
    path.write_bytes(bytes(data))
    cold = open_store(tmp_path)
    expected = {r.id for r in writer.get("raw", NS)}
    assert cold.lexical_index("raw", NS).ids() == expected
    assert ids(cold, "paper boat canal", "bm25")[0] == turns[4].id
    assert cold.lexical_index("raw", NS).scores("kite") == cold._mirrors.load(RAW, NS).scores(
        "kite"
    )


def test_another_tenants_journal_is_ignored(written, tmp_path) -> None:  # type: ignore[no-untyped-def]
    writer, _ = written
    writer.add(OTHER, [turn(OTHER, 1, "bob keeps bees")])
    journals = writer._mirrors.journals
    assert journals is not None
    journals.path(RAW, OTHER).write_bytes(journals.path(RAW, NS).read_bytes())
    cold = open_store(tmp_path)
    assert ids(cold, "kite windy hill", "bm25", ns=OTHER) == []
    assert ids(cold, "kite windy hill", ns=OTHER) == [turn(OTHER, 1, "x").id]
    assert cold.lexical_index("raw", OTHER).ids() == {turn(OTHER, 1, "x").id}
    assert cold._mirrors.loads == 1  # rebuilt from Chroma, and the journal replaced


def test_a_wiped_namespace_leaves_no_journal_to_replay(written, tmp_path) -> None:  # type: ignore[no-untyped-def]
    writer, _ = written
    writer.delete_namespace(NS)
    again = turn(NS, 60, "a fresh start with kites")
    writer.add(NS, [again])
    cold = open_store(tmp_path)
    assert cold.lexical_index("raw", NS).ids() == {again.id}
    assert ids(cold, "kite") == [again.id]


def test_a_collection_made_again_makes_old_journals_foreign(tmp_path) -> None:  # type: ignore[no-untyped-def]
    first = open_store(tmp_path)
    first.add(NS, [turn(NS, 1, "an old kite")])
    old = first._mirrors.journals.path(RAW, NS).read_bytes()  # type: ignore[union-attr]
    for name in [c.name for c in first.client.list_collections()]:
        first.client.delete_collection(name)
    second = open_store(tmp_path)
    second.add(NS, [turn(NS, 2, "a new balloon")])
    second._mirrors.journals.path(RAW, NS).write_bytes(old)  # type: ignore[union-attr]
    cold = open_store(tmp_path)
    assert ids(cold, "kite balloon", "bm25") == [turn(NS, 2, "x").id]


def test_an_ephemeral_store_keeps_no_journal() -> None:
    store = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    assert store._mirrors.journals is None


def test_entry_heads_decode_fast_and_still_read_what_only_json_writes() -> None:
    """Replay decodes entry heads with orjson; a head holding NaN (``json`` writes it,
    orjson refuses it) is still read, through ``json``."""
    import math

    head = journal_format._decode(b'{"ids": ["a"], "x": 1.5}')
    assert head == {"ids": ["a"], "x": 1.5}
    assert math.isnan(journal_format._decode(b'{"x": NaN}')["x"])


def test_a_whole_namespace_entry_at_slot_zero_is_replayed_without_a_snapshot(written) -> None:  # type: ignore[no-untyped-def]
    # Versions before snapshots compacted a namespace loaded before any slot was claimed
    # into one whole-namespace entry at slot 0. Without a snapshot nothing is covered yet:
    # such an entry is the namespace, not something to skip (the bug served an empty mirror).
    writer, turns = written
    journals = writer._mirrors.journals
    rows = writer.lexical_index("raw", NS).rows()  # type: ignore[attr-defined]
    write_whole_namespace(journals, rows, 0)
    replay = journals.read(RAW, NS)  # type: ignore[union-attr]
    assert replay is not None and replay.based and replay.entries == 1
    assert set(replay.rows) == {t.id for t in turns} - {turns[3].id}
    covered = journals.read(RAW, NS, start=0)  # type: ignore[union-attr]
    assert covered is not None and covered.rows == {} and covered.entries == 0  # snapshot holds it
