"""One database for everything: memory, LangGraph checkpoints and lamina's BaseStore.

With a Postgres ``store`` the facade checkpoints its graph in the memory's own
database, so an ``add`` interrupted in one process resumes from a new ``Memory`` on the
same DSN; the Studio's checkpointer and long-term store point there too.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any, TypedDict

import psycopg
import pytest
from langgraph.graph import END, START, StateGraph

from lamina import Memory, MemoryConfig
from lamina.errors import InvalidInputError
from lamina.integrations import LaminaStore, studio
from lamina.integrations.studio_stores import StudioStores
from lamina.memory import open_store
from lamina.testing import FakeEmbeddings, SchemaChatModel

T0 = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)
TEXTS = [
    "We hiked Mount Tam on Saturday",
    "The trail to the summit was muddy",
    "I started pottery classes downtown",
]
REPLY = "\n".join(
    ["T|Hike and pottery", "S|" + " ".join(TEXTS), "F|t1|Alice|Alice hiked Mount Tam"]
)


class Interrupted(BaseException):
    """Stands for a killed process."""


def turns() -> list[dict[str, Any]]:
    return [
        {"speaker": "Alice", "text": t, "occurred_at": T0 + timedelta(minutes=i)}
        for i, t in enumerate(TEXTS)
    ]


@pytest.fixture
def schema(postgres_dsn: str) -> Iterator[str]:
    """A lamina schema of the test's own, dropped afterwards."""
    name = f"t_{uuid.uuid4().hex[:16]}"
    yield name
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")


@pytest.fixture
def namespace() -> str:
    """A namespace of the test's own: checkpoint threads are named after it."""
    return f"user:{uuid.uuid4().hex[:12]}"


def pg_config(dsn: str, schema: str, **overrides: Any) -> MemoryConfig:
    return MemoryConfig(
        store=dsn,
        prefix=schema,
        context={"trigger_policy": "session"},
        **overrides,
    )


def threads(dsn: str, namespace: str) -> set[str]:
    """The checkpoint threads of ``namespace``, read from the DSN's database."""
    with psycopg.connect(dsn) as conn:
        table = conn.execute("SELECT to_regclass('checkpoints')").fetchone()
        if table is None or table[0] is None:  # no saver has written to this database
            return set()
        rows = conn.execute(
            "SELECT DISTINCT thread_id FROM checkpoints WHERE starts_with(thread_id, %s)",
            [f"{namespace}/"],
        ).fetchall()
    return {str(r[0]) for r in rows}


# ----------------------------------------------------------------------- config
def test_the_postgres_checkpointer_defaults_to_the_memory_database() -> None:
    dsn = "postgresql://u:p@db:5432/mem"
    config = MemoryConfig(store=dsn, checkpointer="postgres")
    assert config.checkpoint_uri == dsn
    own = "postgresql://u:p@other:5432/checkpoints"
    assert MemoryConfig(store=dsn, checkpointer=own).checkpoint_uri == own
    assert MemoryConfig().checkpoint_uri is None  # the persistent Chroma has no database
    with pytest.raises(InvalidInputError, match="no postgresql:// DSN"):
        MemoryConfig(checkpointer="postgres")


def test_from_env_needs_only_the_dsn() -> None:
    env = {"LAMINA_POSTGRES_DSN": "postgresql://u:p@db/mem"}
    config = MemoryConfig.from_env(env, checkpointer="postgres")
    assert config.checkpoint_uri == "postgresql://u:p@db/mem"


