"""Erasure: after forget, no byte of the store's data folder holds the forgotten text.

On a persistent Chroma and on Postgres, a namespace gets 24 items, each a raw turn, a
fact, an episode and a scene carrying marker words of their own (plus a kept neighbour
turn that quotes the turn, a profile line and an audit entry). 24 forgets then remove
raw, fact, episode and scene text by ids and by subject, and every file of the data
folder is read whole, as bytes, for every marker: a forgotten marker is found 0 times,
and every marker that was not forgotten is still found (so the scan can fail).

On Postgres the data folder is the cluster's, read after a ``CHECKPOINT`` (so the table
files hold what the database holds), except ``pg_wal``: the write-ahead log is the
operator's to retire, as docs/concepts/forgetting.md says.

Also: a Memory's own files (checkpoints, reply cache) after ``Memory.forget``; the user's
report replayed through the CLI (``lamina ingest``, ``lamina forget --subject``, grep); a
restarted Chroma reading the scrubbed files; one erasure for many forgets in a deferred
block; and the refusals of ``erase``. Each grep test fails on the code before erasure.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from lamina.memory.forget import forget
from lamina.records import (
    AuditEntry,
    EpisodeRecord,
    FactRecord,
    Granularity,
    ProfileRecord,
    RawTurn,
    SceneRecord,
)
from lamina.stores import ChromaMemoryStore
from lamina.testing import FakeEmbeddings

NS = "user:erasure"
OTHER = "user:neighbour"
T0 = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)
ITEMS = 24
KINDS = ("raw", "fact", "episode", "scene")
"""A turn's marker is also quoted in its neighbour's context: forgetting the turn cuts it."""


@dataclass
class Item:
    """The markers of one item: a word per kind of text, unique to this run."""

    n: int
    tag: str = field(default_factory=lambda: uuid.uuid4().hex[:8])

    def marker(self, kind: str) -> str:
        return f"zq{kind[:3]}{self.n:02d}x{self.tag}"

    def ids(self) -> dict[str, str]:
        return {k: f"{k}-{self.n}" for k in ("raw", "fact", "episode", "scene")}


def populate(store: Any, items: list[Item], between: Callable[[int], None]) -> None:
    """Each item in its own writes (so the mirror files hold many entries)."""
    for item in items:
        ids, n = item.ids(), item.n
        when = T0 + timedelta(minutes=2 * n)
        turn = f"My locker code is {item.marker('raw')} since spring"
        store.add(
            NS,
            [
                RawTurn(
                    id=ids["raw"], namespace=NS, text=turn, speaker="Ana", session_id="s1",
                    turn_index=2 * n, occurred_at=when, consolidated_into=[ids["episode"]],
                ),
                RawTurn(
                    id=f"next-{n}", namespace=NS, text=f"Noted, keeper{n:02d} {item.tag}",
                    speaker="Bo", session_id="s1", turn_index=2 * n + 1,
                    occurred_at=when + timedelta(minutes=1), context=f"Ana: {turn}",
                ),
            ],
        )  # fmt: skip
        store.add(
            NS,
            [
                FactRecord(
                    id=ids["fact"], namespace=NS, subject="Ana", source_ids=[ids["raw"]],
                    text=f"Ana's locker code is {item.marker('fact')}", occurred_at=when,
                    valid_from=when,
                )
            ],
        )  # fmt: skip
        store.add(
            NS,
            [
                EpisodeRecord(
                    id=ids["episode"], namespace=NS, title=f"Locker {item.marker('episode')}",
                    text=f"Ana set her locker code {item.marker('episode')}",
                    source_ids=[ids["raw"]], occurred_at=when,
                )
            ],
        )  # fmt: skip
        store.add(
            NS,
            [
                SceneRecord(
                    id=ids["scene"], namespace=NS, title="Lockers",
                    text=f"Ana's lockers over time {item.marker('scene')}",
                    members=[ids["episode"]], source_ids=[ids["raw"]], occurred_at=when,
                )
            ],
        )  # fmt: skip
        store.append_audit(
            AuditEntry(
                id=f"audit-{n}", at=when, namespace=NS, actor="refresher", action="supersede",
                granularity="fact", target_id=ids["fact"], before="an older code",
                after=f"Ana's locker code is {item.marker('fact')}",
            )
        )  # fmt: skip
        between(n)
    store.put_profile(
        ProfileRecord(
            namespace=NS,
            explicit_facts=[f"Locker code is {item.marker('fact')}" for item in items],
            implicit_traits=["Organised"],
        )
    )
    other = RawTurn(
        namespace=OTHER, text="Unrelated", speaker="Cy", session_id="s9", turn_index=0,
        occurred_at=T0,
    )  # fmt: skip
    store.add(OTHER, [other])


def forget_all_items(store: Any, items: list[Item]) -> dict[str, set[str]]:
    """24 forgets of four kinds; returns the markers that must be gone and those that stay."""
    gone: set[str] = set()
    for item in items:
        ids, mode = item.ids(), item.n % 4
        if mode == 0:  # the turn by id: its fact, episode and scene follow, its quote is cut
            result = forget(store, NS, memory_ids=[ids["raw"]])
            gone |= {item.marker(k) for k in KINDS}
        elif mode == 1:  # the turn by subject: the same cascade
            result = forget(store, NS, subject=item.marker("raw"))
            gone |= {item.marker(k) for k in KINDS}
        elif mode == 2:  # the derived records only, by id: the turn stays
            result = forget(store, NS, memory_ids=[ids["fact"], ids["episode"], ids["scene"]])
            gone |= {item.marker(k) for k in ("fact", "episode", "scene")}
        else:  # the fact by subject (and the profile line, the audit text): the rest stays
            result = forget(store, NS, subject=item.marker("fact"))
            gone.add(item.marker("fact"))
        assert result.count >= 1, (item.n, result)
    every = {item.marker(k) for item in items for k in KINDS}
    return {"gone": gone, "kept": every - gone}


def scan(folder: Path, markers: set[str], skip: Callable[[Path], bool]) -> dict[str, list[str]]:
    """Files under ``folder`` (every byte, case-folded) holding each marker."""
    wanted = {m: m.encode() for m in markers}
    found: dict[str, list[str]] = {m: [] for m in markers}
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not skip(Path(root) / d)]
        for name in files:
            path = Path(root) / name
            if skip(path):
                continue
            try:
                data = path.read_bytes().lower()
            except OSError:
                continue  # removed while walking (a temporary file), or a socket
            for marker, needle in wanted.items():
                if needle in data:
                    found[marker].append(str(path.relative_to(folder)))
    return found


@pytest.fixture
def chroma_case(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Any, Any]]:
    """A persistent Chroma whose first half of items went into mirror snapshots."""
    folder = tmp_path / "data"
    store = ChromaMemoryStore.persistent(folder / "chroma", embeddings=FakeEmbeddings())
    for gran in Granularity:
        store.lexical_index(gran, NS)  # warm mirrors: forget keeps them in step

    def between(n: int) -> None:
        merge = 0 if n < ITEMS // 2 else 2 << 20  # early items: folded into snapshots
        monkeypatch.setattr("lamina.stores.journal.MERGE_BYTES", merge)

    def check(markers: set[str]) -> dict[str, list[str]]:
        return scan(folder, markers, lambda p: False)

    yield (store, between), check


@pytest.fixture
def postgres_case(make_postgres_store: Callable[..., Any]) -> Iterator[tuple[Any, Any]]:
    """A Postgres store; its data folder is the cluster's, read after a checkpoint."""
    store = make_postgres_store()
    with store.pool.connection() as conn:
        folder = Path(str(conn.execute("SHOW data_directory").fetchone()[0]))

    def check(markers: set[str]) -> dict[str, list[str]]:
        with store.pool.connection() as conn:
            conn.autocommit = True
            conn.execute("CHECKPOINT")
            conn.autocommit = False
        return scan(folder, markers, lambda p: p.name == "pg_wal")

    yield (store, lambda n: None), check


