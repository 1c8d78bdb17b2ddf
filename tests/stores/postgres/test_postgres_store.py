"""What only the Postgres store has: its config, DSN errors, schema versions, atomic()."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest

from lamina import Memory, MemoryConfig
from lamina.errors import InvalidInputError, StoreConfigurationError, StoreUnavailableError
from lamina.records import FactRecord
from lamina.testing import FakeEmbeddings

NS = "user:alice"


def test_the_former_backend_setting_names_the_store_setting() -> None:
    with pytest.raises(InvalidInputError, match="LAMINA_POSTGRES_DSN"):
        MemoryConfig(backend="postgres")
    with pytest.raises(InvalidInputError, match="a LAMINA_ variable"):
        MemoryConfig.from_env({"LAMINA_BACKEND": "postgres"})


def test_the_dsn_comes_from_lamina_postgres_dsn() -> None:
    config = MemoryConfig.from_env({"LAMINA_POSTGRES_DSN": "postgresql://u:p@db/mem"})
    assert config.store_kind == "postgres"
    assert config.postgres_dsn == "postgresql://u:p@db/mem"
    assert ":p@db" not in repr(config)  # the password stays secret


def test_memory_from_env_opens_the_postgres_store(postgres_dsn: str) -> None:
    from lamina.stores.postgres import PostgresMemoryStore

    schema = f"t_{uuid.uuid4().hex[:16]}"
    env = {"LAMINA_POSTGRES_DSN": postgres_dsn}
    memory = Memory.from_env(env, prefix=schema, embeddings=FakeEmbeddings())
    try:
        assert isinstance(memory.store, PostgresMemoryStore)
        assert memory.store.names.schema == schema
    finally:
        memory.store.close()  # type: ignore[attr-defined]


def test_an_unreachable_dsn_names_the_host() -> None:
    from lamina.stores.postgres import PostgresMemoryStore

    with pytest.raises(StoreUnavailableError, match="127.0.0.1:1/mem"):
        PostgresMemoryStore.connect(
            "postgresql://u:secret@127.0.0.1:1/mem", embeddings=FakeEmbeddings(), timeout=2
        )


def test_a_newer_schema_is_refused(make_postgres_store: Callable[..., Any]) -> None:
    from lamina.stores.postgres import SCHEMA_VERSION, PostgresMemoryStore

    store = make_postgres_store()
    with store.pool.connection() as conn:
        conn.execute(
            f"INSERT INTO {store.names.schema}.lamina_schema_version (version) VALUES (%s)",
            [SCHEMA_VERSION + 1],
        )
    with pytest.raises(StoreConfigurationError, match="newer than this lamina"):
        PostgresMemoryStore(store.pool, embeddings=FakeEmbeddings(), schema=store.names.schema)


def test_reopening_with_another_dimension_names_both(
    make_postgres_store: Callable[..., Any],
) -> None:
    from lamina.stores.postgres import PostgresMemoryStore

    store = make_postgres_store()
    with pytest.raises(StoreConfigurationError, match="holds 64-dimensional.*gives 32"):
        PostgresMemoryStore(
            store.pool, embeddings=FakeEmbeddings(dim=32), schema=store.names.schema
        )


def test_atomic_rolls_back_every_call_inside(make_postgres_store: Callable[..., Any]) -> None:
    store = make_postgres_store()
    fact = FactRecord(namespace=NS, text="Alice likes tea", occurred_at="2024-03-01T12:00:00Z")  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="boom"), store.atomic():
        store.add(NS, [fact])
        assert store.count("fact", NS) == 1  # visible inside the transaction
        raise RuntimeError("boom")
    assert store.count("fact", NS) == 0


@pytest.mark.parametrize("namespace", ["a", "a_", "a_b", "aXb", "a.b", "a%", "a\\", "a:b/%"])
def test_special_characters_never_widen_a_namespace(
    make_postgres_store: Callable[..., Any], namespace: str
) -> None:
    store = make_postgres_store()
    tenants = ["a", "ab", "a_", "a_b", "aXb", "aX", "a.b", "a:b/c"]  # "_" is LIKE's any-char
    for ns in tenants:
        store.add(
            ns, [FactRecord(namespace=ns, text=f"tea {ns}", occurred_at="2024-03-01T12:00:00Z")]
        )  # type: ignore[arg-type]
    if namespace not in tenants:
        from lamina.errors import NamespaceError

        with pytest.raises(NamespaceError):
            store.count("fact", namespace)
        return
    found = store.get("fact", namespace)
    assert [r.namespace for r in found] == [namespace]
    hits = store.search("tea", "fact", namespace, k=20)
    assert {h.record.namespace for h in hits} == {namespace}
    assert store.delete("fact", namespace, where={"kind": "fact"}) == 1
    assert sum(store.count("fact", ns) for ns in tenants) == len(tenants) - 1


def test_a_record_language_picks_its_text_search_configuration(
    make_postgres_store: Callable[..., Any],
) -> None:
    store = make_postgres_store(languages=["english", "french"])
    fr = FactRecord(
        namespace=NS,
        text="Les chevaux mangeaient des pommes",
        occurred_at="2024-03-01T12:00:00Z",  # type: ignore[arg-type]
        metadata={"language": "fr"},
    )
    en = FactRecord(namespace=NS, text="The horses ate apples", occurred_at="2024-03-01T12:00:00Z")  # type: ignore[arg-type]
    store.add(NS, [fr, en])
    # French stemming: "cheval" and "chevaux" differ, but "mangeaient" and "mange" share a stem
    assert [h.record.id for h in store.search("mange", "fact", NS, mode="bm25")] == [fr.id]
    assert [h.record.id for h in store.search("horse", "fact", NS, mode="bm25")] == [en.id]
    with store.pool.connection() as conn:
        configs = conn.execute(
            f"SELECT id, ts_config FROM {store.names.schema}.fact_records ORDER BY id"
        ).fetchall()
    assert dict(configs) == {fr.id: "french", en.id: "english"}


def test_given_vectors_are_stored_exactly_as_float32(
    make_postgres_store: Callable[..., Any],
) -> None:
    import numpy as np

    from lamina.records import RawTurn
    from lamina.stores.postgres.rows import vector_literal

    store = make_postgres_store()
    rng = np.random.default_rng(7)
    given = rng.standard_normal((3, 64)) * 10.0 ** rng.integers(-30, 30, (3, 64))
    turns = [
        RawTurn(namespace=NS, text=f"turn {i}", speaker="Alice", session_id="s1",
                turn_index=i, occurred_at="2024-03-01T12:00:00Z")
        for i in range(3)
    ]  # fmt: skip
    store.add_embedded(NS, turns, [list(v) for v in given])
    stored = store.vectors("raw", NS, [t.id for t in turns])
    for turn, vector in zip(turns, given, strict=True):
        assert np.array_equal(
            np.asarray(stored[turn.id], dtype=np.float32), vector.astype(np.float32)
        )
    assert vector_literal([0.1, -2.5e-7]) == "[0.100000001,-2.49999999e-07]"


def test_a_version_1_schema_upgrades_and_rebuilds_its_hnsw_indexes(
    make_postgres_store: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A database a version-1 lamina wrote opens: its rows stay and every HNSW index is
    built again with this code's parameters (m, ef_construction)."""
    from datetime import UTC, datetime

    from lamina.stores.postgres import SCHEMA_VERSION, PostgresMemoryStore
    from lamina.stores.postgres import schema as pg_schema

    when = datetime(2024, 3, 1, 12, tzinfo=UTC)
    with monkeypatch.context() as old_code:  # the lamina that wrote schema version 1
        old_code.setattr(pg_schema, "SCHEMA_VERSION", 1)
        old = make_postgres_store()
        old.add(NS, [FactRecord(namespace=NS, text="Alice keeps bees", occurred_at=when)])
    name = old.names.schema

    def indexes() -> list[str]:
        with old.pool.connection() as conn:
            rows = conn.execute(
                "SELECT indexdef FROM pg_indexes WHERE schemaname = %s AND indexdef LIKE "
                "'%%USING hnsw%%' ORDER BY indexname",
                [name],
            ).fetchall()
        return [str(r[0]) for r in rows]

    assert len(indexes()) == 4 and not any("ef_construction" in d for d in indexes())
    new = PostgresMemoryStore(old.pool, embeddings=FakeEmbeddings(), schema=name)
    with new.pool.connection() as conn:
        versions = conn.execute(f"SELECT version FROM {name}.lamina_schema_version").fetchall()
    assert sorted(v[0] for v in versions) == list(range(1, SCHEMA_VERSION + 1))
    wanted = f"m='{pg_schema.HNSW_M}', ef_construction='{pg_schema.HNSW_EF_CONSTRUCTION}'"
    assert len(indexes()) == 4 and all(wanted in d for d in indexes()), indexes()
    hits = new.search("Alice keeps bees", "fact", NS, k=1, mode="dense")
    assert [h.record.text for h in hits] == ["Alice keeps bees"]


