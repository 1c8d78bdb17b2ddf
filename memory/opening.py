"""The store a :class:`~lamina.config.MemoryConfig` describes: Chroma or Postgres."""

from __future__ import annotations

from typing import Any

from langchain_core.embeddings import Embeddings

from ..config import MemoryConfig
from ..stores.chroma import ChromaMemoryStore


def open_store(config: MemoryConfig, embeddings: Embeddings | None) -> ChromaMemoryStore:
    """The store ``config`` describes (the offline MiniLM embedder by default).

    Chroma (``chroma_mode``), or Postgres when ``backend="postgres"``: the DSN is
    connected to here, so an unreachable server fails before any model call.
    """
    options: dict[str, Any] = {"embeddings": embeddings}
    if config.backend == "postgres":
        from ..stores.postgres import PostgresMemoryStore

        assert config.dsn is not None  # checked by MemoryConfig
        store = PostgresMemoryStore.connect(
            config.dsn.get_secret_value(), schema=config.postgres_schema, **options
        )
        return store  # type: ignore[return-value]  # the facade reads it as a MemoryStore
    if config.chroma_mode == "ephemeral":
        return ChromaMemoryStore.ephemeral(**options)
    options["collection_prefix"] = config.collection_prefix
    if config.chroma_mode == "http":
        host, port, ssl = config.chroma_server
        return ChromaMemoryStore.http(host, port, ssl=ssl, **options)
    path = config.resolved_chroma_path.expanduser()
    path.mkdir(parents=True, exist_ok=True)
    return ChromaMemoryStore.persistent(path, **options)


__all__ = ["open_store"]
