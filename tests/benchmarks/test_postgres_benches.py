"""``benchmarks/postgres_processes.py`` and ``postgres_scale.py`` on a few turns of the
session's embedded Postgres, and the fault benchmark's supersession check."""

from __future__ import annotations

import argparse
import uuid
from datetime import UTC, datetime
from typing import Any

import pytest

from lamina.records import FactRecord
from lamina.testing import FakeEmbeddings
from tests.bench_scripts import load_benchmark


def test_a_small_run_of_four_processes_loses_and_duplicates_nothing(
    postgres_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    bench = load_benchmark("postgres_processes", monkeypatch)
    args = argparse.Namespace(turns=12, writers=2, readers=2, batch=5, poll_ms=20.0, timeout=60.0)
    result = bench.run(args, postgres_dsn)
    assert result["acknowledged_turns"] == result["stored_rows"] == 24
    assert result["duplicates"] == 0 and result["lost_writes"] == 0
    assert result["pairs"] == 2 * 24 and result["pairs_never_seen"] == 0
    assert result["visibility_lag_ms"]["n"] == 48


def test_each_writer_turn_has_a_token_of_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    bench = load_benchmark("postgres_processes", monkeypatch)
    turns = bench.writer_turns(1, 48, 4)
    assert [t.text.split()[0] for t in turns] == [bench.marker(1, n) for n in range(48, 52)]
    assert [t.id for t in turns] == bench.ids_of(1, 48, 4)


def test_a_small_scale_run_counts_what_it_wrote(
    postgres_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    bench = load_benchmark("postgres_scale", monkeypatch)
    schema = f"t_{uuid.uuid4().hex[:12]}"
    args = argparse.Namespace(
        memories=60, namespaces=6, per=10, steps=[30, 60], writers=2, batch=4, queries=8,
        no_touch_all=False, seed=1, schema=schema, json=None, bulk_until=0, exclusive=None,
        synthesis_before_clock=False,
    )  # fmt: skip
    result = bench.run(args, postgres_dsn)
    steps = result["steps"]
    assert [s["stored"] for s in steps] == [30, 60]
    assert all(s["lost_or_extra"] == 0 for s in steps)
    assert steps[-1]["search"]["hybrid_ms"]["n"] == 8
    assert steps[-1]["search"]["namespaces_searched_for_rss"] == 6
    assert steps[-1]["disk"]["database_mb"] > 0
    import psycopg

    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA {schema} CASCADE")


def test_a_bulk_loaded_scale_run_times_only_the_writes_above_it(
    postgres_dsn: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    """``--bulk-until``: loaded without the HNSW index, which is then built again with the
    schema's parameters; the step above is timed with the turns made before the clock."""
    import psycopg

    from lamina.stores.postgres.schema import HNSW_EF_CONSTRUCTION, HNSW_M

    bench = load_benchmark("postgres_scale", monkeypatch)
    schema = f"t_{uuid.uuid4().hex[:12]}"
    lock = tmp_path / "exclusive"
    args = argparse.Namespace(
        memories=60, namespaces=6, per=10, steps=[60], writers=2, batch=4, queries=8,
        no_touch_all=True, seed=1, schema=schema, json=None, bulk_until=40,
        exclusive=str(lock), synthesis_before_clock=True,
    )  # fmt: skip
    try:
        result = bench.run(args, postgres_dsn)
    finally:
        with psycopg.connect(postgres_dsn, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
    bulk = result["bulk_loaded"]
    assert bulk["untimed_ingest_without_hnsw"]["turns"] == 40
    assert f"m='{HNSW_M}', ef_construction='{HNSW_EF_CONSTRUCTION}'" in bulk["hnsw_index"]
    (step,) = result["steps"]
    assert step["ingest"]["turns"] == 20 and step["stored"] == 60 and step["lost_or_extra"] == 0
    assert sum(w["written"] for w in step["ingest"]["writers"]) == 20
    assert not lock.exists()  # the measuring lock was given back


def test_the_chain_check_finds_a_half_written_supersession(
    make_postgres_store: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    bench = load_benchmark("postgres_faults", monkeypatch)
    store = make_postgres_store(embeddings=FakeEmbeddings())
    ns = "user:kill9"
    bench.seed_namespace(store, ns)
    assert bench.chain_check(store, ns)["current_facts"] == 1
    new = FactRecord(
        id="f2", namespace=ns, text="a newer fact", occurred_at=datetime(2024, 1, 2, tzinfo=UTC)
    )
    store.add(ns, [new])  # the new fact alone: the old one was never closed
    chain = bench.chain_check(store, ns)
    assert chain["current_facts"] == 2 and chain["successors_closing_no_fact"] == 1
    store.mark_superseded(ns, bench.ROOT_FACT, superseded_by="f2")  # closed, no audit entry
    chain = bench.chain_check(store, ns)
    assert chain["current_facts"] == 1 and chain["closed_without_audit"] == 1
