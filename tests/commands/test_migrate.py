"""``lamina migrate``: a Chroma folder copied into Postgres, whole, checked, idempotent.

The source is a persistent Chroma store in a temporary folder with several namespaces
(one that LIKE would confuse with another, one with every character a namespace may
hold, one forgotten whole), records of every granularity, a superseded fact, a
forgotten turn (its tombstone), profiles, and an audit entry a supersede left pending
in its fact row. The target is the embedded Postgres of the test session.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from lamina import Memory
from lamina.cli import main
from lamina.errors import InvalidInputError, NamespaceError, StoreConfigurationError
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
from lamina.records.settings import NamespaceSettings
from lamina.stores import ChromaMemoryStore
from lamina.stores.audited import PENDING, PENDING_ENTRY
from lamina.stores.codec import row_id
from lamina.stores.migration import ChromaSource, MigrationReport, migrate
from lamina.testing import FakeEmbeddings

T0 = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)
ALICE = "user:alice"
TRAP = "a_c"
"""LIKE's ``_`` matches any one character: a copy matching namespaces with LIKE would
mix this one with :data:`TRAP_TWIN`."""
TRAP_TWIN = "abc"
ODD = "Org-1/team_x.y@host:user-7"
"""Every kind of character a namespace may hold (``%`` and quotes may not: see below)."""
GONE = "user:gone"
"""Forgotten whole: only its tombstone is left."""
NAMESPACES = (ALICE, TRAP, TRAP_TWIN, ODD)


def build(store: ChromaMemoryStore, ns: str) -> None:
    """Every granularity, a superseded fact with its audit entry, a profile, a forgotten turn."""
    texts = [f"I adopted a greyhound in {ns}", "Rex loves the beach"]
    turns = [
        RawTurn(
            id=f"r{i}",
            namespace=ns,
            text=text,
            speaker="Alice",
            session_id="s1",
            turn_index=i,
            occurred_at=T0 + timedelta(minutes=i),
            recorded_at=T0 + timedelta(days=1),
            consolidated_into=["e1"] if i < 2 else [],
            context=f"Alice: {texts[i - 1]}" if i else None,
            metadata={"language": "en", "mood": "glad", "n": i, "ns": ns},
        )
        for i, text in enumerate(texts)
    ]
    store.add(ns, turns)
    store.add(
        ns,
        [
            EpisodeRecord(
                id="e1",
                namespace=ns,
                title="Adopting Rex",
                text="Alice adopted a greyhound named Rex who loves the beach.",
                source_ids=["r0", "r1"],
                occurred_at=T0,
            ),
            SceneRecord(
                id="s1",
                namespace=ns,
                title="Pets",
                text="Alice's life with her dog.",
                members=["e1"],
                centroid=[0.125] * 64,
                source_ids=["r0", "r1"],
                occurred_at=T0,
            ),
            FactRecord(
                id="f-old",
                namespace=ns,
                text="Alice's dog is called Max",
                subject="Alice",
                source_ids=["r0"],
                occurred_at=T0,
                valid_from=T0,
            ),
            FactRecord(
                id="f-new",
                namespace=ns,
                text="Alice's dog is called Rex",
                subject="Alice",
                source_ids=["r1"],
                occurred_at=T0 + timedelta(hours=2),
                valid_from=T0 + timedelta(hours=2),
            ),
        ],
    )
    store.mark_superseded(
        ns,
        "f-old",
        superseded_by="f-new",
        audit=AuditEntry(
            id="supersede-f-old",
            namespace=ns,
            at=T0 + timedelta(hours=2),
            actor="refresher",
            action="supersede",
            granularity="fact",
            target_id="f-old",
            before="Alice's dog is called Max",
            after="Alice's dog is called Rex",
        ),
    )
    store.put_profile(
        ProfileRecord(
            namespace=ns, explicit_facts=["Alice: has a dog named Rex"], source_ids=["s1"]
        )
    )
    store.add(
        ns,
        [
            RawTurn(
                id="r-gone",
                namespace=ns,
                text="my bank PIN is 1234",
                speaker="Alice",
                session_id="s2",
                turn_index=0,
                occurred_at=T0 + timedelta(days=2),
            )
        ],
    )
    forget(store, ns, memory_ids=["r-gone"], clock=lambda: T0 + timedelta(days=3))


PENDING_AUDIT = AuditEntry(
    id="pending-f-old",
    namespace=ALICE,
    at=T0 + timedelta(hours=3),
    actor="refresher",
    action="supersede",
    granularity="fact",
    target_id="f-old",
    reason="written in the fact row; the process died before moving it",
)


@pytest.fixture
def source_dir(tmp_path: Path) -> Path:
    """A lamina Chroma folder with every kind of content, and an audit entry left pending."""
    path = tmp_path / "chroma"
    store = ChromaMemoryStore.persistent(path, embeddings=FakeEmbeddings())
    for ns in NAMESPACES:
        build(store, ns)
    hello = RawTurn(
        namespace=GONE, text="hi", speaker="A", session_id="s", turn_index=0, occurred_at=T0
    )
    store.add(GONE, [hello])
    forget(store, GONE, everything=True)
    facts = store._collections[Granularity.FACT]
    facts.update(
        ids=[row_id(ALICE, "f-old")],
        metadatas=[{PENDING: True, PENDING_ENTRY: PENDING_AUDIT.model_dump_json()}],
    )
    return path


def fingerprint(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` and a hash of its bytes."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def content(source: ChromaSource) -> dict[str, Any]:
    """What the source holds, read without writing: records with vectors, profiles, audit."""
    out: dict[str, Any] = {"profiles": source.profiles(), "audit": source.audit()}
    for gran in Granularity:
        for ns, ids in source.record_ids(gran).items():
            found, pending = source.records(gran, ns, ids)
            out[f"{gran.value}|{ns}"] = (
                sorted((r.record.model_dump_json(), r.vector) for r in found),
                pending,
            )
    return out


def counts(report: MigrationReport) -> dict[tuple[str, str], tuple[int, int]]:
    return {(c.namespace, c.kind): (c.source, c.target) for c in report.counts}


def written(store: Any) -> int:
    """The store's write sequence: it moves on with every row written."""
    with store.pool.connection() as conn:
        row = conn.execute(f"SELECT last_value FROM {store.names.schema}.write_seq").fetchone()
    return int(row[0])


