"""Export and import (``Memory.export``/``import_``, ``lamina export``/``import``).

A namespace with every granularity, an update (a superseded fact and its audit entry),
a forget tombstone and a profile is exported and imported into a fresh store of each
backend: the same records and history come back, search gives the same ids in the same
order on 50 queries, and a second import writes nothing. A broken file names its line
and imports nothing.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from lamina import Memory, MemoryConfig
from lamina.cli import main
from lamina.errors import InvalidInputError, InvalidTypeError, StoreUnavailableError
from lamina.memory.portable import VERSION, read_portable
from lamina.records import (
    EpisodeRecord,
    FactRecord,
    Granularity,
    ProfileRecord,
    RawTurn,
    SceneRecord,
)
from lamina.stores import ChromaMemoryStore, MemoryStore
from lamina.testing import FakeEmbeddings

NS = "user:ana"
OTHER = "user:ben"
T0 = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)
SAID = [
    ("Ana", "I moved to Porto last month, the flat is near the river"),
    ("Ben", "Nice! Still working at the bakery?"),
    ("Ana", "No, I started at a bookshop called Lello on Monday"),
    ("Ana", "My cat Miso hates the new stairs"),
    ("Ben", "Haha, poor Miso. My phone number changed, it is 555 0199"),
    ("Ana", "Saved it. I am learning Portuguese on Tuesdays and Thursdays"),
]
QUERIES = [
    "where does Ana live",
    "Ana's job",
    "bookshop",
    "cat",
    "Miso stairs",
    "phone number",
    "Portuguese lessons",
    "bakery",
    "river flat",
    "Ben",
]


def build(store: MemoryStore) -> Memory:
    """The namespace: raw turns, facts (one updated, one forgotten), an episode, a scene."""
    turns = [
        RawTurn(
            id=f"r{n}",
            namespace=NS,
            text=text,
            speaker=speaker,
            session_id="s1",
            turn_index=n,
            occurred_at=T0 + timedelta(minutes=n),
        )
        for n, (speaker, text) in enumerate(SAID)
    ]
    store.add(NS, turns)
    facts = [
        ("f-porto", "Ana lives in Porto near the river", "r0", "Ana"),
        ("f-bakery", "Ana works at a bakery", "r1", "Ana"),
        ("f-miso", "Ana's cat Miso hates the stairs", "r3", "Ana"),
        ("f-phone", "Ben's phone number is 555 0199", "r4", "Ben"),
        ("f-pt", "Ana learns Portuguese on Tuesdays and Thursdays", "r5", "Ana"),
    ]
    store.add(
        NS,
        [
            FactRecord(
                id=fid,
                namespace=NS,
                text=text,
                subject=subject,
                source_ids=[source],
                occurred_at=T0,
                valid_from=T0,
            )
            for fid, text, source, subject in facts
        ],
    )
    store.add(
        NS,
        [
            EpisodeRecord(
                id="e1",
                namespace=NS,
                title="Ana's move to Porto",
                text="Ana moved to Porto, started at the bookshop Lello and learns Portuguese.",
                source_ids=[t.id for t in turns],
                occurred_at=T0,
            )
        ],
    )
    store.add(
        NS,
        [
            SceneRecord(
                id="sc1",
                namespace=NS,
                title="A new life in Porto",
                text="Ana's new city, job and cat.",
                members=["e1"],
                source_ids=[t.id for t in turns],
                occurred_at=T0,
            )
        ],
    )
    store.put_profile(ProfileRecord(namespace=NS, explicit_facts=["Ana: lives in Porto"]))
    store.add(
        OTHER,
        [
            RawTurn(
                namespace=OTHER,
                text="Ben's own note",
                speaker="Ben",
                session_id="s9",
                turn_index=0,
                occurred_at=T0,
            )
        ],
    )
    memory = Memory(store=store)
    memory.update("f-bakery", "Ana works at the bookshop Lello", namespace=NS, at=T0)
    memory.forget(namespace=NS, memory_ids=["f-phone"])
    return memory


def snapshot(memory: Memory, namespace: str) -> dict[str, Any]:
    """Every record (as JSON), the history of every fact, and 50 searches' ids in order."""
    store = memory.store
    records = {
        g.value: sorted(r.model_dump_json() for r in store.get(g, namespace)) for g in Granularity
    }
    facts = [r.id for r in store.get(Granularity.FACT, namespace)]
    history = {
        f: [e.model_dump_json() for e in memory.history(f, namespace=namespace)] for f in facts
    }
    hybrid = [
        [h.record.id for h in store.search(q, g, namespace, k=5)]
        for q in QUERIES
        for g in Granularity
    ]
    dense = [
        [h.record.id for h in store.search(q, "fact", namespace, k=3, mode="dense")]
        for q in QUERIES
    ]
    searches = hybrid + dense
    profile = store.get_profile(namespace)
    return {
        "records": records,
        "history": history,
        "searches": searches,
        "audit": [e.model_dump_json() for e in store.list_audit(namespace)],
        "profile": profile.model_dump_json() if profile else None,
    }


