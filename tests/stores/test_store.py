"""The store contract, run on an ephemeral, a persistent and a `chroma run` server Chroma,
and on Postgres."""

from contextlib import nullcontext
from datetime import timedelta

import pytest

from lamina.errors import (
    InvalidInputError,
    InvalidTypeError,
    NamespaceError,
    RecordNotFoundError,
)
from lamina.records import EpisodeRecord, FactRecord, Granularity, RawTurn, SceneRecord
from lamina.stores import ChromaMemoryStore, TimeWindow
from lamina.stores.base import LexicalView
from lamina.stores.bm25 import BM25Index

T0 = RawTurn(
    namespace="x",
    text="x",
    speaker="x",
    session_id="x",
    turn_index=0,
    occurred_at="2024-03-01T12:00:00Z",  # type: ignore[arg-type]
).occurred_at
NS, OTHER = "user:alice", "user:bob"

TEXTS = [
    "I adopted a golden retriever puppy named Rex",
    "We went hiking in Yosemite and saw a waterfall",
    "My sister is getting married in June",
    "I started painting landscapes with watercolors",
    "Rex chewed my running shoes again",
]


def seed(store: ChromaMemoryStore, make_turn, ns: str = NS) -> list[RawTurn]:  # type: ignore[no-untyped-def]
    turns = [
        make_turn(ns, t, i, speaker="Alice" if i % 2 == 0 else "Bob", minutes=i * 60 * 24)
        for i, t in enumerate(TEXTS)
    ]
    store.add(ns, turns)
    return turns


def fresh_lexical_scores(store, gran: Granularity, ns: str, q: str) -> dict[str, float]:  # type: ignore[no-untyped-def]
    """Keyword scores derived from the stored records alone: Chroma's BM25 mirror rebuilt
    from Chroma; on Postgres, the keyword channel of a search ranking the table."""
    if isinstance(store, ChromaMemoryStore):
        return store._mirrors.load(gran, ns).scores(q)
    hits = store.search(q, gran, ns, k=1000, mode="bm25")
    return {h.record.id: h.channel_scores["bm25"] for h in hits}


def test_add_get_roundtrip_and_idempotent_upsert(store, make_turn) -> None:  # type: ignore[no-untyped-def]
    turns = seed(store, make_turn)
    assert store.count("raw", NS) == 5
    got = store.get("raw", NS, [turns[2].id, turns[0].id, "missing"])
    assert [r.id for r in got] == [turns[2].id, turns[0].id]
    assert got[1] == turns[0]
    store.add(NS, turns)  # same ids again: a no-op
    assert store.count("raw", NS) == 5
    again = make_turn(
        NS, "I adopted a golden retriever puppy named Rex", 0, speaker="Alice", minutes=0
    )
    assert again.id == turns[0].id


def test_all_granularities_roundtrip(store) -> None:  # type: ignore[no-untyped-def]
    fact = FactRecord(
        namespace=NS,
        text="Alice owns a dog named Rex",
        occurred_at=T0,
        source_ids=["r1"],
        kind="fact",
        subject="Alice",
        valid_from=T0,
    )
    episode = EpisodeRecord(
        namespace=NS,
        text="Alice adopted Rex.",
        title="Adoption",
        occurred_at=T0,
        start_at=T0,
        end_at=T0 + timedelta(hours=1),
        source_ids=["r1", "r2"],
    )
    scene = SceneRecord(
        namespace=NS,
        text="Pets",
        members=[episode.id],
        centroid=[0.1, 0.2],
        occurred_at=T0,
        metadata={"theme": "pets"},
    )
    store.add(NS, [fact, episode, scene])
    assert store.get("fact", NS, [fact.id]) == [fact]
    assert store.get(Granularity.EPISODE, NS, [episode.id]) == [episode]
    assert store.get("scene", NS, [scene.id]) == [scene]
    assert store.get("scene", NS, where={"metadata.theme": "pets"}) == [scene]
    assert store.search("dog Rex", "fact", NS)[0].record == fact


