"""Open a store's record collections and check they were written with the same settings."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import chromadb
from chromadb.api import ClientAPI
from chromadb.api.models.Collection import Collection
from chromadb.config import Settings
from langchain_core.embeddings import Embeddings

from ..embedders.identity import chroma_function_for, embedding_name
from ..errors import StoreConfigurationError
from ..records.model import Granularity
from .chroma_calls import unavailable
from .indexing import IndexTextPolicy

SCHEMA_VERSION = 1


def persistent_client(path: str | Path) -> ClientAPI:
    """An on-disk Chroma client at ``path``, resolved now.

    chromadb keeps one client per path string for the whole process, so a relative path
    opened again after a ``chdir`` would otherwise reuse the first folder's database.
    """
    return chromadb.PersistentClient(path=str(Path(path).resolve()))


def ephemeral_client() -> ClientAPI:
    """An in-memory Chroma client (resettable, no telemetry)."""
    return chromadb.EphemeralClient(settings=Settings(allow_reset=True, anonymized_telemetry=False))


def http_client(host: str, port: int, *, ssl: bool = False) -> ClientAPI:
    """A client of a ``chroma run`` server.

    Raises:
        StoreUnavailableError: nothing answers at ``host:port``.
    """
    try:
        return chromadb.HttpClient(host=host, port=port, ssl=ssl)
    except ValueError as e:  # chromadb's "Could not connect to a Chroma server"
        raise unavailable(f"the Chroma server at {host}:{port}", e) from e


def persist_directory(client: ClientAPI) -> Path | None:
    """The folder of a persistent client; None for an in-memory or server client."""
    try:
        settings = client.get_settings()
    except Exception:  # noqa: BLE001 - a client that cannot say is treated as remote
        return None
    directory = getattr(settings, "persist_directory", None)
    if not getattr(settings, "is_persistent", False) or not directory:
        return None
    return Path(directory)


def open_record_collections(
    client: ClientAPI, prefix: str, embeddings: Embeddings, policy: IndexTextPolicy
) -> dict[Granularity, Collection]:
    """Get or create ``<prefix>_<granularity>`` for each granularity.

    Raises:
        StoreConfigurationError: a collection was written with other embeddings, another
            index policy or another schema version.
    """
    expected = {
        "lamina_schema": SCHEMA_VERSION,
        "embedding": embedding_name(embeddings),
        "index_policy": json.dumps(asdict(policy), sort_keys=True),
    }
    function = chroma_function_for(embeddings)
    out: dict[Granularity, Collection] = {}
    for granularity in Granularity:
        name = f"{prefix}_{granularity.value}"
        try:
            collection = client.get_or_create_collection(
                name,
                configuration={"hnsw": {"space": "cosine"}},
                metadata=expected,
                embedding_function=function,  # type: ignore[arg-type]
            )
        except ValueError as e:
            if _EF_CONFLICT not in str(e):
                raise
            # Another embedding function was registered with the collection; read what
            # wrote it without registering one, so the error below names both models.
            collection = client.get_collection(name, embedding_function=None)
            raise _mismatch(collection, expected) from e
        if {k: (collection.metadata or {}).get(k) for k in expected} != expected:
            raise _mismatch(collection, expected)
        out[granularity] = collection
    return out


_EF_CONFLICT = "Embedding function conflict"
"""What chromadb's ValueError says when a collection was created with another function."""


def _mismatch(collection: Collection, expected: dict[str, object]) -> StoreConfigurationError:
    """The error for a collection written with other embeddings, policy or schema version."""
    stored = {k: (collection.metadata or {}).get(k) for k in expected}
    if stored["embedding"] != expected["embedding"]:
        return StoreConfigurationError(
            f"collection {collection.name!r} was written with the embedder "
            f"{stored['embedding']!r}, but this store was opened with "
            f"{expected['embedding']!r}; vectors of two models cannot be mixed. Open it "
            "with the same embeddings that wrote it, or use another collection_prefix (or path) "
            "and re-ingest."
        )
    return StoreConfigurationError(
        f"collection {collection.name!r} was written with {stored}, but this store "
        f"is configured with {expected}. Open it with the same embeddings and "
        "index_policy, or use another collection_prefix and re-ingest."
    )