@pytest.fixture(params=["chroma", "postgres"])
def case(request: pytest.FixtureRequest) -> Any:
    return request.getfixturevalue(f"{request.param}_case")


def test_forgotten_text_is_in_no_file_of_the_data_folder(case: Any) -> None:
    (store, between), check = case
    items = [Item(n) for n in range(ITEMS)]
    populate(store, items, between)
    every = {item.marker(k) for item in items for k in KINDS}
    before = check(every)
    assert [m for m, files in before.items() if not files] == []  # the scan sees them all

    markers = forget_all_items(store, items)
    assert len(markers["gone"]) == 12 * 4 + 6 * 3 + 6 and markers["kept"]
    after = check(every)
    left = {m: files for m, files in after.items() if m in markers["gone"] and files}
    assert left == {}, f"forgotten text still on disk: {left}"
    lost = sorted(m for m in markers["kept"] if not after[m])
    assert lost == [], f"text that was not forgotten is missing from the files: {lost}"


def test_the_store_still_answers_after_erasure(case: Any) -> None:
    """The rewritten files serve every kept record, by get and by both search channels."""
    (store, between), _ = case
    items = [Item(n) for n in range(8)]
    populate(store, items, between)
    forget_all_items(store, items)
    kept_raw = sorted(r.id for r in store.get("raw", NS))
    assert kept_raw == sorted(
        [f"next-{i.n}" for i in items] + [f"raw-{i.n}" for i in items if i.n % 4 >= 2]
    )
    item = items[3]  # its turn, episode and scene stay; its fact was forgotten
    for gran in ("raw", "episode", "scene"):
        [record] = store.get(gran, NS, [f"{gran}-3"])
        for mode in ("bm25", "dense", "hybrid"):
            # the marker alone for the lexical channel; the record's own text for the dense
            # one, whose fake vectors of a one-word query rank by chance (~2% of tags missed)
            query = item.marker(gran) if mode == "bm25" else record.text
            hits = store.search(query, gran, NS, k=3, mode=mode)
            assert f"{gran}-3" in [h.record.id for h in hits], (gran, mode)
    assert store.search(item.marker("fact"), "fact", NS, k=3, mode="bm25") == []
    [neighbour] = store.get("raw", NS, ["next-0"])
    assert neighbour.context is None  # it quoted a forgotten turn


