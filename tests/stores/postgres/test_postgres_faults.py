"""Faults and bad input on Postgres, where the behaviour is deterministic: a writer killed
mid-transaction, a connection cut mid-call, statement and lock timeouts, an unreachable
DSN, a database without pgvector or the right to create it. (``benchmarks/
postgres_faults.py`` kills writers at random moments and restarts the server.)"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest
from psycopg import errors as pg_errors
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from lamina import Memory, MemoryConfig
from lamina.errors import (
    LaminaError,
    StatementTimeoutError,
    StoreConfigurationError,
    StoreUnavailableError,
)
from lamina.records import FactRecord, RawTurn
from lamina.stores.postgres import PostgresMemoryStore
from lamina.stores.postgres.schema import ensure_vector_extension
from lamina.testing import FakeEmbeddings, ScriptedChatModel

T0 = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)
NS = "user:alice"


@pytest.fixture
def schema(postgres_dsn: str) -> Iterator[str]:
    """A lamina schema of the test's own (created empty), dropped afterwards."""
    name = f"t_{uuid.uuid4().hex[:16]}"
    PostgresMemoryStore.connect(postgres_dsn, schema=name, embeddings=FakeEmbeddings()).close()
    yield name
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")


def turns(n: int, start: int = 0) -> list[RawTurn]:
    return [
        RawTurn(
            namespace=NS,
            text=f"turn {i} about the greyhound Biscuit",
            speaker="Alice",
            session_id="s1",
            turn_index=i,
            occurred_at=T0 + timedelta(minutes=i),
        )
        for i in range(start, start + n)
    ]


def run_killed(code: str, dsn: str, schema: str) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter that kills itself with SIGKILL part way."""
    prelude = textwrap.dedent(
        f"""
        import os, signal
        from datetime import UTC, datetime, timedelta
        from lamina.records.model import FactRecord, RawTurn
        from lamina.stores.postgres import PostgresMemoryStore
        from lamina.testing import FakeEmbeddings
        store = PostgresMemoryStore.connect({dsn!r}, schema={schema!r}, embeddings=FakeEmbeddings())
        T0 = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)
        def die(*args, **kwargs):
            os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    return subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_writer_killed_mid_transaction_leaves_no_part_of_its_batch(
    postgres_dsn: str, schema: str
) -> None:
    store = PostgresMemoryStore.connect(postgres_dsn, schema=schema, embeddings=FakeEmbeddings())
    store.add(NS, turns(5))  # acknowledged before the crash
    code = """
        import lamina.stores.postgres.store as module
        from lamina.stores.postgres.rows import upsert
        def half_then_die(conn, names, gran, rows):
            upsert(conn, names, gran, rows[: len(rows) // 2])  # sent, not committed
            die()
        module.upsert = half_then_die
        turns = [RawTurn(namespace="user:alice", text=f"late turn {i}", speaker="Alice",
                         session_id="s2", turn_index=i, occurred_at=T0) for i in range(40)]
        store.add("user:alice", turns)
        print("acknowledged")
    """
    done = run_killed(code, postgres_dsn, schema)
    assert done.returncode == -signal.SIGKILL, done.stderr
    assert "acknowledged" not in done.stdout
    stored = store.get("raw", NS)
    assert sorted(r.turn_index for r in stored) == [0, 1, 2, 3, 4]  # all acked, none of the rest
    store.add(NS, turns(5))  # the server let go of the dead session's locks
    store.close()


def test_an_update_killed_between_its_writes_leaves_no_half_supersession(
    postgres_dsn: str, schema: str
) -> None:
    store = PostgresMemoryStore.connect(postgres_dsn, schema=schema, embeddings=FakeEmbeddings())
    old = FactRecord(id="f1", namespace=NS, text="Alice lives in Leeds", occurred_at=T0)
    store.add(NS, [old])
    code = """
        from lamina import Memory
        PostgresMemoryStore.mark_superseded = die  # after the new fact's add, before the close
        Memory(store=store).update("f1", "Alice lives in York", namespace="user:alice")
        print("acknowledged")
    """
    done = run_killed(code, postgres_dsn, schema)
    assert done.returncode == -signal.SIGKILL, done.stderr
    facts = store.get("fact", NS)
    assert [(f.id, f.superseded_by) for f in facts] == [("f1", None)]  # no new fact alone
    assert store.list_audit(NS) == []
    memory = Memory(store=store)  # and the update goes through when sent again
    result = memory.update("f1", "Alice lives in York", namespace=NS)
    facts = {f.id: f for f in store.get("fact", NS)}
    assert facts["f1"].superseded_by == result.id and result.id in facts
    assert [e.target_id for e in store.list_audit(NS)] == ["f1"]
    store.close()


@pytest.fixture
def locked(postgres_dsn: str, schema: str) -> Iterator[psycopg.Connection[Any]]:
    """Another session holding an exclusive lock on the raw table until the test ends."""
    with psycopg.connect(postgres_dsn) as conn:
        conn.execute(f"LOCK TABLE {schema}.raw_records IN ACCESS EXCLUSIVE MODE")
        yield conn
        conn.rollback()