def test_a_rewritten_record_matches_only_what_it_now_holds(store) -> None:  # type: ignore[no-untyped-def]
    """A metadata entry or a field dropped by a rewrite no longer matches a filter on it.

    Chroma's upsert keeps the metadata keys it is not given: a flag cleared by rewriting
    the record without it still matched ``where``, so every fact ever flagged pending was
    judged again at each write.
    """
    fact = FactRecord(
        namespace=NS, text="Alice lives in Boston", subject="Alice", occurred_at=T0,
        valid_from=T0, valid_to=T0 + timedelta(days=9), metadata={"flag": "on", "keep": 1},
    )  # fmt: skip
    store.add(NS, [fact])
    assert store.get("fact", NS, where={"metadata.flag": "on"}) == [fact]
    bare = fact.model_copy(update={"metadata": {"keep": 1}, "subject": None, "valid_to": None})
    store.add(NS, [bare])
    assert store.get("fact", NS, [fact.id]) == [bare]
    assert store.get("fact", NS, where={"metadata.flag": "on"}) == []
    assert store.get("fact", NS, where={"subject": "Alice"}) == []
    assert store.get("fact", NS, where={"metadata.keep": 1}) == [bare]
    assert [
        h.record for h in store.search("Boston", "fact", NS, where={"metadata.flag": "on"})
    ] == []
    assert [h.record for h in store.search("Boston", "fact", NS, where={"metadata.keep": 1})] == [
        bare
    ]


def test_search_modes_report_channel_ranks(store, make_turn) -> None:  # type: ignore[no-untyped-def]
    turns = seed(store, make_turn)
    hybrid = store.search("Rex the puppy", "raw", NS, k=3)
    assert hybrid[0].record.id == turns[0].id
    assert set(hybrid[0].ranks) == {"dense", "bm25"}
    assert hybrid[0].score == pytest.approx(sum(1 / (60 + r) for r in hybrid[0].ranks.values()))
    assert hybrid == sorted(hybrid, key=lambda h: -h.score)
    dense = store.search("Rex the puppy", "raw", NS, k=2, mode="dense")
    assert len(dense) == 2 and all(set(h.ranks) == {"dense"} for h in dense)
    assert -1.0 <= dense[0].channel_scores["dense"] <= 1.0
    lexical = store.search("Rex", "raw", NS, k=5, mode="bm25")
    assert {h.record.id for h in lexical} == {turns[0].id, turns[4].id}


def test_filters_apply_to_both_channels(store, make_turn) -> None:  # type: ignore[no-untyped-def]
    turns = seed(store, make_turn)
    window = TimeWindow.between(T0 + timedelta(days=3), T0 + timedelta(days=10))
    for mode in ("hybrid", "dense", "bm25"):
        hits = store.search("Rex puppy shoes", "raw", NS, k=5, window=window, mode=mode)  # type: ignore[arg-type]
        assert {h.record.id for h in hits} <= {turns[3].id, turns[4].id}, mode
        only_bob = store.search("Rex", "raw", NS, k=5, where={"speaker": "Bob"}, mode=mode)  # type: ignore[arg-type]
        assert all(h.record.speaker == "Bob" for h in only_bob), mode  # type: ignore[attr-defined]
    before = store.get("raw", NS, window=TimeWindow.before_(T0 + timedelta(days=2)))
    assert [r.id for r in before] == [turns[0].id, turns[1].id]
    after = store.get("raw", NS, window=TimeWindow.after_(T0 + timedelta(days=4)), limit=5)
    assert [r.id for r in after] == [turns[4].id]


def test_update_and_bm25_stay_consistent(store, make_turn) -> None:  # type: ignore[no-untyped-def]
    turns = seed(store, make_turn)
    store.search("warmup", "raw", NS, mode="bm25")  # build the mirror first
    edited = turns[1].model_copy(update={"text": "We went kayaking on Lake Tahoe"})
    store.update(NS, edited)
    assert store.get("raw", NS, [edited.id])[0].text == "We went kayaking on Lake Tahoe"
    assert [h.record.id for h in store.search("kayaking Tahoe", "raw", NS, mode="bm25")] == [
        edited.id
    ]
    assert store.search("Yosemite waterfall", "raw", NS, mode="bm25") == []
    index = store.lexical_index("raw", NS)
    assert index.ids() == {r.id for r in store.get("raw", NS)}
    assert index.scores("kayaking Rex") == fresh_lexical_scores(
        store, Granularity.RAW, NS, "kayaking Rex"
    )
    with pytest.raises(RecordNotFoundError, match="use add"):
        store.update(NS, make_turn(NS, "never stored", 99))