# ------------------------------------------------------------- the facade
def test_an_interrupted_add_resumes_from_a_new_memory_on_the_same_dsn(
    postgres_dsn: str, schema: str, namespace: str
) -> None:
    from langgraph.checkpoint.postgres import PostgresSaver

    config = pg_config(postgres_dsn, schema)
    assert config.checkpointer == "auto"
    killed = SchemaChatModel()
    killed.script("ConstructionLines", Interrupted("worker killed"))
    first = Memory(config=config, embeddings=FakeEmbeddings(), chat_model=killed)
    with pytest.raises(Interrupted):
        first.add(turns(), namespace=namespace, session_id="s1", session_closed=True)
    assert isinstance(first.checkpointer, PostgresSaver)
    assert first.store.count("raw", namespace) == 3  # committed before any LLM call
    first.close()  # the "process" ends: its pool and checkpointer connection close
    assert len(threads(postgres_dsn, namespace)) == 1

    model = SchemaChatModel()
    model.script("ConstructionLines", *[REPLY] * 5)
    with Memory(config=config, embeddings=FakeEmbeddings(), chat_model=model) as second:
        result = second.add(turns(), namespace=namespace, session_id="s1", session_closed=True)
        # resumed from the checkpoint, not restarted: raw_write did not run again (its
        # turns would be duplicates) and only the interrupted model call was made
        assert len(result.new_raw_ids) == 3 and result.duplicate_raw_ids == []
        assert result.failures == []
        assert [title for title, _ in model.calls] == ["ConstructionLines"]
        assert second.store.count("raw", namespace) == 3
        assert [f.text for f in second.store.get("fact", namespace)] == ["Alice hiked Mount Tam"]
    assert len(threads(postgres_dsn, namespace)) == 1


def test_memory_checkpoints_and_the_base_store_live_in_one_database(
    postgres_dsn: str, schema: str, namespace: str
) -> None:
    model = SchemaChatModel()
    model.script("ConstructionLines", *[REPLY] * 5)
    config = pg_config(postgres_dsn, schema)
    with Memory(config=config, embeddings=FakeEmbeddings(), chat_model=model) as memory:
        memory.add(turns(), namespace=namespace, session_id="s1", session_closed=True)
        items = LaminaStore(memory.store, root=f"lg{uuid.uuid4().hex[:8]}")
        items.put(("prefs", "alice"), "tea", {"text": "Alice drinks oolong"})
        item_ns = items.lamina_namespace(("prefs", "alice"))

    with psycopg.connect(postgres_dsn) as conn:  # one connection sees all three
        tables = {
            (str(s), str(t))
            for s, t in conn.execute(
                "SELECT table_schema, table_name FROM information_schema.tables "
                "WHERE table_catalog = current_database()"
            ).fetchall()
        }
        checkpoints = conn.execute(
            "SELECT count(*) FROM checkpoints WHERE starts_with(thread_id, %s)",
            [f"{namespace}/"],
        ).fetchone()
        memories = conn.execute(
            f"SELECT count(*) FROM {schema}.raw_records WHERE namespace = %s", [namespace]
        ).fetchone()
        stored_items = conn.execute(
            f"SELECT count(*) FROM {schema}.raw_records WHERE namespace = %s", [item_ns]
        ).fetchone()
    checkpoint_tables = {t for s, t in tables if t.startswith("checkpoint")}
    assert {"checkpoints", "checkpoint_blobs", "checkpoint_writes"} <= checkpoint_tables
    assert {(schema, "raw_records"), (schema, "fact_records")} <= tables
    assert checkpoints is not None and checkpoints[0] > 0
    assert memories == (3,)
    assert stored_items == (1,)

    # a new process on the same DSN reads the item back through the BaseStore
    with Memory(config=pg_config(postgres_dsn, schema), embeddings=FakeEmbeddings()) as later:
        got = LaminaStore(later.store, root=items.root).get(("prefs", "alice"), "tea")
    assert got is not None and got.value == {"text": "Alice drinks oolong"}


def test_an_injected_store_gets_no_checkpointer_of_its_own(
    postgres_dsn: str, schema: str, namespace: str
) -> None:
    from lamina.stores import ChromaMemoryStore

    store = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    model = SchemaChatModel()
    model.script("ConstructionLines", *[REPLY] * 5)
    with Memory(config=pg_config(postgres_dsn, schema), store=store, chat_model=model) as memory:
        memory.add(turns(), namespace=namespace, session_id="s1", session_closed=True)
        assert memory.checkpointer is None
    assert threads(postgres_dsn, namespace) == set()