# ------------------------------------------------------------------- the copy
def test_everything_is_copied_with_ids_times_links_and_vectors(
    source_dir: Path, make_postgres_store: Callable[..., Any]
) -> None:
    before = fingerprint(source_dir)
    target = make_postgres_store()
    with ChromaSource.open(source_dir) as source:
        held = content(source)
        report = migrate(source, target)
    # the source: not a byte changed, and the entry still pending there
    assert fingerprint(source_dir) == before
    with ChromaSource.open(source_dir) as again:
        assert content(again) == held

    assert report.ok, report.table()
    assert report.vectors == "copied" and report.embedded == 0
    assert target.embeddings.calls == []  # nothing embedded: the stored vectors were copied
    expected = {}
    for ns in NAMESPACES:
        expected.update(
            {
                (ns, "raw"): (2, 2),
                (ns, "fact"): (2, 2),
                (ns, "episode"): (1, 1),
                (ns, "scene"): (1, 1),
                (ns, "profile"): (1, 1),
                (ns, "audit"): (2, 2),  # the supersede and the forget tombstone
            }
        )
    expected[(ALICE, "audit")] = (3, 3)  # and the entry pending in the fact row
    expected[(GONE, "audit")] = (1, 1)  # only the tombstone of the namespace
    assert counts(report) == expected
    assert report.copied == sum(s for s, _ in expected.values())
    assert any("pending in fact rows" in note for note in report.notes)

    chroma = ChromaMemoryStore.persistent(source_dir, embeddings=FakeEmbeddings())
    for ns in NAMESPACES:
        for gran in Granularity:
            mine = [r.model_dump_json() for r in chroma.get(gran, ns)]
            assert [r.model_dump_json() for r in target.get(gran, ns)] == mine, (ns, gran)
            ids = [r.id for r in chroma.get(gran, ns)]
            copied, stored = target.vectors(gran, ns, ids), chroma.vectors(gran, ns, ids)
            for rid in ids:
                assert copied[rid] == pytest.approx(stored[rid], abs=1e-6)
        assert target.get_profile(ns) == chroma.get_profile(ns)
        # supersession: the old fact points at the new one, its validity closed
        [old] = target.get("fact", ns, where={"superseded": True})
        assert isinstance(old, FactRecord) and old.id == "f-old"
        assert old.superseded_by == "f-new" and old.valid_to == T0 + timedelta(hours=2)
        # both search channels find the copied turns, in this namespace only
        hits = target.search("beach", "raw", ns)
        assert hits[0].record.id == "r1" and set(hits[0].ranks) == {"dense", "bm25"}
        assert {h.record.namespace for h in hits} == {ns}
        tomb = [e for e in target.list_audit(ns) if e.action == "forget"]
        assert len(tomb) == 1 and "r-gone" in tomb[0].source_ids
        assert not target.get("raw", ns, ["r-gone"])
    assert [e.action for e in target.list_audit(GONE)] == ["forget"]
    assert {e.id for e in target.list_audit(ALICE)} >= {"supersede-f-old", "pending-f-old"}
    assert {r.namespace for r in target.get("raw", TRAP)} == {TRAP}