def test_a_large_scope_ranks_only_the_rows_of_its_rare_terms(
    make_postgres_store: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    import lamina.stores.postgres.sql as pg_sql

    monkeypatch.setattr(pg_sql, "LEXICAL_GATE", 4)  # scopes of 4 rows or more are large
    store = make_postgres_store()
    at = "2024-03-01T12:00:00Z"
    common = [FactRecord(namespace=NS, text=f"tea kettle {n}", occurred_at=at) for n in range(6)]  # type: ignore[arg-type]
    loud = FactRecord(namespace=NS, text="tea kettle tea kettle tea kettle", occurred_at=at)  # type: ignore[arg-type]
    rare = FactRecord(namespace=NS, text="a kettle from Zanzibar", occurred_at=at)  # type: ignore[arg-type]
    store.add(NS, [*common, loud, rare])
    small = [
        FactRecord(namespace="user:bob", text=t, occurred_at=at) for t in ("tea kettle", "Zanzibar")
    ]  # type: ignore[arg-type]
    store.add("user:bob", small)
    # "zanzibar" is in 1 row of 8, "tea" and "kettl" in 4 or more: only the rare term's row
    hits = store.search("tea kettle zanzibar", "fact", NS, k=20, mode="bm25")
    assert [h.record.id for h in hits] == [rare.id]
    # quotes and backslashes in the query are quoted, not parsed as tsquery syntax
    hits = store.search("tea's \\ kettle 'zanzibar'", "fact", NS, k=20, mode="bm25")
    assert [h.record.id for h in hits] == [rare.id]
    # a query of common terms only ranks every row that holds one, the loudest first
    hits = store.search("tea kettle", "fact", NS, k=20, mode="bm25")
    assert len(hits) == 8 and hits[0].record.id == loud.id
    # a scope under the gate (2 rows) ranks every row that shares a term
    hits = store.search("tea kettle zanzibar", "fact", "user:bob", k=20, mode="bm25")
    assert {h.record.id for h in hits} == {r.id for r in small}
    # hybrid keeps the dense channel's rows besides the lexical ones
    hybrid = store.search("tea kettle zanzibar", "fact", NS, k=20, mode="hybrid")
    assert hybrid[0].record.id == rare.id and len(hybrid) == 8