def test_delete_by_id_and_filter(store, make_turn) -> None:  # type: ignore[no-untyped-def]
    turns = seed(store, make_turn)
    store.search("Rex", "raw", NS, mode="bm25")
    assert store.delete("raw", NS, [turns[0].id, "missing"]) == 1
    assert store.delete("raw", NS, where={"speaker": "Bob"}) == 2
    remaining = {r.id for r in store.get("raw", NS)}
    assert remaining == {turns[2].id, turns[4].id}
    assert store.lexical_index("raw", NS).ids() == remaining
    assert {h.record.id for h in store.search("Rex", "raw", NS, mode="bm25")} == {turns[4].id}
    with pytest.raises(InvalidInputError, match="delete_namespace"):
        store.delete("raw", NS)


def test_mark_superseded_keeps_history(store) -> None:  # type: ignore[no-untyped-def]
    old = FactRecord(namespace=NS, text="Alice lives in Boston", occurred_at=T0, valid_from=T0)
    new = FactRecord(
        namespace=NS,
        text="Alice lives in Denver",
        occurred_at=T0 + timedelta(days=30),
        valid_from=T0 + timedelta(days=30),
    )
    store.add(NS, [old, new])
    closed = store.mark_superseded(NS, old.id, superseded_by=new.id, at=new.valid_from)
    assert closed.superseded_by == new.id and closed.valid_to == new.valid_from
    kept = store.get("fact", NS, [old.id])[0]
    assert kept == closed
    assert not closed.is_valid_at(T0 + timedelta(days=31))
    assert closed.is_valid_at(T0 + timedelta(days=1))
    current = store.get("fact", NS, where={"superseded": False})
    assert [f.id for f in current] == [new.id]
    with pytest.raises(RecordNotFoundError):
        store.mark_superseded(NS, "nope", superseded_by=new.id)
    with pytest.raises(InvalidInputError, match="itself"):
        store.mark_superseded(NS, new.id, superseded_by=new.id)


def test_namespaces_are_isolated_on_every_path(store, make_turn) -> None:  # type: ignore[no-untyped-def]
    alice = seed(store, make_turn, NS)
    bob = store.add(
        OTHER, [make_turn(OTHER, "Bob adopted a puppy named Rex too", 0, speaker="Bob")]
    )
    assert alice[0].id != bob[0]
    for mode in ("hybrid", "dense", "bm25"):
        assert {
            h.record.namespace for h in store.search("Rex puppy", "raw", OTHER, k=10, mode=mode)
        } == {OTHER}  # type: ignore[arg-type]
    assert store.get("raw", OTHER, [a.id for a in alice]) == []
    assert store.count("raw", OTHER) == 1
    assert {r.namespace for r in store.get("raw", OTHER)} == {OTHER}
    assert store.delete("raw", OTHER, [a.id for a in alice]) == 0
    assert store.count("raw", NS) == 5
    with pytest.raises(RecordNotFoundError):
        store.update(OTHER, alice[0].model_copy(update={"namespace": OTHER}))
    with pytest.raises(RecordNotFoundError):
        store.mark_superseded(OTHER, alice[0].id, superseded_by="x")
    assert store.search("Rex", "raw", "user:nobody") == []
    assert store.delete_namespace(OTHER) == 1
    assert store.count("raw", NS) == 5 and store.count("raw", OTHER) == 0


def test_same_record_id_in_two_namespaces_does_not_collide(store) -> None:  # type: ignore[no-untyped-def]
    a = FactRecord(id="f1", namespace=NS, text="Alice likes tea", occurred_at=T0)
    b = FactRecord(id="f1", namespace=OTHER, text="Bob likes coffee", occurred_at=T0)
    store.add(NS, [a])
    store.add(OTHER, [b])
    assert store.get("fact", NS, ["f1"])[0].text == "Alice likes tea"
    assert store.get("fact", OTHER, ["f1"])[0].text == "Bob likes coffee"


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda s, t: s.add(NS, [t, "not a record"]), InvalidTypeError),
        (lambda s, t: s.add(NS, {"text": "dict"}), InvalidTypeError),
        (lambda s, t: s.add(OTHER, [t]), InvalidInputError),
        (lambda s, t: s.add("bad ns!", [t]), NamespaceError),
        (
            lambda s, t: s.add(NS, [t, t.model_construct(**{**t.model_dump(), "text": ""})]),
            InvalidInputError,
        ),
        (lambda s, t: s.get("facts", NS), InvalidInputError),
        (lambda s, t: s.search("", "raw", NS), InvalidInputError),
        (lambda s, t: s.search("dog \ud800", "raw", NS), InvalidInputError),
        (lambda s, t: s.search("dog \udfff", "raw", NS, mode="bm25"), InvalidInputError),
        (lambda s, t: s.search("q", "raw", NS, k=0), InvalidInputError),
        (lambda s, t: s.search("q", "raw", NS, mode="fuzzy"), InvalidInputError),
        (lambda s, t: s.search("q", "bogus", NS), InvalidInputError),
        (lambda s, t: s.search("q", "raw", NS, limit=3), TypeError),  # get's keyword
        (lambda s, t: s.search("q", "raw", NS, top_k=3), TypeError),
        (lambda s, t: s.get("raw", NS, "just-one-id"), InvalidTypeError),
        (lambda s, t: s.get("raw", NS, where={"mood": "x"}), InvalidInputError),
    ],
)
def test_bad_input_raises_and_stores_nothing(store, make_turn, call, error) -> None:  # type: ignore[no-untyped-def]
    turn = make_turn(NS, "a valid turn", 0)
    with pytest.raises(error):
        call(store, turn)
    for gran in Granularity:
        assert store.count(gran, NS) == 0
        assert store.count(gran, OTHER) == 0


