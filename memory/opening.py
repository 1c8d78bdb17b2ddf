"""The store a :class:`~lamina.config.MemoryConfig` describes: Chroma or Postgres."""

from __future__ import annotations

from typing import Any

from langchain_core.embeddings import Embeddings

from ..config import MemoryConfig
from ..stores.chroma import ChromaMemoryStore


def open_store(config: MemoryConfig, embeddings: Embeddings | None) -> ChromaMemoryStore:
    """The store ``config`` describes (the offline MiniLM embedder by default).

    Chroma (persistent, in memory or a server), or Postgres when ``store`` is a
    ``postgresql://`` DSN: the DSN is connected to here, so an unreachable server fails
    before any model call. ``prefix`` names the Chroma collections or the Postgres schema.
    """
    options: dict[str, Any] = {"embeddings": embeddings}
    kind = config.store_kind
    if kind == "postgres":
        from ..stores.postgres import PostgresMemoryStore

        dsn = config.postgres_dsn or ""  # set: the store is a postgresql:// DSN
        store = PostgresMemoryStore.connect(dsn, schema=config.prefix, **options)
        return store  # type: ignore[return-value]  # the facade reads it as a MemoryStore
    if kind == "memory":
        return ChromaMemoryStore.ephemeral(**options)
    options["collection_prefix"] = config.prefix
    if kind == "http":
        host, port, ssl = config.chroma_server
        return ChromaMemoryStore.http(host, port, ssl=ssl, **options)
    path = config.resolved_chroma_path.expanduser()
    path.mkdir(parents=True, exist_ok=True)
    return ChromaMemoryStore.persistent(path, **options)


__all__ = ["open_store"]