@pytest.mark.parametrize(
    ("setting", "value"), [("statement_timeout", "150ms"), ("lock_timeout", "100ms")]
)
def test_a_timeout_is_reported_as_such_with_its_setting(
    postgres_dsn: str, schema: str, locked: psycopg.Connection[Any], setting: str, value: str
) -> None:
    dsn = make_conninfo(postgres_dsn, options=f"-c {setting}={value}")
    store = PostgresMemoryStore.connect(dsn, schema=schema, embeddings=FakeEmbeddings())
    try:
        for call in (lambda: store.add(NS, turns(3)), lambda: store.search("Biscuit", "raw", NS)):
            with pytest.raises(StatementTimeoutError) as caught:
                call()
            error = caught.value
            assert error.setting == setting and error.value == value
            assert not error.retryable
            message = str(error)
            assert f"{setting} = {value}" in message and f"-c {setting}=" in message
            assert "rolled back" in message
    finally:
        locked.rollback()
        assert store.count("raw", NS) == 0  # nothing of the cancelled add
        store.close()


def test_an_async_timeout_is_reported_as_such(
    postgres_dsn: str, schema: str, locked: psycopg.Connection[Any]
) -> None:
    import asyncio

    dsn = make_conninfo(postgres_dsn, options="-c statement_timeout=150ms")
    store = PostgresMemoryStore.connect(dsn, schema=schema, embeddings=FakeEmbeddings())

    async def scenario() -> None:
        try:
            with pytest.raises(StatementTimeoutError, match="statement_timeout = 150ms"):
                await store.aadd(NS, turns(2))
        finally:
            await store.aclose()

    asyncio.run(scenario())


def test_a_connection_cut_mid_call_is_retryable_and_the_pool_reconnects(
    postgres_dsn: str, schema: str, locked: psycopg.Connection[Any]
) -> None:
    store = PostgresMemoryStore.connect(
        postgres_dsn, schema=schema, embeddings=FakeEmbeddings(), max_size=1
    )
    caught: list[BaseException] = []

    def blocked_add() -> None:
        try:
            store.add(NS, turns(3))
        except BaseException as e:
            caught.append(e)

    writer = threading.Thread(target=blocked_add)
    writer.start()
    deadline = time.monotonic() + 20
    waiting: list[Any] = []
    while not waiting and time.monotonic() < deadline:
        time.sleep(0.05)
        waiting = locked.execute(
            "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE %s",
            [f"%{schema}%raw_records%"],
        ).fetchall()
    assert waiting, "the add never waited on the lock"
    locked.execute("SELECT pg_terminate_backend(%s)", [waiting[0][0]])  # as a restart does
    writer.join(20)
    locked.rollback()
    assert len(caught) == 1 and isinstance(caught[0], StoreUnavailableError)
    error = caught[0]
    assert error.retryable and isinstance(error, LaminaError)
    host = conninfo_to_dict(postgres_dsn)["host"]
    assert host and str(host) in str(error) and "retried" in str(error)
    with store.pool.connection() as conn:  # the pool's connection now (a new one) ...
        pid = conn.info.backend_pid
    with psycopg.connect(postgres_dsn, autocommit=True) as admin:  # ... dies idle, as in a
        admin.execute("SELECT pg_terminate_backend(%s)", [pid])  # restart between calls
    time.sleep(0.2)
    assert store.add(NS, turns(3)) and store.count("raw", NS) == 3  # the same call, again
    store.close()


def test_an_unreachable_dsn_fails_before_any_model_call() -> None:
    model = ScriptedChatModel()
    config = MemoryConfig(store="postgresql://u:secret@127.0.0.1:1/mem")
    with pytest.raises(StoreUnavailableError, match="127.0.0.1:1/mem") as caught:
        Memory(config=config, chat_model=model, embeddings=FakeEmbeddings())
    assert caught.value.retryable
    assert "secret" not in str(caught.value)
    assert model.calls == []


@pytest.fixture
def database_without_rights(postgres_dsn: str) -> Iterator[str]:
    """A database owned by a role that may not create extensions (no pgvector in it)."""
    tag = uuid.uuid4().hex[:10]
    role, db = f"r_{tag}", f"d_{tag}"
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN")
        conn.execute(f"CREATE DATABASE {db} OWNER {role}")
    yield make_conninfo(postgres_dsn, user=role, dbname=db)
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE {db} WITH (FORCE)")
        conn.execute(f"DROP ROLE {role}")


def test_no_right_to_create_the_vector_extension_says_what_to_run(
    database_without_rights: str,
) -> None:
    with pytest.raises(StoreConfigurationError, match=r"CREATE EXTENSION vector;.*superuser"):
        PostgresMemoryStore.connect(database_without_rights, embeddings=FakeEmbeddings())


class NoPgvector:
    """A connection to a server without pgvector: CREATE EXTENSION fails as Postgres 18 does."""

    def execute(self, query: str, *args: Any) -> Any:
        if query.startswith("CREATE EXTENSION"):
            raise pg_errors.FeatureNotSupported('extension "vector" is not available')
        return self

    def fetchone(self) -> None:
        return None

    def transaction(self) -> Any:
        from contextlib import nullcontext

        return nullcontext()


def test_a_server_without_pgvector_says_what_to_install() -> None:
    conn: Any = NoPgvector()
    with pytest.raises(StoreConfigurationError, match="db.example:5432.*install pgvector"):
        ensure_vector_extension(conn, "postgres://db.example:5432/mem")


def test_a_dimension_mismatch_is_refused_at_open_with_both_numbers(
    postgres_dsn: str, schema: str
) -> None:
    with pytest.raises(StoreConfigurationError, match="holds 64-dimensional.*gives 48"):
        PostgresMemoryStore.connect(postgres_dsn, schema=schema, embeddings=FakeEmbeddings(dim=48))
