"""A persistent store alone on its folder skips the change log (``stores/presence.py``);
stores that share the folder, now or for a while, still see each other's writes."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from lamina.records import Granularity, RawTurn
from lamina.stores import ChromaMemoryStore
from lamina.stores.changelog import ChangeLog
from lamina.stores.mirrors import MirrorCache
from lamina.testing import FakeEmbeddings, alternating_turn

NS = "user:alice"
WORDS = ["heron", "otter", "badger", "falcon", "marten", "plover"]
T0 = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)


def turn(i: int, text: str) -> RawTurn:
    return alternating_turn(NS, i, text, T0)


def open_store(path: Path) -> ChromaMemoryStore:
    return ChromaMemoryStore.persistent(path, embeddings=FakeEmbeddings())


def ids(store: ChromaMemoryStore, query: str, mode: str = "hybrid") -> list[str]:
    return [h.record.id for h in store.search(query, "raw", NS, k=10, mode=mode)]  # type: ignore[arg-type]


def leave(store: ChromaMemoryStore) -> None:
    """What closing (or the end of) a store's process does to its registration."""
    assert store._log.presence is not None
    store._log.presence.close()


@pytest.fixture
def log_calls(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How many slots were claimed and how many reads of the log were made, by any store."""
    counts = {"claim": 0, "since_all": 0}
    for name in counts:
        original = getattr(ChangeLog, name)

        def counted(
            self: ChangeLog, *args: Any, _f: Any = original, _n: str = name, **kw: Any
        ) -> Any:
            counts[_n] += 1
            return _f(self, *args, **kw)

        monkeypatch.setattr(ChangeLog, name, counted)
    return counts


def test_a_store_alone_claims_no_slot_and_reads_no_log(
    tmp_path: Path, log_calls: dict[str, int]
) -> None:
    store = open_store(tmp_path)
    store.add(NS, [turn(i, f"a {WORDS[i]} by the river") for i in range(5)])
    assert ids(store, "falcon", "bm25")[0] == turn(3, "x").id
    log_calls.update(claim=0, since_all=0)
    store.add(NS, [turn(7, "we rode a zeppelin over Lisbon")])
    store.delete("raw", NS, [turn(0, "x").id])
    for _ in range(3):
        assert ids(store, "zeppelin Lisbon")[0] == turn(7, "x").id
    assert log_calls == {"claim": 0, "since_all": 0}

    other = open_store(tmp_path)  # a second registration: both now use the log
    store.add(NS, [turn(8, "a ferry to Porto")])
    assert log_calls["claim"] == 1
    assert ids(store, "ferry Porto", "bm25") == [turn(8, "x").id]
    assert log_calls["since_all"] == 1
    assert ids(other, "ferry Porto", "bm25") == [turn(8, "x").id]


def test_two_stores_on_one_folder_see_each_others_writes_and_forgets(tmp_path: Path) -> None:
    a = open_store(tmp_path)
    early = [turn(i, f"a {WORDS[i]} by the river") for i in range(6)]
    a.add(NS, early)
    assert ids(a, "badger", "bm25")[0] == early[2].id  # a's mirror is warm, alone
    a.delete("raw", NS, [early[0].id])

    b = open_store(tmp_path)  # opened after a wrote alone: reads those writes from its files
    assert b.lexical_index("raw", NS).ids() == {t.id for t in early[1:]}
    assert ids(b, "a marten by the river", "dense")[0] == early[4].id
    assert b._mirrors.replays == 1 and b._mirrors.loads == 0  # from the journal of a's writes

    a.add(NS, [turn(10, "a zeppelin over the harbour")])
    assert ids(b, "zeppelin harbour", "bm25") == [turn(10, "x").id]
    b.add(NS, [turn(11, "an albatross on the mast")])
    b.delete("raw", NS, [early[1].id])
    assert ids(a, "albatross mast", "bm25") == [turn(11, "x").id]
    assert early[1].id not in a.lexical_index("raw", NS).ids()
    a.update(NS, turn(10, "a kite over the dunes"))
    assert ids(b, "zeppelin harbour", "bm25") == [] and ids(b, "kite dunes", "bm25") == [
        turn(10, "x").id
    ]
    live = {r.id for r in a.get("raw", NS)}
    assert a.lexical_index("raw", NS).ids() == b.lexical_index("raw", NS).ids() == live


def test_a_store_that_joined_and_left_is_seen(tmp_path: Path) -> None:
    a = open_store(tmp_path)
    first = [turn(i, f"a {WORDS[i]} by the river") for i in range(4)]
    a.add(NS, first)
    assert ids(a, "otter", "bm25")[0] == first[1].id  # warm and alone

    b = open_store(tmp_path)  # joins, writes and forgets, leaves, all between two searches
    b.add(NS, [turn(20, "a lighthouse in the fog")])
    b.delete("raw", NS, [first[2].id])
    leave(b)

    assert ids(a, "lighthouse fog", "bm25") == [turn(20, "x").id]
    assert first[2].id not in a.lexical_index("raw", NS).ids()
    a.add(NS, [turn(21, "a walrus on the ice")])  # alone again
    cold = open_store(tmp_path)  # replays a journal of claimed and unclaimed writes
    expected = {r.id for r in a.get("raw", NS)}
    assert expected == {first[0].id, first[1].id, first[3].id, turn(20, "x").id, turn(21, "x").id}
    assert cold.lexical_index("raw", NS).ids() == expected
    assert ids(cold, "walrus ice", "dense")[0] == turn(21, "x").id
    assert cold._mirrors.replays == 1 and cold._mirrors.loads == 0


REGISTER = """
import sys, time
from pathlib import Path
from lamina.stores.presence import Presence
Presence(Path(sys.argv[1]))
print("registered", flush=True)
time.sleep(300)
"""


def test_the_registration_of_a_killed_process_does_not_count(
    tmp_path: Path, log_calls: dict[str, int]
) -> None:
    store = open_store(tmp_path)
    root = tmp_path / "lamina-processes" / "lamina"
    child = subprocess.Popen(
        [sys.executable, "-c", REGISTER, str(root)],
        stdout=subprocess.PIPE,
        text=True,
        env={"PYTHONPATH": ":".join(sys.path)},
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "registered"
        store.add(NS, [turn(1, "a heron upstream")])
        assert log_calls["claim"] == 1  # it is alive: shared
    finally:
        child.kill()
        child.wait(timeout=60)
    assert len(list(root.glob("*.live"))) == 2  # its file is still there, unlocked
    store.add(NS, [turn(2, "an otter downstream")])
    assert log_calls["claim"] == 1  # stale: alone again
    assert len(list(root.glob("*.live"))) == 1
    assert ids(store, "otter", "bm25")[0] == turn(2, "x").id


def test_a_write_made_while_a_namespace_loads_reaches_its_mirror(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Alone, no change log carries the write: the load applies it after what it read."""
    store = open_store(tmp_path)
    first = [turn(i, f"a {WORDS[i]} by the river") for i in range(4)]
    store.add(NS, first)
    late = turn(30, "a pelican on the pier")
    original = MirrorCache._cold

    def cold_then_write(self: MirrorCache, gran: Granularity, ns: str) -> Any:
        mirror = original(self, gran, ns)
        monkeypatch.setattr(MirrorCache, "_cold", original)
        store.delete("raw", NS, [first[0].id])  # landed after the load read its rows
        store.add(NS, [late])
        return mirror

    monkeypatch.setattr(MirrorCache, "_cold", cold_then_write)
    assert store.lexical_index("raw", NS).ids() == {t.id for t in first[1:]} | {late.id}
    assert ids(store, "pelican", "bm25") == [late.id]


KILLED_WRITER = """
import os, sys
from datetime import UTC, datetime
from lamina.stores import ChromaMemoryStore, journal
from lamina.testing import FakeEmbeddings, alternating_turn
store = ChromaMemoryStore.persistent(sys.argv[1], embeddings=FakeEmbeddings())
if sys.argv[2] == "shared":  # another live store on the folder: the write claims a slot
    other = ChromaMemoryStore.persistent(sys.argv[1], embeddings=FakeEmbeddings())
    from lamina.stores.changelog import ChangeLog
    ChangeLog.claim = lambda *a, **k: os._exit(9)  # killed after landing, before its slot
else:
    journal.Journals.append = lambda *a, **k: os._exit(9)  # ... before its journal entry
turn = alternating_turn("user:alice", 2, "an otter downstream", datetime(2024, 3, 1, tzinfo=UTC))
store.add("user:alice", [turn])
"""


@pytest.mark.parametrize("mode", ["alone", "shared"])
def test_a_write_whose_process_was_killed_before_recording_it_is_still_found(
    tmp_path: Path, mode: str
) -> None:
    """Killed between landing its rows in Chroma and recording them (slot or journal entry),
    a writer leaves its intent: the next cold load reads Chroma, and both channels find it."""
    first = open_store(tmp_path)
    first.add(NS, [turn(1, "a heron upstream")])
    assert ids(first, "heron", "bm25") == [turn(1, "x").id]
    leave(first)
    killed = subprocess.run(
        [sys.executable, "-c", KILLED_WRITER, str(tmp_path), mode],
        env={"PYTHONPATH": ":".join(sys.path)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert killed.returncode == 9, killed.stderr
    assert list((tmp_path / "lamina-mirrors").rglob("*.intent"))  # the unrecorded write
    again = open_store(tmp_path)
    assert turn(2, "x").id in {r.id for r in again.get("raw", NS)}  # Chroma holds it
    assert ids(again, "otter", "bm25") == [turn(2, "x").id]
    assert ids(again, "an otter downstream", "dense")[0] == turn(2, "x").id
    assert again._mirrors.rebuilds == 1
    assert not list((tmp_path / "lamina-mirrors").rglob("*.intent"))  # covered: cleared
    leave(again)
    third = open_store(tmp_path)  # from the snapshot the rebuild left
    assert ids(third, "otter", "bm25") == [turn(2, "x").id]
    assert third._mirrors.rebuilds == 0


def test_a_completed_write_leaves_no_intent_and_keeps_a_dead_writers(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    store.add(NS, [turn(1, "a heron upstream")])
    assert not list((tmp_path / "lamina-mirrors").rglob("*.intent"))
    journals = store._journals
    assert journals is not None
    leftover = journals.intent_path(Granularity.RAW, NS)
    leftover.write_text('["lost-id"]\n')  # as a killed writer leaves it
    store.add(NS, [turn(2, "an otter downstream")])
    assert leftover.exists()  # not this writer's to clear: a cold load must read Chroma
    leave(store)
    again = open_store(tmp_path)
    assert sorted(ids(again, "heron otter", "bm25")) == sorted([turn(1, "x").id, turn(2, "x").id])
    assert again._mirrors.rebuilds == 1 and not leftover.exists()


def cold_loads(store: ChromaMemoryStore) -> tuple[int, int, int]:
    mirrors = store._mirrors
    assert isinstance(mirrors, MirrorCache)
    return mirrors.loads, mirrors.replays, mirrors.rebuilds


def test_live_warm_mirrors_find_a_write_whose_process_was_killed(tmp_path: Path) -> None:
    """Two live stores share the folder with warm mirrors; a third process is killed between
    landing a turn and claiming its slot. Both find the turn by BM25 and in their keyword
    index without reloading: the first to catch up records it (one slot, one journal entry)."""
    a, b = open_store(tmp_path), open_store(tmp_path)
    a.add(NS, [turn(1, "a heron upstream")])
    assert ids(a, "heron", "bm25") == ids(b, "heron", "bm25") == [turn(1, "x").id]
    before = cold_loads(a), cold_loads(b)
    killed = subprocess.run(
        [sys.executable, "-c", KILLED_WRITER, str(tmp_path), "shared"],
        env={"PYTHONPATH": ":".join(sys.path)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert killed.returncode == 9, killed.stderr
    assert list((tmp_path / "lamina-mirrors").rglob("*.intent"))
    assert turn(2, "x").id in {r.id for r in a.get("raw", NS)}  # Chroma holds it

    assert ids(a, "otter", "bm25") == [turn(2, "x").id]
    assert turn(2, "x").id in a.lexical_index("raw", NS).ids()
    assert not list((tmp_path / "lamina-mirrors").rglob("*.intent"))  # recorded: cleared
    assert ids(b, "otter", "bm25") == [turn(2, "x").id]  # from the slot a claimed for it
    assert turn(2, "x").id in b.lexical_index("raw", NS).ids()
    assert ids(b, "an otter downstream", "dense")[0] == turn(2, "x").id
    assert (cold_loads(a), cold_loads(b)) == before  # no mirror was loaded again
    assert isinstance(a._mirrors, MirrorCache) and isinstance(b._mirrors, MirrorCache)
    assert (a._mirrors.adopted, b._mirrors.adopted) == (1, 0)

    leave(a)
    leave(b)
    cold = open_store(tmp_path)  # replays the journal entry a wrote for the dead writer
    assert ids(cold, "otter", "bm25") == [turn(2, "x").id]
    assert cold_loads(cold) == (0, 1, 0)


def test_an_intent_whose_writer_is_live_and_writing_is_left_to_it(tmp_path: Path) -> None:
    """An intent of a live registration, its namespace lock held (a write in flight), is not
    recorded by a search, which does not wait for it; once the lock is free it is."""
    a, b = open_store(tmp_path), open_store(tmp_path)
    a.add(NS, [turn(1, "a heron upstream")])
    assert ids(a, "heron", "bm25") == [turn(1, "x").id]
    journals, presence = b._journals, b._log.presence
    assert journals is not None and presence is not None
    writing, done = threading.Event(), threading.Event()

    def in_flight() -> None:  # b's write between its note and its record
        with journals.writing(Granularity.RAW, NS):
            journals.mark_intent(Granularity.RAW, NS, [turn(1, "x").id], presence.path.name)
            writing.set()
            done.wait(timeout=60)

    holder = threading.Thread(target=in_flight)
    holder.start()
    try:
        assert writing.wait(timeout=60)
        started = time.monotonic()
        assert ids(a, "heron", "bm25") == [turn(1, "x").id]
        assert time.monotonic() - started < 30  # did not wait for the write
        assert isinstance(a._mirrors, MirrorCache) and a._mirrors.adopted == 0
        assert journals.intent_path(Granularity.RAW, NS).exists()
    finally:
        done.set()
        holder.join(timeout=60)
    # its write ended without recording (an error in a live process): the lock is free now
    assert ids(a, "heron", "bm25") == [turn(1, "x").id]
    assert a._mirrors.adopted == 1 and not journals.intent_path(Granularity.RAW, NS).exists()


def test_a_registration_is_alive_while_its_store_holds_it(tmp_path: Path) -> None:
    a, b = open_store(tmp_path), open_store(tmp_path)
    pa, pb = a._log.presence, b._log.presence
    assert pa is not None and pb is not None
    assert pa.alive(pa.path.name) and pa.alive(pb.path.name)
    assert not pa.alive("1-gone.live") and not pa.alive("../x.live")
    leave(b)
    assert not pa.alive(pb.path.name)
