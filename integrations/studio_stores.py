"""The Studio's memory store, opened once per process for the Postgres backend.

The LangGraph API server calls the graph factory for every run. A Chroma store is cheap
to reopen (Chroma caches its clients), but a Postgres store holds a connection pool and
an embedder, so opening one per run would leak a pool each time. :class:`StudioStores`
keeps one per DSN and schema, shared by the graph and the API server's long-term store.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from langchain_core.embeddings import Embeddings

from ..config import MemoryConfig
from ..memory import open_store
from ..stores.base import MemoryStore

StoreOpener = Callable[[MemoryConfig, Embeddings | None], Any]
"""Opens the store a configuration names (default :func:`lamina.memory.open_store`)."""


class StudioStores:
    """The store of each run: a new Chroma store, or the process's one Postgres store.

    A call with another DSN or schema closes the old Postgres store and opens the new one.

    Args:
        opener: Opens a store from a configuration (tests pass one that counts).
    """

    def __init__(self, opener: StoreOpener = open_store) -> None:
        self._open = opener
        self._store: Any = None
        self._key: tuple[str, str] | None = None
        self._lock = threading.Lock()

    def get(self, config: MemoryConfig) -> MemoryStore:
        """The store ``config`` names; a Postgres one is opened once and then reused."""
        if config.postgres_dsn is None:
            store: MemoryStore = self._open(config, None)
            return store
        key = (config.postgres_dsn, config.prefix)
        with self._lock:
            if self._store is None or key != self._key:
                self._close()
                self._store = self._open(config, None)
                self._key = key
            held: MemoryStore = self._store
            return held

    def _close(self) -> None:
        store, self._store, self._key = self._store, None, None
        if store is not None:
            store.close()

    def close(self) -> None:
        """Close the Postgres store's connection pool, if one is open; safe to call twice."""
        with self._lock:
            self._close()


__all__ = ["StoreOpener", "StudioStores"]