def test_failed_embedding_stores_nothing(store, make_turn, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    seed(store, make_turn)

    def boom(texts: list[str]) -> list[list[float]]:
        raise RuntimeError("embedding service down")

    monkeypatch.setattr(store.embeddings, "embed_documents", boom)
    with pytest.raises(RuntimeError, match="down"):
        store.add(NS, [make_turn(NS, "new turn", 10)])
    assert store.count("raw", NS) == 5
    assert store.lexical_index("raw", NS).ids() == {r.id for r in store.get("raw", NS)}


def test_lexical_index_is_a_lexical_view(store) -> None:  # type: ignore[no-untyped-def]
    index = store.lexical_index("raw", NS)
    assert isinstance(index, LexicalView)
    assert isinstance(index, BM25Index) is isinstance(store, ChromaMemoryStore)


def test_mixed_batch_is_all_or_nothing(store, make_turn, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    real = store.embeddings.embed_documents
    calls: list[int] = []

    def fail_second(texts: list[str]) -> list[list[float]]:
        calls.append(len(texts))
        if len(calls) == 2:
            raise RuntimeError("second group fails")
        return real(texts)

    monkeypatch.setattr(store.embeddings, "embed_documents", fail_second)
    fact = FactRecord(namespace=NS, text="Alice likes tea", occurred_at=T0)
    with pytest.raises(RuntimeError, match="second group"):
        store.add(NS, [make_turn(NS, "hello", 0), fact])
    assert store.count("raw", NS) == 0 and store.count("fact", NS) == 0


def test_unchanged_text_reuses_the_stored_vector(store, make_turn) -> None:  # type: ignore[no-untyped-def]
    turns = seed(store, make_turn)
    calls = store.embeddings.calls
    before = len(calls)
    store.add(NS, turns)  # re-ingest: nothing to embed
    assert len(calls) == before
    store.update(NS, turns[0].model_copy(update={"metadata": {"checked": True}}))
    assert len(calls) == before
    store.update(NS, turns[0].model_copy(update={"text": "Rex learned to sit"}))
    assert calls[-1] == [store.index_policy.render(store.get("raw", NS, [turns[0].id])[0])]
    assert store.search("sit", "raw", NS, k=1, mode="dense")[0].record.id == turns[0].id


def test_profile_roundtrip_and_isolation(store) -> None:  # type: ignore[no-untyped-def]
    from lamina.records import ProfileRecord

    assert store.get_profile(NS) is None
    profile = ProfileRecord(
        namespace=NS, explicit_facts=["Owns a dog named Rex"], implicit_traits=["Outdoorsy"]
    )
    store.put_profile(profile)
    assert store.get_profile(NS) == profile
    assert store.get_profile(OTHER) is None
    updated = profile.model_copy(update={"implicit_traits": ["Outdoorsy", "Artistic"]})
    store.put_profile(updated)
    assert store.get_profile(NS) == updated
    store.delete_namespace(NS)
    assert store.get_profile(NS) is None
    with pytest.raises(InvalidTypeError):
        store.put_profile({"namespace": NS})


def test_consolidation_flag_is_filterable(store, make_turn) -> None:  # type: ignore[no-untyped-def]
    turns = seed(store, make_turn)
    store.update(NS, turns[1].model_copy(update={"consolidated_into": ["ep1"]}))
    pending = store.search("Rex", "raw", NS, k=10, where={"consolidated": False})
    assert turns[1].id not in {h.record.id for h in pending}
    done = store.get("raw", NS, where={"consolidated": True})
    assert [r.id for r in done] == [turns[1].id]


def test_audit_log_is_append_only_ordered_and_scoped(store) -> None:  # type: ignore[no-untyped-def]
    from lamina.records import AuditEntry

    first = AuditEntry(
        namespace=NS,
        actor="refresher",
        action="supersede",
        granularity="fact",
        target_id="f1",
        reason="moved",
        before="Alice lives in Boston",
        after="superseded by f2",
        at=T0 + timedelta(days=1),
    )
    second = AuditEntry(
        namespace=NS,
        actor="refresher",
        action="update",
        granularity="episode",
        target_id="e1",
        at=T0,
    )
    store.append_audit(first)
    store.append_audit(second)
    assert [e.id for e in store.list_audit(NS)] == [second.id, first.id]  # by time
    assert store.list_audit(OTHER) == []
    assert store.vectors("raw", NS, ["missing"]) == {}


@pytest.mark.parametrize("path", ["exact", "hnsw-8", "hnsw-4096"])
def test_dense_search_never_leaks_another_tenant(store, make_turn, monkeypatch, path) -> None:  # type: ignore[no-untyped-def]
    """Exact search over the namespace mirror, and Chroma's HNSW path (used for namespaces
    above ``exact_limit``) with its oversampling cap low and high. On Postgres, the
    planner's own choice, and the HNSW index forced with ``ef_search`` low and high."""
    from lamina.stores import hnsw as hnsw_module
    from lamina.stores.mirror import MirrorConfig

    chroma = isinstance(store, ChromaMemoryStore)
    if path != "exact" and chroma:
        monkeypatch.setattr(store._mirrors, "config", MirrorConfig(exact_limit=0))
        monkeypatch.setattr(hnsw_module, "OVERSAMPLE_CAP", int(path.split("-")[1]))
    crowd = [make_turn(OTHER, f"Rex the puppy chewed shoe number {i}", i) for i in range(60)]
    store.add(OTHER, crowd)
    mine = make_turn(NS, "my parrot sings opera", 0)
    store.add(NS, [mine])
    scope = nullcontext() if chroma or path == "exact" else store.atomic()
    with scope as conn:
        if conn is not None:  # only the HNSW index can order by distance
            conn.execute("SET LOCAL enable_seqscan = off")
            conn.execute("SET LOCAL enable_sort = off")
            conn.execute(f"SET LOCAL hnsw.ef_search = {min(1000, int(path.split('-')[1]))}")
            plan = conn.execute(
                "EXPLAIN SELECT id FROM "
                f"{store.names.schema}.raw_records ORDER BY embedding <=> %s::vector LIMIT 5",
                [[1.0] + [0.0] * 63],
            ).fetchall()
            assert "Index Scan using raw_records_embedding_idx" in " ".join(r[0] for r in plan)
        searched_with_the_index(store, mine)
    windowed = store.search(
        "Rex puppy",
        "raw",
        OTHER,
        k=3,
        mode="dense",
        window=TimeWindow.after_(T0 + timedelta(minutes=57)),
    )
    assert {h.record.turn_index for h in windowed} == {57, 58, 59}  # type: ignore[attr-defined]
    if chroma:
        assert store._mirrors.peek(Granularity.RAW, OTHER).has_vectors is (path == "exact")


def searched_with_the_index(store, mine) -> None:  # type: ignore[no-untyped-def]
    for mode in ("dense", "hybrid"):
        hits = store.search("Rex the puppy chewed a shoe", "raw", NS, k=5, mode=mode)  # type: ignore[arg-type]
        assert [h.record.id for h in hits] == [mine.id], mode


def test_a_filter_on_a_number_never_matches_a_boolean(store, make_turn) -> None:  # type: ignore[no-untyped-def]
    """``True`` and ``1`` are different metadata values on every path, as Chroma's ``where``
    and Postgres's jsonb compare them (``1`` and ``1.0`` are the same number).

    Chroma's search filters and its ``get`` by ids compared them in Python, where
    ``True == 1``: a search for ``metadata.n = 1`` found the records flagged ``True`` too,
    which ``get(where=...)`` and the Postgres store left out.
    """
    values = [1, True, 1.0, "1", False, 0]
    turns = [
        make_turn(NS, f"Rex note number {i}", i, metadata={"n": v}) for i, v in enumerate(values)
    ]
    store.add(NS, turns)
    ids = [t.id for t in turns]
    for wanted, matching in [(1, {0, 2}), (True, {1}), (1.0, {0, 2}), ([True, False], {1, 4})]:
        where = {"metadata.n": wanted}
        expected = {ids[i] for i in matching}
        assert {r.id for r in store.get("raw", NS, where=where)} == expected, wanted
        assert {r.id for r in store.get("raw", NS, ids, where=where)} == expected, wanted
        for mode in ("hybrid", "dense", "bm25"):
            hits = store.search("Rex note", "raw", NS, k=10, where=where, mode=mode)  # type: ignore[arg-type]
            assert {h.record.id for h in hits} == expected, (wanted, mode)
    assert store.get("raw", NS, where={"turn_index": True}) == []
    assert store.search("Rex note", "raw", NS, where={"turn_index": True}) == []
    distinct = store.lexical_index("raw", NS).distinct("meta.n")
    assert sorted(map(repr, distinct)) == sorted(["1", "True", "'1'", "False", "0"])


def test_a_filter_on_values_of_several_types_matches_any_of_them(store, make_turn) -> None:  # type: ignore[no-untyped-def]
    """``where`` with a list of values of several types (``["pets", 2]``) selects the
    records holding any of them, in every call that takes it.

    Chroma refuses an ``$in`` list of mixed types: ``get`` and ``delete`` (and so
    ``Memory.get_all`` with such ``filters``) raised a bare ``ValueError`` on Chroma.
    """
    values = ["pets", 2, "2", True, "other"]
    turns = [
        make_turn(NS, f"Rex note number {i}", i, metadata={"topic": v})
        for i, v in enumerate(values)
    ]
    store.add(NS, turns)
    ids = [t.id for t in turns]
    for wanted, matching in [(["pets", 2], {0, 1}), ([2.0, True, "x"], {1, 3})]:
        where = {"metadata.topic": wanted}
        expected = {ids[i] for i in matching}
        assert {r.id for r in store.get("raw", NS, where=where)} == expected, wanted
        hits = store.search("Rex note", "raw", NS, k=10, where=where)
        assert {h.record.id for h in hits} == expected, wanted
    assert store.delete("raw", NS, where={"metadata.topic": ["pets", True]}) == 2
    assert {r.id for r in store.get("raw", NS)} == {ids[i] for i in (1, 2, 4)}


def test_a_filter_on_a_fraction_never_matches_its_whole_part(store, make_turn) -> None:  # type: ignore[no-untyped-def]
    """``where`` on ``1.5`` selects the records holding ``1.5``, not those holding ``1``.

    Chroma's ``where`` compares a float with a stored int as an int: ``get`` and
    ``delete`` with ``metadata.x = 1.5`` took the records holding ``1`` too (the search,
    filtered in Python, and Postgres did not).
    """
    values = [1, 1.5, 2, 2.5, 1.0]
    turns = [
        make_turn(NS, f"Rex note number {i}", i, metadata={"x": v}) for i, v in enumerate(values)
    ]
    store.add(NS, turns)
    ids = [t.id for t in turns]
    for wanted, matching in [(1.5, {1}), ([1.5, 2.5], {1, 3}), (1, {0, 4}), (2.0, {2})]:
        where = {"metadata.x": wanted}
        expected = {ids[i] for i in matching}
        assert {r.id for r in store.get("raw", NS, where=where)} == expected, wanted
        assert {r.id for r in store.get("raw", NS, ids, where=where)} == expected, wanted
        hits = store.search("Rex note", "raw", NS, k=10, where=where)
        assert {h.record.id for h in hits} == expected, wanted
    assert store.delete("raw", NS, where={"metadata.x": 2.5}) == 1
    assert {r.id for r in store.get("raw", NS)} == {ids[i] for i in (0, 1, 2, 4)}


@pytest.mark.parametrize("k", [2**63, 10**30])
def test_a_k_past_any_row_count_returns_every_hit(store, make_turn, k) -> None:  # type: ignore[no-untyped-def]
    """A ``k`` (or ``distinct`` limit) larger than Postgres's bigint asks for every row, as
    on Chroma; Postgres raised its driver's NumericValueOutOfRange ("bigint out of range")."""
    seed(store, make_turn)
    for mode in ("hybrid", "dense", "bm25"):
        everything = store.search("Rex hiking", "raw", NS, k=len(TEXTS), mode=mode)
        huge = store.search("Rex hiking", "raw", NS, k=k, mode=mode)
        assert [h.record.id for h in huge] == [h.record.id for h in everything], mode
    assert sorted(store.lexical_index("raw", NS).distinct("speaker", k)) == ["Alice", "Bob"]