def test_the_namespace_default_ttl_is_copied(
    source_dir: Path, make_postgres_store: Callable[..., Any]
) -> None:
    chroma = ChromaMemoryStore.persistent(source_dir, embeddings=FakeEmbeddings())
    chroma.put_namespace_settings(NamespaceSettings(namespace=ALICE, default_ttl_seconds=3600))
    chroma.put_namespace_settings(NamespaceSettings(namespace="user:settings-only"))
    del chroma
    target = make_postgres_store()
    with ChromaSource.open(source_dir) as source:
        report = migrate(source, target)
        assert report.ok, report.table()
        assert counts(report)[(ALICE, "settings")] == (1, 1)
        assert counts(report)[("user:settings-only", "settings")] == (1, 1)
        assert (TRAP, "settings") not in counts(report)  # none set: no row
        again = migrate(source, target)
    assert again.ok and again.copied == 0
    settings = target.get_namespace_settings(ALICE)
    assert settings is not None and settings.default_ttl == timedelta(hours=1)
    assert Memory(store=target).default_ttl(ALICE) == timedelta(hours=1)
    assert target.get_namespace_settings(TRAP) is None


def test_a_second_run_copies_nothing_and_reports_the_same_counts(
    source_dir: Path, make_postgres_store: Callable[..., Any]
) -> None:
    target = make_postgres_store()
    with ChromaSource.open(source_dir) as source:
        first = migrate(source, target)
        seq = written(target)
        again = migrate(source, target)
    assert again.ok and again.copied == 0
    assert counts(again) == counts(first)
    assert written(target) == seq  # not one row rewritten: no duplicates, nothing replaced
    assert [c.copied for c in again.counts] == [0] * len(again.counts)


def test_an_interrupted_copy_is_finished_by_running_it_again(
    source_dir: Path, make_postgres_store: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    source = ChromaSource.open(source_dir)
    target = make_postgres_store()
    real = target.add_embedded
    calls: list[int] = []

    def dies_on_the_fifth(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) == 5:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    with monkeypatch.context() as patch, pytest.raises(KeyboardInterrupt):
        patch.setattr(target, "add_embedded", dies_on_the_fifth)
        migrate(source, target)
    report = migrate(source, target)
    source.close()
    assert report.ok
    assert 0 < report.copied < sum(c.source for c in report.counts)


def test_another_embedder_in_the_target_re_embeds_and_says_so(
    source_dir: Path, make_postgres_store: Callable[..., Any]
) -> None:
    other = FakeEmbeddings(model="another-model")
    target = make_postgres_store(embeddings=other)
    with ChromaSource.open(source_dir) as source:
        report = migrate(source, target)
    assert report.ok and report.vectors == "re-embedded"
    records = sum(c.source for c in report.counts if c.kind in ("raw", "fact", "episode", "scene"))
    assert report.embedded == records and other.calls
    assert any("another-model" in note and "embedded again" in note for note in report.notes)
    assert target.search("beach", "raw", ALICE)[0].record.id == "r1"


def test_records_of_the_target_s_own_are_a_mismatch(
    source_dir: Path, make_postgres_store: Callable[..., Any]
) -> None:
    target = make_postgres_store()
    target.add(ALICE, [FactRecord(id="mine", namespace=ALICE, text="mine", occurred_at=T0)])
    with ChromaSource.open(source_dir) as source:
        report = migrate(source, target)
    assert not report.ok
    [bad] = report.mismatches()
    assert (bad.namespace, bad.kind, bad.source, bad.target, bad.extra) == (ALICE, "fact", 2, 3, 1)
    assert any("1 only in the target" in line for line in report.table())


# ------------------------------------------------------------------ bad input
def test_a_namespace_with_percent_or_quotes_never_reaches_either_store(
    make_postgres_store: Callable[..., Any],
) -> None:
    for store in (ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings()), make_postgres_store()):
        for ns in ("a%b", "o'brien", 'say"hi', "a|b"):
            with pytest.raises(NamespaceError):
                store.add(ns, [FactRecord(namespace=ALICE, text="x", occurred_at=T0)])