@pytest.fixture(params=["chroma", "postgres"])
def fresh(request: pytest.FixtureRequest) -> Callable[[], MemoryStore]:
    """Makes empty stores of one backend."""
    if request.param == "postgres":
        make: Callable[..., MemoryStore] = request.getfixturevalue("make_postgres_store")
        return make
    return lambda: ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())


def test_round_trip_keeps_records_history_and_search(fresh: Callable[[], MemoryStore]) -> None:
    source = build(fresh())
    out = io.StringIO()
    counts = source.export(out, namespace=NS)
    assert counts == {
        "raw": 6,
        "fact": 5,
        "episode": 1,
        "scene": 1,
        "profile": 1,
        "audit": 2,
        "settings": 0,
    }
    target = Memory(store=fresh())
    result = target.import_(io.StringIO(out.getvalue()))
    assert result.imported == counts and sum(result.kept.values()) == 0
    before, after = snapshot(source, NS), snapshot(target, NS)
    assert len(before["searches"]) == 50 and all(before["searches"])
    assert after == before
    assert any(entry for entry in before["history"].values()), "an update leaves a history"
    tomb = [json.loads(e) for e in after["audit"] if json.loads(e)["action"] == "forget"]
    assert len(tomb) == 1 and "f-phone" in json.dumps(tomb[0])
    assert "Ben's phone number is" not in out.getvalue(), "a forgotten fact is not exported"
    assert target.store.get(Granularity.RAW, OTHER) == [], "only the namespace travels"


def test_second_import_merges_by_id(fresh: Callable[[], MemoryStore]) -> None:
    source = build(fresh())
    out = io.StringIO()
    source.export(out, namespace=NS)
    target = Memory(store=fresh())
    target.import_(io.StringIO(out.getvalue()))
    first = snapshot(target, NS)
    again = target.import_(io.StringIO(out.getvalue()))
    assert again.count == 0
    assert again.kept == {
        "raw": 6,
        "fact": 5,
        "episode": 1,
        "scene": 1,
        "profile": 1,
        "audit": 2,
        "settings": 0,
    }
    assert snapshot(target, NS) == first


def test_round_trip_keeps_the_namespace_default_ttl(fresh: Callable[[], MemoryStore]) -> None:
    source = build(fresh())
    source.set_default_ttl(NS, timedelta(days=30))
    out = io.StringIO()
    assert source.export(out, namespace=NS)["settings"] == 1
    settings_line = json.loads(out.getvalue().splitlines()[-1])
    assert settings_line["type"] == "settings"
    assert settings_line["settings"]["default_ttl_seconds"] == 30 * 86400
    target = Memory(store=fresh())
    result = target.import_(io.StringIO(out.getvalue()))
    assert result.imported["settings"] == 1
    assert target.default_ttl(NS) == timedelta(days=30)
    # into another namespace, and a second import keeps the settings the namespace has
    copy = target.import_(io.StringIO(out.getvalue()), namespace="user:ana-copy")
    assert copy.imported["settings"] == 1
    assert target.default_ttl("user:ana-copy") == timedelta(days=30)
    target.set_default_ttl(NS, timedelta(days=2))
    again = target.import_(io.StringIO(out.getvalue()))
    assert again.kept["settings"] == 1 and again.imported["settings"] == 0
    assert target.default_ttl(NS) == timedelta(days=2)