# --------------------------------------------------------------- the Memory's files
def test_memory_forget_erases_its_checkpoints_and_reply_cache(tmp_path: Path) -> None:
    """Memory.add with a model writes checkpoints and a reply cache beside Chroma; a forget
    leaves none of the forgotten text in any file of the data folder."""
    from lamina import Memory, MemoryConfig
    from lamina.testing import SchemaChatModel

    gone, kept = Item(0), Item(1)

    def construction(messages: list[Any]) -> str:
        text = "\n".join(str(m.content) for m in messages)
        item = gone if gone.marker("raw") in text else kept
        return (
            f"T|Locker {item.marker('episode')}\nS|Ana set her code {item.marker('episode')}\n"
            f"F|t1|Ana|Ana's locker code is {item.marker('fact')}"
        )

    model = SchemaChatModel().script("ConstructionLines", *[construction] * 8)
    folder = tmp_path / "data"
    config = MemoryConfig(data_dir=folder)
    with Memory(config=config, chat_model=model, embeddings=FakeEmbeddings()) as memory:
        for n, item in enumerate((gone, kept)):
            memory.add(
                [{"role": "user", "content": f"My locker code is {item.marker('raw')}"}],
                namespace=NS,
                speaker="Ana",
                session_id=f"s{n}",
                at=T0 + timedelta(days=n),
                session_closed=True,
            )
        markers = {i.marker(k) for i in (gone, kept) for k in ("raw", "fact", "episode")}
        before = scan(folder, markers, lambda p: False)
        assert all(before.values()), before  # the scan sees every marker somewhere
        files = {f.split("-wal")[0] for found in before.values() for f in found}
        assert files >= {"checkpoints.sqlite", "construction_journal.sqlite"}, files
        result = memory.forget(namespace=NS, subject=gone.marker("raw"))
        assert result.deleted.get("raw")
    after = scan(folder, markers, lambda p: False)
    left = {m: f for m, f in after.items() if m.endswith(gone.tag) and f}
    assert left == {}, f"forgotten text still on disk: {left}"
    assert after[kept.marker("raw")], "the other turn must still be stored"


RESTART = """
import json, sys
from lamina.records import Granularity
from lamina.stores import ChromaMemoryStore
from lamina.testing import FakeEmbeddings
store = ChromaMemoryStore.persistent(sys.argv[1], embeddings=FakeEmbeddings())
ns = sys.argv[2]
out = {g.value: sorted(r.id for r in store.get(g, ns)) for g in Granularity}
out["dense"] = [h.record.id for h in store.search(sys.argv[4], "raw", ns, k=2, mode="dense")]
out["bm25"] = [h.record.id for h in store.search(sys.argv[3], "raw", ns, k=2, mode="bm25")]
print(json.dumps(out))
"""


