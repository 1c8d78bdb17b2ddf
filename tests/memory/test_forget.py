"""Forget: the cascade over every granularity, the profile, the audit log and BM25.

Every test runs on an in-memory Chroma and on Postgres, and checks with an exact-string
scan over every stored document, metadata value and row (raw, fact, episode, scene,
profile, audit) and with every search mode that no forgotten content is left, and that
the other namespace is untouched. On Postgres a forget is one transaction: a failure at
any step leaves the namespace as it was. Both backends forget the same records.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from lamina import Memory
from lamina.errors import InvalidInputError, InvalidTypeError
from lamina.memory.forget import forget, normalise
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
from lamina.testing import FakeEmbeddings, SchemaChatModel

NS = "user:alice"
OTHER = "user:bob"
T0 = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)
SECRET = "Biscuit"
ADOPTED = "I adopted a greyhound called Biscuit"
BEACH = "Biscuit loves running on the beach"
NURSE = "I work as a nurse at St Mary hospital"
SISTER = "My sister Zoe visited last weekend"


def raw(
    ns: str, rid: str, text: str, index: int, context: str | None = None, into: str = ""
) -> RawTurn:
    return RawTurn(
        consolidated_into=[into] if into else [],
        id=rid,
        namespace=ns,
        text=text,
        speaker="Alice",
        session_id="s1",
        turn_index=index,
        occurred_at=T0 + timedelta(minutes=index),
        context=context,
    )


def fact(rid: str, text: str, sources: list[str], **kw: Any) -> FactRecord:
    return FactRecord(
        id=rid, namespace=NS, text=text, source_ids=sources, occurred_at=T0, valid_from=T0, **kw
    )


def populate(store: ChromaMemoryStore) -> None:
    """A namespace with every granularity, a profile and audit entries, plus a neighbour."""
    store.add(
        NS,
        [
            raw(NS, "r1", ADOPTED, 0, into="e1"),
            raw(NS, "r2", BEACH, 1, context=f"Alice: {ADOPTED}", into="e1"),
            raw(NS, "r3", NURSE, 2, context=f"Alice: {BEACH}", into="e2"),
            raw(NS, "r4", SISTER, 3, context=f"Alice: {NURSE}", into="e2"),
        ],
    )
    store.add(
        NS,
        [
            EpisodeRecord(
                id="e1",
                namespace=NS,
                title="Adopting Biscuit",
                text="Alice adopted a greyhound named Biscuit, who loves the beach.",
                source_ids=["r1", "r2"],
                occurred_at=T0,
            ),
            EpisodeRecord(
                id="e2",
                namespace=NS,
                title="Work and family",
                text="Alice works as a nurse; her sister Zoe visited.",
                source_ids=["r3", "r4"],
                occurred_at=T0 + timedelta(minutes=2),
            ),
        ],
    )
    store.add(
        NS,
        [
            fact("f-old", "Alice's dog is called Biscuit", ["r1"], superseded_by="f1"),
            fact("f1", "Alice has a greyhound named Biscuit", ["r1"], subject="Alice"),
            fact("f2", "Alice works as a nurse", ["r3"], subject="Alice"),
            fact("f3", "Alice keeps busy with pets and shifts", ["r2", "r3"]),
        ],
    )
    store.add(
        NS,
        [
            SceneRecord(
                id="s1",
                namespace=NS,
                title="Daily life",
                text="Alice's daily life: her pets and her job.",
                members=["e1", "e2"],
                centroid=[1.0] + [0.0] * 63,
                source_ids=["r1", "r2", "r3", "r4"],
                occurred_at=T0,
            ),
            SceneRecord(
                id="s2",
                namespace=NS,
                title="The new dog",
                text="Alice got a new dog.",
                members=["e1"],
                source_ids=["r1", "r2"],
                occurred_at=T0,
            ),
        ],
    )
    store.put_profile(
        ProfileRecord(
            namespace=NS,
            explicit_facts=["Has a greyhound named Biscuit", "Works as a nurse"],
            implicit_traits=["Caring"],
            source_ids=["s1"],
        )
    )
    for n, (target, before, after) in enumerate(
        (
            ("f-old", "Alice's dog is called Biscuit", "superseded by f1: Alice has a greyhound"),
            ("f2", "Alice was a student", "Alice works as a nurse"),
        )
    ):
        store.append_audit(
            AuditEntry(
                id=f"audit-{target}",
                at=T0 + timedelta(hours=n),
                namespace=NS,
                actor="refresher",
                action="supersede",
                granularity="fact",
                target_id=target,
                before=before,
                after=after,
            )
        )
    store.add(OTHER, [raw(OTHER, "r1", "Bob's cat is also called Biscuit", 0)])
    store.put_profile(ProfileRecord(namespace=OTHER, explicit_facts=["Owns a cat named Biscuit"]))


@pytest.fixture(params=["chroma", "postgres"])
def store(request: pytest.FixtureRequest) -> Any:
    """The populated namespace on an in-memory Chroma, and on Postgres."""
    if request.param == "postgres":
        s = request.getfixturevalue("postgres_store")
    else:
        s = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    populate(s)
    return s


def rows(store: Any, namespace: str) -> Iterator[tuple[str, str]]:
    """(collection or table, text) for every stored value of ``namespace``."""
    if not isinstance(store, ChromaMemoryStore):
        yield from postgres_rows(store, namespace)
        return
    prefix = store._collections[Granularity.RAW].name.removesuffix("_raw")
    for collection in store.client.list_collections():
        if not collection.name.startswith(prefix + "_"):
            continue
        got = collection.get(where={"namespace": namespace}, include=["documents", "metadatas"])
        for doc, meta in zip(got["documents"] or [], got["metadatas"] or [], strict=True):
            yield collection.name, doc or ""
            for value in (meta or {}).values():
                yield collection.name, str(value)


def postgres_rows(store: Any, namespace: str) -> Iterator[tuple[str, str]]:
    """Every column of ``namespace``'s rows in the Postgres store's tables, as text."""
    from psycopg import sql

    tables = {f"pg_{g.value}": store.names.records(g) for g in Granularity}
    tables.update(pg_profile=store.names("profiles"), pg_audit=store.names("audit"))
    with store.pool.connection() as conn:
        for name, table in tables.items():
            query = sql.SQL("SELECT t::text FROM {} t WHERE namespace = %s").format(table)
            for (text,) in conn.execute(query, [namespace]).fetchall():
                yield name, text


def occurrences(store: ChromaMemoryStore, namespace: str, needle: str) -> list[str]:
    """Collections where ``needle`` occurs (case-insensitive, NFKC) in ``namespace``."""
    folded = normalise(needle)
    return sorted({name for name, text in rows(store, namespace) if folded in normalise(text)})


def search_hits(store: ChromaMemoryStore, query: str) -> list[tuple[str, str, str]]:
    out = []
    for gran in Granularity:
        for mode in ("dense", "bm25", "hybrid"):
            for hit in store.search(query, gran, NS, k=50, mode=mode):  # type: ignore[arg-type]
                out.append((mode, hit.record.id, hit.record.text))
    return out


def assert_gone(store: ChromaMemoryStore, needles: list[str], ids: set[str]) -> None:
    for needle in needles:
        assert occurrences(store, NS, needle) == [], needle
        for mode, rid, text in search_hits(store, needle):
            assert normalise(needle) not in normalise(text), (mode, rid)
            assert rid not in ids, (mode, rid)


def ids_of(store: ChromaMemoryStore, gran: str) -> list[str]:
    return sorted(r.id for r in store.get(gran, NS))


def warm_bm25(store: ChromaMemoryStore) -> None:
    """Build every BM25 mirror first, so forget must keep them in step."""
    for gran in Granularity:
        store.lexical_index(gran, NS)


# ----------------------------------------------------------------------- guards
def test_the_scan_and_search_find_the_content_before_forgetting(store) -> None:  # type: ignore[no-untyped-def]
    """The checks below can fail: they see the secret everywhere it was written."""
    found = occurrences(store, NS, SECRET)
    assert {n.rsplit("_", 1)[1] for n in found} == {"raw", "fact", "episode", "profile", "audit"}
    assert any(SECRET in text for _, _, text in search_hits(store, SECRET))


# ----------------------------------------------------------------------- by ids
def test_forget_by_ids_cascades_to_orphans_and_cleans_survivors(store) -> None:  # type: ignore[no-untyped-def]
    warm_bm25(store)
    result = forget(store, NS, memory_ids=["r1", "r2"])
    assert result.deleted == {
        "raw": ["r1", "r2"],
        "episode": ["e1"],
        "fact": ["f-old", "f1"],
        "scene": ["s2"],
    }
    assert ids_of(store, "raw") == ["r3", "r4"]
    assert ids_of(store, "episode") == ["e2"]
    assert ids_of(store, "fact") == ["f2", "f3"]
    assert ids_of(store, "scene") == ["s1"]
    # survivors keep their other sources only
    [f3] = store.get("fact", NS, ["f3"])
    assert f3.source_ids == ["r3"]
    [scene] = store.get("scene", NS, ["s1"])
    assert isinstance(scene, SceneRecord)
    assert scene.members == ["e2"] and scene.source_ids == ["r3", "r4"]
    assert scene.centroid is not None and scene.centroid != [1.0] + [0.0] * 63
    # the turn that quoted a forgotten turn as context lost that context
    r3, r4 = store.get("raw", NS, ["r3", "r4"])
    assert isinstance(r3, RawTurn) and r3.context is None
    assert isinstance(r4, RawTurn) and r4.context == f"Alice: {NURSE}"
    # the profile lost the line that quoted a forgotten fact, kept the rest
    profile = store.get_profile(NS)
    assert profile is not None
    assert profile.explicit_facts == ["Works as a nurse"] and profile.implicit_traits == ["Caring"]
    assert_gone(store, [SECRET, ADOPTED, BEACH, "greyhound"], {"r1", "r2", "e1", "f1", "f-old"})
    for gran in Granularity:
        assert not store.lexical_index(gran, NS).ids() & {"r1", "r2", "e1", "f1", "f-old", "s2"}
    assert result.updated["fact"] == ["f3"]
    assert sorted(result.updated["raw"]) == ["r3"]


def test_forget_by_ids_deletes_a_profile_distilled_from_a_forgotten_scene(store) -> None:  # type: ignore[no-untyped-def]
    result = forget(store, NS, memory_ids=["e1", "e2"])
    assert result.deleted["scene"] == ["s1", "s2"]
    assert result.deleted["profile"] == [NS]
    assert store.get_profile(NS) is None
    assert ids_of(store, "raw") == ["r1", "r2", "r3", "r4"]  # raw turns are not derived
    # no turn points at a forgotten episode, so the trigger may consolidate them again
    assert all(not r.consolidated_into for r in store.get("raw", NS))  # type: ignore[attr-defined]
    assert store.count("raw", NS) == len(store.get("raw", NS, where={"consolidated": False}))


def test_unknown_ids_are_reported_and_forgetting_twice_is_harmless(store) -> None:  # type: ignore[no-untyped-def]
    first = forget(store, NS, memory_ids=["f2", "nope"])
    assert first.deleted == {"fact": ["f2"]} and first.not_found == ["nope"]
    again = forget(store, NS, memory_ids=["f2"])
    assert again.deleted == {} and again.not_found == ["f2"]
    assert len(again.tombstone_ids) == 1


# ------------------------------------------------------------------- by subject
def test_forget_by_subject_matches_case_and_width_insensitively(store) -> None:  # type: ignore[no-untyped-def]
    warm_bm25(store)
    result = forget(store, NS, subject="ＢＩＳＣＵＩＴ")  # fullwidth: NFKC folds it
    assert result.deleted["raw"] == ["r1", "r2"]
    assert result.deleted["fact"] == ["f-old", "f1"]  # the superseded fact too
    assert result.deleted["episode"] == ["e1"]
    assert result.deleted["scene"] == ["s2"]
    assert "profile" not in result.deleted
    profile = store.get_profile(NS)
    assert profile is not None and profile.explicit_facts == ["Works as a nurse"]
    assert_gone(store, [SECRET, ADOPTED, BEACH], {"r1", "r2", "e1", "f1", "f-old", "s2"})
    # unrelated memories stay searchable
    assert any(hit.record.id == "r3" for hit in store.search("nurse", "raw", NS))


def test_forget_by_subject_redacts_audit_entries_and_drops_an_empty_profile(store) -> None:  # type: ignore[no-untyped-def]
    forget(store, NS, subject="nurse")
    audit = {e.target_id: e for e in store.list_audit(NS)}
    assert audit["f2"].before is None and audit["f2"].after is None
    assert audit["f-old"].before == "Alice's dog is called Biscuit"  # unrelated: kept
    assert occurrences(store, NS, "nurse") == []
    forget(store, NS, subject="caring")
    forget(store, NS, subject="greyhound")
    assert store.get_profile(NS) is None


def test_subject_matches_titles_and_fact_subjects(store) -> None:  # type: ignore[no-untyped-def]
    result = forget(store, NS, subject="daily life")  # only in the title/summary of s1
    assert result.deleted == {"scene": ["s1"]}
    result = forget(store, NS, subject="alice")
    assert set(result.deleted) >= {"fact", "episode", "scene"}
    assert ids_of(store, "fact") == [] and ids_of(store, "episode") == []
    # contexts quoting "Alice: ..." are content; the speaker name is not and stays
    assert all(isinstance(r, RawTurn) and r.context is None for r in store.get("raw", NS))
    assert ids_of(store, "raw") == ["r1", "r2", "r3", "r4"]
    store.add(NS, [fact("fq", "Plays chess on Sundays", ["r4"], subject="Quentin")])
    assert forget(store, NS, subject="quentin").deleted == {"fact": ["fq"]}
    assert occurrences(store, NS, "quentin") == []


# ------------------------------------------------------------------------- all
def test_forget_all_leaves_only_a_tombstone_and_spares_other_namespaces(store) -> None:  # type: ignore[no-untyped-def]
    warm_bm25(store)
    result = forget(store, NS, everything=True)
    assert result.deleted["raw"] == ["r1", "r2", "r3", "r4"]
    assert result.deleted["profile"] == [NS]
    for gran in Granularity:
        assert store.count(gran, NS) == 0
        assert store.lexical_index(gran, NS).ids() == set()
    assert store.get_profile(NS) is None
    [tomb] = store.list_audit(NS)
    assert tomb.action == "forget" and tomb.id == result.tombstone_ids[0]
    for needle in (SECRET, NURSE, SISTER, "greyhound"):
        assert occurrences(store, NS, needle) == []
    # the neighbour namespace is untouched
    assert store.count("raw", OTHER) == 1
    assert occurrences(store, OTHER, SECRET) != []
    other_profile = store.get_profile(OTHER)
    assert other_profile is not None and other_profile.explicit_facts
    assert [h.record.id for h in store.search("Biscuit", "raw", OTHER)] == ["r1"]


# -------------------------------------------------------------------- tombstone
@pytest.mark.parametrize(
    "selector",
    [{"memory_ids": ["r1", "r2"]}, {"subject": "Biscuit"}, {"everything": True}],
)
def test_the_tombstone_records_ids_and_counts_but_no_content(store, selector) -> None:  # type: ignore[no-untyped-def]
    result = forget(store, NS, **selector)
    [tomb] = [e for e in store.list_audit(NS) if e.action == "forget"]
    assert tomb.id in result.tombstone_ids
    summary = json.loads(tomb.after or "{}")
    assert summary["counts"] == {g: len(ids) for g, ids in result.deleted.items()}
    assert set(tomb.source_ids) >= set(result.deleted["raw"])
    assert tomb.before is None
    dumped = normalise(tomb.model_dump_json())
    for needle in (SECRET, ADOPTED, BEACH, "greyhound"):
        assert normalise(needle) not in dumped


def test_history_of_a_forgotten_id_shows_its_tombstone(store) -> None:  # type: ignore[no-untyped-def]
    forget(store, NS, memory_ids=["r1"])
    entries = [e for e in store.list_audit(NS) if e.action == "forget"]
    memory = Memory(store=store, chat_model=SchemaChatModel())
    assert [e.id for e in memory.history("r1", namespace=NS)] == [entries[0].id]


# ------------------------------------------------------------------- arguments
@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({}, InvalidInputError),
        ({"memory_ids": ["r1"], "subject": "x"}, InvalidInputError),
        ({"subject": "x", "everything": True}, InvalidInputError),
        ({"subject": "   "}, InvalidInputError),
        ({"memory_ids": "r1"}, InvalidTypeError),
        ({"subject": 3}, InvalidTypeError),
    ],
)
def test_exactly_one_selector_is_required(store, kwargs, error) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(error):
        forget(store, NS, **kwargs)
    assert store.count("raw", NS) == 4  # nothing was deleted


# ---------------------------------------------------------------------- facade
def test_memory_forget_delegates_and_search_no_longer_finds_it(store) -> None:  # type: ignore[no-untyped-def]
    memory = Memory(store=store, chat_model=SchemaChatModel())
    assert any(SECRET in h.text for h in memory.search(SECRET, namespace=NS))
    result = memory.forget(namespace=NS, subject=SECRET)
    assert result.count == 6
    assert all(SECRET not in h.text for h in memory.search(SECRET, namespace=NS))
    assert memory.search(SECRET, namespace=OTHER)
    with pytest.raises(InvalidInputError):
        memory.forget(namespace=NS)
    assert memory.forget(namespace=NS, all=True).deleted["raw"] == ["r3", "r4"]
    assert memory.inspect(namespace=NS) == {g.value: [] for g in Granularity}


# -------------------------------------------------------- one transaction (Postgres)
def state(store: Any, namespace: str = NS) -> tuple[Any, ...]:
    """Everything stored for ``namespace``: records, vectors, profile, audit log."""
    records = {
        g.value: sorted(r.model_dump_json() for r in store.get(g, namespace)) for g in Granularity
    }
    vectors = {
        g.value: store.vectors(g, namespace, [r.id for r in store.get(g, namespace)])
        for g in Granularity
    }
    profile = store.get_profile(namespace)
    audit = [e.model_dump_json() for e in store.list_audit(namespace)]
    return records, vectors, profile and profile.model_dump_json(), audit


def inject(
    monkeypatch: pytest.MonkeyPatch,
    store: Any,
    method: str,
    nth: int = 1,
    when: Callable[..., bool] = lambda *a, **k: True,
) -> list[int]:
    """Make the ``nth`` call of ``store.method`` that ``when`` accepts raise; count calls."""
    real = getattr(store, method)
    seen: list[int] = []

    def failing(*args: Any, **kwargs: Any) -> Any:
        if when(*args, **kwargs):
            seen.append(1)
            if len(seen) == nth:
                raise RuntimeError(f"injected failure in {method} call {nth}")
        return real(*args, **kwargs)

    monkeypatch.setattr(store, method, failing)
    return seen


IDS = {"memory_ids": ["r1", "r2"]}


@pytest.mark.parametrize(
    ("selector", "method", "nth", "when"),
    [
        pytest.param(IDS, "delete", 2, None, id="between-two-deletes"),
        pytest.param(IDS, "delete", 4, None, id="at-the-last-delete"),
        pytest.param(IDS, "update", 2, None, id="cleaning-survivors"),
        pytest.param(IDS, "put_profile", 1, None, id="trimming-the-profile"),
        pytest.param({"subject": "nurse"}, "replace_audit", 1, None, id="redacting-audit"),
        pytest.param(
            {"subject": SECRET},
            "append_audit",
            1,
            lambda entry: entry.action == "forget",
            id="writing-the-tombstone",
        ),
        pytest.param(
            {"everything": True},
            "append_audit",
            1,
            lambda entry: entry.action == "forget",
            id="tombstone-after-the-namespace-went",
        ),
    ],
)
def test_a_failure_half_way_through_a_forget_on_postgres_changes_nothing(
    make_postgres_store: Callable[..., Any],
    monkeypatch: pytest.MonkeyPatch,
    selector: dict[str, Any],
    method: str,
    nth: int,
    when: Callable[..., bool] | None,
) -> None:
    store = make_postgres_store()
    populate(store)
    before, other = state(store), state(store, OTHER)
    with monkeypatch.context() as patch:
        calls = inject(patch, store, method, nth, when or (lambda *a, **k: True))
        with pytest.raises(RuntimeError, match="injected failure"):
            forget(store, NS, **selector)
    assert len(calls) == nth  # the failing step was reached, after earlier writes
    assert state(store) == before  # nothing deleted, cleaned, redacted or recorded
    assert state(store, OTHER) == other
    assert any(SECRET in text for _, _, text in search_hits(store, SECRET))
    # the same forget, retried, goes through whole
    result = forget(store, NS, **selector)
    assert result.tombstone_ids and result.deleted


def test_chroma_and_a_wrapped_store_pick_their_transaction(
    make_postgres_store: Callable[..., Any],
) -> None:
    from contextlib import nullcontext

    from lamina.stores.atomic import Atomic, all_or_nothing
    from lamina.stores.wrapping import WrappedStore

    chroma = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    assert not isinstance(chroma, Atomic)
    assert isinstance(all_or_nothing(chroma), nullcontext)
    postgres = make_postgres_store()
    assert isinstance(postgres, Atomic)
    wrapped = WrappedStore(postgres)
    populate(postgres)
    with pytest.raises(RuntimeError), all_or_nothing(wrapped):
        wrapped.delete("raw", NS, ["r1"])
        raise RuntimeError("after the delete")
    assert ids_of(postgres, "raw") == ["r1", "r2", "r3", "r4"]


# ------------------------------------------------------------ the same on both
def comparable(store: Any, namespace: str = NS) -> dict[str, Any]:
    """What a namespace holds, without what differs by construction between two stores
    (when each record was written, the tombstone's random id and the centroids' float noise)."""
    out: dict[str, Any] = {}
    centroids = {}
    for g in Granularity:
        dumps = []
        for r in store.get(g, namespace):
            dumped = r.model_dump(mode="json", exclude={"recorded_at"})
            if dumped.get("centroid") is not None:
                centroids[r.id] = dumped.pop("centroid")
            dumps.append(dumped)
        out[g.value] = dumps
    out["centroids"] = centroids
    profile = store.get_profile(namespace)
    out["profile"] = profile and profile.model_dump(mode="json", exclude={"recorded_at"})
    out["audit"] = [
        e.model_dump(mode="json", exclude={"id"} if e.action == "forget" else set())
        for e in store.list_audit(namespace)
    ]
    return out


@pytest.mark.parametrize(
    "selector",
    [
        {"memory_ids": ["r1", "r2"]},
        {"memory_ids": ["e1", "e2", "nope"]},
        {"subject": "nurse"},
        {"subject": SECRET},
        {"everything": True},
    ],
    ids=["raw-ids", "episode-ids", "subject-nurse", "subject-secret", "everything"],
)
def test_both_backends_forget_exactly_the_same_records(
    make_postgres_store: Callable[..., Any], selector: dict[str, Any]
) -> None:
    chroma = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    postgres = make_postgres_store()
    results, after = [], []
    for store in (chroma, postgres):
        populate(store)
        results.append(forget(store, NS, clock=lambda: T0 + timedelta(days=1), **selector))
        after.append((comparable(store), comparable(store, OTHER)))
    on_chroma, on_postgres = results
    assert on_chroma.deleted == on_postgres.deleted
    assert on_chroma.updated == on_postgres.updated
    assert on_chroma.not_found == on_postgres.not_found
    (kept_c, other_c), (kept_p, other_p) = after
    centroids_c, centroids_p = kept_c.pop("centroids"), kept_p.pop("centroids")
    assert kept_c == kept_p
    assert other_c == other_p
    assert centroids_c.keys() == centroids_p.keys()
    for rid, centroid in centroids_c.items():
        assert centroids_p[rid] == pytest.approx(centroid, abs=1e-5)
