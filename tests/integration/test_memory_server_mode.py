"""Server mode by configuration only: the facade over a ``chroma run`` server.

Two ``Memory`` objects (two workers) configured for the same server see the same
memories; the checkpointer comes from the configuration too (SQLite here, standing in
for Postgres, which needs a database server this test does not start).
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from pathlib import Path

import pytest

from lamina import Memory, MemoryConfig
from lamina.testing import FakeEmbeddings, SchemaChatModel

pytestmark = pytest.mark.integration


def test_two_workers_share_a_chroma_server_through_config_alone(
    chroma_server: tuple[str, int], tmp_path: Path
) -> None:
    host, port = chroma_server
    prefix = f"m{uuid.uuid4().hex[:10]}"
    env = {
        "LAMINA_STORE": f"http://{host}:{port}",
        "LAMINA_PREFIX": prefix,
        "LAMINA_CHECKPOINTER": str(tmp_path / "checkpoints.sqlite"),
        "LAMINA_DATA_DIR": str(tmp_path / "data"),
    }
    config = MemoryConfig.from_env(env)
    assert (config.store_kind, config.chroma_server) == ("http", (host, port, False))
    at = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)
    with Memory(config=config, embeddings=FakeEmbeddings(), chat_model=SchemaChatModel()) as a:
        added = a.add("I adopted a greyhound called Biscuit", namespace="user:alice", at=at)
    assert len(added.new_raw_ids) == 1
    assert (tmp_path / "checkpoints.sqlite").exists()
    assert not (tmp_path / "data" / "chroma").exists()  # nothing went to a local Chroma

    with Memory.from_env(env, embeddings=FakeEmbeddings(), chat_model=SchemaChatModel()) as b:
        hits = b.search("greyhound Biscuit", namespace="user:alice", granularities=["raw"])
        assert [h.id for h in hits] == added.new_raw_ids
        assert b.search("greyhound Biscuit", namespace="user:bob") == []