def test_a_version_1_file_still_imports() -> None:
    """A file written before the settings line (version 1: no settings count) imports."""
    lines = exported_lines()
    header = json.loads(lines[0])
    header["version"] = 1
    del header["counts"]["settings"]
    old = [json.dumps(header), *lines[1:]]
    target = Memory(store=ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings()))
    result = target.import_(io.StringIO("\n".join(old) + "\n"))
    assert result.imported["raw"] == 6 and result.imported["settings"] == 0
    assert target.default_ttl(NS) is None
    # a settings line is version 2's: in a version 1 file it is refused, naming its line
    settings = {"namespace": NS, "default_ttl_seconds": 60.0}
    bad = [*old, json.dumps({"type": "settings", "settings": settings})]
    with pytest.raises(InvalidInputError, match=f"line {len(bad)}.*version 1"):
        Memory(store=ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())).import_(
            io.StringIO("\n".join(bad) + "\n")
        )


def test_import_keeps_what_the_store_changed_since() -> None:
    source = build(ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings()))
    out = io.StringIO()
    source.export(out, namespace=NS)
    source.update("f-porto", "Ana lives in Lisbon", namespace=NS, at=T0 + timedelta(days=30))
    result = source.import_(io.StringIO(out.getvalue()))
    assert result.imported["fact"] == 0
    porto = source.store.get(Granularity.FACT, NS, ["f-porto"])[0]
    assert isinstance(porto, FactRecord) and porto.superseded_by is not None


def test_import_into_another_namespace() -> None:
    source = build(ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings()))
    out = io.StringIO()
    source.export(out, namespace=NS)
    target = Memory(store=ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings()))
    result = target.import_(io.StringIO(out.getvalue()), namespace="user:ana-copy")
    assert result.namespace == "user:ana-copy"
    assert target.store.count("raw", "user:ana-copy") == 6
    assert target.store.count("raw", NS) == 0
    assert all(e.namespace == "user:ana-copy" for e in target.store.list_audit("user:ana-copy"))


def exported_lines() -> list[str]:
    source = build(ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings()))
    out = io.StringIO()
    source.export(out, namespace=NS)
    return out.getvalue().splitlines()


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda ls: [ls[0].replace(f'"version":{VERSION}', '"version":99'), *ls[1:]], "line 1"),
        (lambda ls: [*ls[:3], '{"type": "record", "granularity": "fact"', *ls[3:]], "line 4"),
        (
            lambda ls: [
                *ls[:2],
                ls[2].replace('"granularity":"raw"', '"granularity":"memo"'),
                *ls[3:],
            ],
            "line 3",
        ),
        (lambda ls: ls[:-1], "header says"),
        (lambda ls: [*ls, '{"type": "note"}'], f"line {0}"),
        (lambda ls: ls[1:], "line 1"),
    ],
)
def test_a_broken_file_names_its_line_and_imports_nothing(
    damage: Callable[[list[str]], list[str]], message: str
) -> None:
    lines = damage(exported_lines())
    if message == "line 0":
        message = f"line {len(lines)}"
    target = Memory(store=ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings()))
    with pytest.raises(InvalidInputError, match=message):
        target.import_(io.StringIO("\n".join(lines) + "\n"))
    assert all(target.store.count(g, NS) == 0 for g in Granularity)
    assert target.store.list_audit(NS) == []


@pytest.mark.parametrize("seconds", [-60.0, 0.0])
def test_a_default_ttl_not_in_the_future_is_refused_naming_its_line(seconds: float) -> None:
    """A settings line whose default TTL has already run out imports nothing, as
    ``set_default_ttl`` refuses it."""
    source = build(ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings()))
    source.set_default_ttl(NS, timedelta(days=30))
    out = io.StringIO()
    source.export(out, namespace=NS)
    lines = out.getvalue().splitlines()
    settings = json.loads(lines[-1])
    settings["settings"]["default_ttl_seconds"] = seconds
    lines[-1] = json.dumps(settings)
    target = Memory(store=ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings()))
    with pytest.raises(InvalidInputError, match=f"line {len(lines)}: .*default_ttl_seconds"):
        target.import_(io.StringIO("\n".join(lines) + "\n"))
    assert all(target.store.count(g, NS) == 0 for g in Granularity)
    assert target.default_ttl(NS) is None