def test_a_folder_that_is_not_a_lamina_chroma_store_is_refused(tmp_path: Path) -> None:
    import chromadb

    with pytest.raises(InvalidInputError, match="does not exist"):
        ChromaSource.open(tmp_path / "nowhere")
    (tmp_path / "file").write_text("x")
    with pytest.raises(InvalidInputError, match="is a file"):
        ChromaSource.open(tmp_path / "file")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InvalidInputError, match="not a Chroma folder"):
        ChromaSource.open(tmp_path / "empty")
    assert list((tmp_path / "empty").iterdir()) == []  # nothing was created there
    fake = tmp_path / "fake"
    fake.mkdir()
    (fake / "chroma.sqlite3").write_text("not a database")
    with pytest.raises(StoreConfigurationError, match="cannot read the Chroma database"):
        ChromaSource.open(fake)
    assert (fake / "chroma.sqlite3").read_text() == "not a database"
    other = tmp_path / "other"
    chromadb.PersistentClient(path=str(other)).get_or_create_collection("notes")
    before = fingerprint(other)
    with pytest.raises(InvalidInputError, match=r"no lamina store.*lamina_raw.*notes"):
        ChromaSource.open(other)
    assert fingerprint(other) == before


def test_the_lamina_data_folder_is_accepted_for_its_chroma_folder(source_dir: Path) -> None:
    with ChromaSource.open(source_dir.parent) as source:  # <data dir>/chroma
        assert str(source_dir) in source.where
        assert set(source.record_ids(Granularity.RAW)) == set(NAMESPACES)
        copy = source.copy
        assert copy is not None and copy.is_dir() and not copy.is_relative_to(source_dir)
    assert not copy.exists()  # the private copy is gone


# ------------------------------------------------------------- the command
@pytest.fixture
def cli_schema(postgres_pool: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A schema for the command to copy into, dropped afterwards; fake target embeddings."""
    from lamina.commands import migrate as command

    monkeypatch.setattr(command, "target_embeddings", lambda name: FakeEmbeddings())
    schema = f"t_{uuid.uuid4().hex[:16]}"
    yield schema
    with postgres_pool.connection() as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = main(argv)
    out, err = capsys.readouterr()
    return status, out, err


def test_the_command_copies_prints_the_counts_and_is_idempotent(
    source_dir: Path, postgres_dsn: str, cli_schema: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["migrate", "--from", str(source_dir), "--to", postgres_dsn, "--schema", cli_schema]
    status, out, err = run(argv, capsys)
    assert status == 0, err
    assert "vectors: copied as stored" in out
    assert f"{json.dumps(ODD)}  raw" in out
    assert "MISMATCH" not in out and "ok: the target holds what the source holds" in out
    assert json.dumps(GONE) in err  # progress, one line per namespace
    first = [line for line in out.splitlines() if line.startswith('"')]
    status, out, err = run(argv, capsys)
    assert status == 0, err
    assert "0 written by this run" in out
    again = [line for line in out.splitlines() if line.startswith('"')]
    assert [line.split()[:4] for line in again] == [line.split()[:4] for line in first]


def test_the_command_exits_1_on_a_count_mismatch(
    source_dir: Path,
    postgres_dsn: str,
    cli_schema: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from lamina.stores.postgres import PostgresMemoryStore

    store = PostgresMemoryStore.connect(
        postgres_dsn, schema=cli_schema, embeddings=FakeEmbeddings()
    )
    store.add(TRAP, [FactRecord(id="mine", namespace=TRAP, text="mine", occurred_at=T0)])
    store.close()
    argv = ["migrate", "--from", str(source_dir), "--to", postgres_dsn, "--schema", cli_schema]
    status, out, err = run(argv, capsys)
    assert status == 1
    assert "MISMATCH (1 only in the target)" in out
    assert "differ from the source's" in err and f"{TRAP!r} fact" in err


def test_the_command_refuses_bad_input_before_any_work(
    source_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = fingerprint(source_dir)
    status, _, err = run(["migrate", "--from", str(source_dir)], capsys)
    assert status == 2 and "--to" in err and "LAMINA_STORE" in err
    dsn = "postgresql://u:secret@127.0.0.1:1/mem"
    status, _, err = run(["migrate", "--from", str(tmp_path / "nowhere"), "--to", dsn], capsys)
    assert status == 2 and "does not exist" in err
    status, _, err = run(["migrate", "--from", str(source_dir), "--to", dsn], capsys)
    assert status == 2 and "127.0.0.1:1/mem" in err and "secret" not in err
    assert fingerprint(source_dir) == before