# ------------------------------------------------------------------ Studio
def test_the_studio_keeps_one_postgres_store_per_process(postgres_dsn: str, schema: str) -> None:
    opened: list[Any] = []

    def opener(config: MemoryConfig, embeddings: Any) -> Any:
        opened.append(open_store(config, FakeEmbeddings()))
        return opened[-1]

    stores = StudioStores(opener)
    config = pg_config(postgres_dsn, schema)
    assert stores.get(config) is stores.get(config)
    assert len(opened) == 1
    other = pg_config(postgres_dsn, f"{schema}_b")
    try:
        assert stores.get(other) is opened[1]
        assert opened[0].pool.closed  # the old store's pool was closed
    finally:
        stores.close()
        with psycopg.connect(postgres_dsn, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA IF EXISTS {schema}_b CASCADE")
    assert opened[1].pool.closed


def test_the_studio_postgres_config_needs_a_postgres_store(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    monkeypatch.setenv("LAMINA_DATA_DIR", str(tmp_path))
    with pytest.raises(InvalidInputError, match="LAMINA_STORE to its postgresql:// DSN"):
        studio.postgres_studio_config()


class Count(TypedDict):
    n: int


def test_the_studio_checkpointer_and_store_write_to_the_memory_database(
    postgres_dsn: str, schema: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LAMINA_STORE", postgres_dsn)
    monkeypatch.setenv("LAMINA_PREFIX", schema)
    stores = StudioStores(lambda config, _: open_store(config, FakeEmbeddings()))
    monkeypatch.setattr(studio, "STUDIO_STORES", stores)
    thread = f"studio-{uuid.uuid4().hex}"

    async def run() -> None:
        builder = StateGraph(Count)
        builder.add_node("step", lambda s: {"n": s["n"] + 1})
        builder.add_edge(START, "step")
        builder.add_edge("step", END)
        async with studio.postgres_checkpointer() as saver, studio.postgres_store() as items:
            graph = builder.compile(checkpointer=saver, store=items)
            await graph.ainvoke({"n": 1}, {"configurable": {"thread_id": thread}})
            await items.aput(("notes",), "k1", {"text": "kept in Postgres"})

    try:
        asyncio.run(run())
        # read back from the database the memory uses, over fresh connections
        with psycopg.connect(postgres_dsn) as conn:
            row = conn.execute(
                "SELECT count(*) FROM checkpoints WHERE thread_id = %s", [thread]
            ).fetchone()
        assert row is not None and row[0] > 0
        with Memory(config=pg_config(postgres_dsn, schema), embeddings=FakeEmbeddings()) as memory:
            got = LaminaStore(memory.store).get(("notes",), "k1")
        assert got is not None and got.value == {"text": "kept in Postgres"}
    finally:
        stores.close()


# --------------------------------------------------------------------- CLI
def test_the_cli_checkpoints_in_the_memory_database(
    postgres_dsn: str,
    schema: str,
    namespace: str,
    tmp_path: Any,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from langgraph.checkpoint.postgres import PostgresSaver

    from lamina.cli import main

    monkeypatch.setenv("LAMINA_STORE", postgres_dsn)
    monkeypatch.setenv("LAMINA_PREFIX", schema)
    built: list[Memory] = []

    def factory(config: MemoryConfig) -> Memory:
        model = SchemaChatModel()
        model.script("ConstructionLines", *[REPLY] * 5)
        built.append(Memory(config=config, embeddings=FakeEmbeddings(), chat_model=model))
        return built[-1]

    argv = ["add", TEXTS[0], "--speaker", "Alice", "-n", namespace, "--data-dir", str(tmp_path)]
    status = main(argv, memory_factory=factory)
    assert status == 0, capsys.readouterr().err
    assert isinstance(built[0].checkpointer, PostgresSaver)
    assert len(threads(postgres_dsn, namespace)) == 1
    assert not (tmp_path / "checkpoints.sqlite").exists()
    with psycopg.connect(postgres_dsn) as conn:
        row = conn.execute(
            f"SELECT count(*) FROM {schema}.raw_records WHERE namespace = %s", [namespace]
        ).fetchone()
    assert row == (1,)


def test_langgraph_postgres_json_names_the_studio_factories() -> None:
    """The API server imports a custom checkpointer or store as ``module.attr``."""
    import importlib
    import json
    from pathlib import Path

    config = json.loads((Path(__file__).parents[3] / "langgraph.postgres.json").read_text())
    assert config["graphs"] == {"memory": "lamina.integrations.studio:make_graph"}
    found = {}
    for part in ("checkpointer", "store"):
        module, attr = config[part]["path"].rsplit(".", 1)
        found[part] = getattr(importlib.import_module(module), attr)
    assert found == {"checkpointer": studio.postgres_checkpointer, "store": studio.postgres_store}