def test_an_empty_file_is_refused() -> None:
    with pytest.raises(InvalidInputError, match="empty"):
        read_portable([])


def test_cli_export_then_import(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def factory(config: MemoryConfig) -> Memory:
        return Memory(config=config, embeddings=FakeEmbeddings())

    data, other, file = tmp_path / "a", tmp_path / "b", tmp_path / "ana.jsonl"
    with factory(MemoryConfig(data_dir=data)) as memory:
        build(memory.store)
    cli = {"memory_factory": factory}
    assert main(["export", "--data-dir", str(data), "-n", NS, "-o", str(file)], **cli) == 0
    assert "6 raw" in capsys.readouterr().err
    assert file.read_text(encoding="utf-8").startswith('{"format":"lamina-export"')
    assert main(["import", str(file), "--data-dir", str(other), "--json"], **cli) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["imported"]["raw"] == 6 and result["namespace"] == NS
    assert main(["import", str(file), "--data-dir", str(other)], **cli) == 0
    assert "0 written; 16 already held" in capsys.readouterr().out
    assert main(["import", str(tmp_path / "none.jsonl"), "--data-dir", str(other)], **cli) == 2
    assert "no export file" in capsys.readouterr().err


def test_cli_export_then_import_keeps_the_default_ttl(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def factory(config: MemoryConfig) -> Memory:
        return Memory(config=config, embeddings=FakeEmbeddings())

    data, other, file = tmp_path / "a", tmp_path / "b", tmp_path / "ana.jsonl"
    with factory(MemoryConfig(data_dir=data)) as memory:
        build(memory.store)
        memory.set_default_ttl(NS, timedelta(hours=12))
    cli = {"memory_factory": factory}
    assert main(["export", "--data-dir", str(data), "-n", NS, "-o", str(file)], **cli) == 0
    assert "1 settings" in capsys.readouterr().err
    assert main(["import", str(file), "--data-dir", str(other), "--json"], **cli) == 0
    assert json.loads(capsys.readouterr().out)["imported"]["settings"] == 1
    with factory(MemoryConfig(data_dir=other)) as memory:
        assert memory.default_ttl(NS) == timedelta(hours=12)


def test_cli_import_of_a_broken_file_names_the_line_and_imports_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def factory(config: MemoryConfig) -> Memory:
        return Memory(config=config, embeddings=FakeEmbeddings())

    lines = exported_lines()
    broken = tmp_path / "broken.jsonl"
    broken.write_text("\n".join([*lines[:3], "{not json", *lines[3:]]) + "\n", encoding="utf-8")
    unknown = tmp_path / "future.jsonl"
    future = [lines[0].replace(f'"version":{VERSION}', '"version":99'), *lines[1:]]
    unknown.write_text("\n".join(future) + "\n", encoding="utf-8")
    data, cli = tmp_path / "data", {"memory_factory": factory}
    assert main(["import", str(broken), "--data-dir", str(data)], **cli) == 2
    err = capsys.readouterr().err
    assert "line 4" in err and "nothing was imported" in err and len(err.splitlines()) == 1
    assert main(["import", str(unknown), "--data-dir", str(data)], **cli) == 2
    assert "line 1: export version 99" in capsys.readouterr().err
    with factory(MemoryConfig(data_dir=data)) as memory:
        assert memory.namespaces() == {}


def test_an_export_that_cannot_read_the_store_leaves_the_file_there_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The path was opened (emptied) before the store was read, so a store that failed
    left an earlier export at that path empty."""
    memory = build(ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings()))
    file = tmp_path / "ana.jsonl"
    memory.export(file, namespace=NS)
    before = file.read_bytes()

    def down(namespace: str) -> list[Any]:
        raise StoreUnavailableError("cannot reach the store")

    monkeypatch.setattr(memory.store, "list_audit", down)
    with pytest.raises(StoreUnavailableError):
        memory.export(file, namespace=NS)
    assert file.read_bytes() == before


def test_a_file_argument_of_another_type_is_refused() -> None:
    memory = Memory(store=ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings()))
    with pytest.raises(InvalidTypeError, match="path or an open text stream, got int"):
        memory.export(5, namespace=NS)  # type: ignore[arg-type]
    with pytest.raises(InvalidTypeError, match="path or an open text stream, got int"):
        memory.import_(5)  # type: ignore[arg-type]
    with pytest.raises(InvalidTypeError, match="path or an open text stream, got bytes"):
        memory.import_(b"ana.jsonl")  # type: ignore[arg-type]


def test_a_file_that_is_not_utf8_is_refused_and_imports_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A file of other bytes (latin-1 text, a binary) is not a lamina export: an
    InvalidInputError naming the file (it was a bare UnicodeDecodeError, a traceback
    from ``lamina import``)."""

    def factory(config: MemoryConfig) -> Memory:
        return Memory(config=config, embeddings=FakeEmbeddings())

    lines = exported_lines()
    latin = tmp_path / "latin1.jsonl"
    latin.write_bytes(("\n".join(lines) + '\n{"note": "caf\u00e9"}\n').encode("latin-1"))
    target = Memory(store=ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings()))
    with pytest.raises(InvalidInputError, match="not UTF-8 text.*nothing was imported"):
        target.import_(latin)
    assert target.namespaces() == {}
    data = tmp_path / "data"
    assert main(["import", str(latin), "--data-dir", str(data)], memory_factory=factory) == 2
    err = capsys.readouterr().err
    assert "not UTF-8 text" in err and len(err.splitlines()) == 1
    with factory(MemoryConfig(data_dir=data)) as memory:
        assert memory.namespaces() == {}


def test_a_failed_import_on_postgres_leaves_nothing(
    make_postgres_store: Callable[..., MemoryStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = exported_lines()
    store = make_postgres_store()
    target = Memory(store=store)

    def broken(entry: Any) -> Any:
        raise RuntimeError("the database went away")

    monkeypatch.setattr(store, "append_audit", broken)
    with pytest.raises(RuntimeError, match="went away"):
        target.import_(io.StringIO("\n".join(lines) + "\n"))
    assert all(store.count(g, NS) == 0 for g in Granularity), "the records were rolled back"


def test_ingest_points_memory_files_to_import(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def factory(config: MemoryConfig) -> Memory:
        return Memory(config=config, embeddings=FakeEmbeddings())

    data = tmp_path / "a"
    with factory(MemoryConfig(data_dir=data)) as memory:
        build(memory.store)
    cli = {"memory_factory": factory}
    report, export = tmp_path / "report.json", tmp_path / "ana.jsonl"
    assert main(["inspect", "--data-dir", str(data), "-n", NS, "--json"], **cli) == 0
    report.write_text(capsys.readouterr().out, encoding="utf-8")
    assert main(["export", "--data-dir", str(data), "-n", NS, "-o", str(export)], **cli) == 0
    capsys.readouterr()
    assert main(["ingest", str(report), "--data-dir", str(data), "--raw-only"], **cli) == 2
    assert "`lamina inspect --json` report" in capsys.readouterr().err
    assert main(["ingest", str(export), "--data-dir", str(data), "--raw-only"], **cli) == 2
    assert f"lamina import {export}" in capsys.readouterr().err


@pytest.mark.parametrize("kind", ["record", "audit"])
def test_an_id_twice_in_the_file_is_refused_naming_both_lines(
    fresh: Callable[[], MemoryStore], kind: str
) -> None:
    """A record or audit entry whose id an earlier line already holds (the header's counts
    raised to match) is refused naming both lines, and nothing is imported. It was
    imported once and counted twice on Chroma."""
    lines = exported_lines()
    at = next(i for i, line in enumerate(lines) if json.loads(line).get("type") == kind)
    header = json.loads(lines[0])
    counted = json.loads(lines[at]).get("granularity", "audit")
    header["counts"][counted] += 1
    damaged = [json.dumps(header), *lines[1:], lines[at]]
    target = Memory(store=fresh())
    with pytest.raises(InvalidInputError, match=f"line {len(damaged)}: .*first on line {at + 1}"):
        target.import_(io.StringIO("\n".join(damaged) + "\n"))
    assert all(target.store.count(g, NS) == 0 for g in Granularity)
    assert target.store.list_audit(NS) == []