def test_a_restarted_chroma_store_reads_the_erased_files_whole(
    chroma_case: tuple[Any, Any], tmp_path: Path
) -> None:
    """Chroma replays its scrubbed queue on a restart: a new process (on a copy of the folder,
    as Chroma rewrites files it opens) finds every kept record, and searches them."""
    import json
    import shutil
    import subprocess
    import sys

    (store, between), _ = chroma_case
    items = [Item(n) for n in range(8)]
    populate(store, items, between)
    forget_all_items(store, items)
    expected = {g.value: sorted(r.id for r in store.get(g, NS)) for g in Granularity}
    copy = tmp_path / "copy"
    shutil.copytree(tmp_path / "data" / "chroma", copy)
    probe = items[2].marker("raw")  # its turn stayed
    [turn] = store.get("raw", NS, ["raw-2"])  # the dense probe: its text (a marker alone
    # ranks by chance under the fake vectors)
    run = subprocess.run(
        [sys.executable, "-c", RESTART, str(copy), NS, probe, turn.text],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    found = json.loads(run.stdout.strip().splitlines()[-1])
    assert {g: found[g] for g in expected} == expected
    assert "raw-2" in found["dense"] and "raw-2" in found["bm25"]  # its neighbour quotes it


def test_forgets_in_a_deferred_block_erase_once_when_it_ends(
    chroma_case: tuple[Any, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bulk removal pays for one rewrite: the erasure waits for the block's end, and
    covers every namespace forgotten in."""
    from lamina.stores.erasure import PARTS, erasure_deferred

    (store, between), check = chroma_case
    items = [Item(n) for n in range(8)]
    populate(store, items, between)
    calls: list[tuple[str, tuple[str, ...]]] = []
    erase = type(store).erase

    def counted(self: Any, namespaces: Any, parts: Any = PARTS) -> float:
        calls.append((tuple(namespaces), tuple(parts)))
        return erase(self, namespaces, parts)

    monkeypatch.setattr(type(store), "erase", counted)
    every = {item.marker(k) for item in items for k in KINDS}
    with erasure_deferred():
        markers = forget_all_items(store, items)
        forget(store, OTHER, memory_ids=[r.id for r in store.get("raw", OTHER)])
        assert calls == []
        inside = check(every)
        assert any(inside[m] for m in markers["gone"])  # deleted, not yet erased
    assert calls == [((NS, OTHER), PARTS)]  # one rewrite for both namespaces
    after = check(every)
    assert {m: f for m, f in after.items() if m in markers["gone"] and f} == {}
    assert all(after[m] for m in markers["kept"])


def test_erase_refuses_unknown_parts_and_a_postgres_transaction(case: Any) -> None:
    """Bad input is refused before any rewrite; Postgres vacuums only after a commit."""
    from lamina.errors import InvalidInputError

    (store, _), _ = case
    with pytest.raises(InvalidInputError, match="parts must be among"):
        store.erase(NS, ["raw", "profiles"])
    with pytest.raises(InvalidInputError, match="a list"):
        store.erase(NS, "raw")
    if hasattr(store, "atomic"):
        with pytest.raises(InvalidInputError, match="inside store.atomic"), store.atomic():
            store.erase(NS)
    assert store.erase([NS, OTHER]) >= 0.0  # an empty store erases without error


def test_lamina_forget_then_grep_of_the_data_dir_finds_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The user's report, replayed: ``lamina ingest``, ``lamina forget --subject``, grep."""
    import json

    from lamina import Memory, MemoryConfig
    from lamina.cli import main
    from lamina.testing import SchemaChatModel

    number, kept = "07700 900123", "zqkeptx" + uuid.uuid4().hex[:8]

    def construction(messages: list[Any]) -> str:
        text = "\n".join(str(m.content) for m in messages)
        said = number if number in text else kept
        return f"T|Phone\nS|Ana gave her number {said}\nF|t1|Ana|Ana's number is {said}"

    model = SchemaChatModel().script("ConstructionLines", *[construction] * 8)

    def factory(config: MemoryConfig) -> Memory:
        return Memory(config=config, embeddings=FakeEmbeddings(), chat_model=model)

    folder = tmp_path / "data"
    turns = tmp_path / "turns.jsonl"
    said = {"s1": f"Call me on {number}", "s2": f"My locker is {kept}"}
    lines = [
        {
            "speaker": "Ana",
            "text": text,
            "session_id": session,
            "occurred_at": f"2024-05-0{n}T18:20:00Z",
        }
        for n, (session, text) in enumerate(said.items(), start=8)
    ]
    turns.write_text("".join(json.dumps(line) + "\n" for line in lines))
    common = ["-n", NS, "--data-dir", str(folder)]
    assert main(["ingest", str(turns), *common], memory_factory=factory) == 0
    assert scan(folder, {number}, lambda p: False)[number]  # the number was written
    assert main(["forget", "--subject", number, *common], memory_factory=factory) == 0
    capsys.readouterr()
    after = scan(folder, {number, kept}, lambda p: False)
    assert after[number] == [], after[number]
    assert after[kept]  # the other session is still stored


def test_the_postgres_checkpointer_keeps_no_thread_of_a_forgotten_namespace(
    postgres_dsn: str,
) -> None:
    """Checkpoints in Postgres: the namespace's threads are deleted and the tables rewritten,
    so the cluster's table files no longer hold their state; other namespaces' stay."""
    from langgraph.checkpoint.base import empty_checkpoint

    from lamina import MemoryConfig
    from lamina.graphs.checkpoint import open_checkpointer
    from lamina.memory.erasure import erase_memory_files

    gone, kept = Item(0), Item(1)
    with open_checkpointer(postgres_dsn) as saver:
        for ns, item in ((NS, gone), (OTHER, kept)):
            state = empty_checkpoint()
            state["channel_values"] = {"turns": f"My locker code is {item.marker('raw')}"}
            state["channel_versions"] = {"turns": 1}
            config: Any = {"configurable": {"thread_id": f"{ns}/add/x", "checkpoint_ns": ""}}
            saver.put(config, state, {}, {"turns": 1})
    import psycopg

    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        folder = Path(str(conn.execute("SHOW data_directory").fetchone()[0]))
        conn.execute("CHECKPOINT")
        markers = {gone.marker("raw"), kept.marker("raw")}
        assert all(scan(folder, markers, lambda p: p.name == "pg_wal").values())
        config = MemoryConfig(checkpointer=postgres_dsn)
        erase_memory_files(config, NS, own_persistent_store=False, checkpointer=None)
        conn.execute("CHECKPOINT")
        after = scan(folder, markers, lambda p: p.name == "pg_wal")
    assert after[gone.marker("raw")] == []
    assert after[kept.marker("raw")]


def test_a_writer_running_beside_the_erasure_loses_nothing(
    chroma_case: tuple[Any, Any], tmp_path: Path
) -> None:
    """Erasure holds the store's locks while it rewrites: another thread's adds to the same
    namespace all land, and a cold mirror (from the rewritten snapshot and journal, on a
    second store object) serves every one of them."""
    import threading

    (store, between), _ = chroma_case
    items = [Item(n) for n in range(8)]
    populate(store, items, between)
    errors: list[BaseException] = []

    def writer() -> None:
        try:
            for n in range(30):
                turn = RawTurn(
                    id=f"w{n}", namespace=NS, text=f"writer note {n} zqwri{n:02d}",
                    speaker="Cy", session_id="s9", turn_index=n + 1, occurred_at=T0,
                )  # fmt: skip
                store.add(NS, [turn])
        except BaseException as e:  # noqa: BLE001 - reported by the test
            errors.append(e)

    thread = threading.Thread(target=writer)
    thread.start()
    forget_all_items(store, items)
    thread.join(timeout=120)
    assert not thread.is_alive() and errors == []
    wanted = {f"w{n}" for n in range(30)}
    assert wanted <= {r.id for r in store.get("raw", NS)}
    cold = ChromaMemoryStore.persistent(tmp_path / "data" / "chroma", embeddings=FakeEmbeddings())
    mirror = cold.lexical_index("raw", NS)
    for n in (0, 17, 29):
        hits = cold.search(f"zqwri{n:02d}", "raw", NS, k=3, mode="bm25")
        assert [h.record.id for h in hits][:1] == [f"w{n}"]
    assert len(mirror) == store.count("raw", NS)
