"""Stand-ins for the embedder and the store: fake embeddings, pool, counter, snapshot.

They need no model and no network, so unit tests stay fast and exact.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from langchain_core.embeddings import Embeddings

from ..records.model import Granularity, RawTurn

if TYPE_CHECKING:
    from ..stores.base import MemoryStore
    from ..stores.chroma import ChromaMemoryStore

_WORD = re.compile(r"[a-z0-9]+")


class StorePool:
    """Hands one in-memory store (on :class:`FakeEmbeddings`) to many test examples.

    Each example should use fresh namespaces. Reusing a store keeps a property-based test
    fast; renewing it every ``renew_every`` uses keeps a long run from searching a store
    that grows with every example.
    """

    def __init__(self, renew_every: int = 25) -> None:
        if renew_every < 1:
            raise ValueError(f"renew_every must be >= 1, got {renew_every}")
        self.renew_every = renew_every
        self._uses = 0
        self._store = self._fresh()

    @staticmethod
    def _fresh() -> ChromaMemoryStore:
        from ..stores.chroma import ChromaMemoryStore  # chromadb only when a pool is made

        return ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())

    def next(self) -> ChromaMemoryStore:
        """The store for the next example (a new one every ``renew_every`` calls)."""
        self._uses += 1
        if self._uses % self.renew_every == 0:
            self._store = self._fresh()
        return self._store


class FakeEmbeddings(Embeddings):
    """Deterministic bag-of-words embeddings with controllable similarity.

    Each lowercase word is hashed to a fixed random unit direction; a text's vector is
    the normalised sum of its words' directions. Texts that share words are similar,
    texts that share none are near-orthogonal. ``calls`` records every embedded batch.
    """

    def __init__(self, dim: int = 64, *, model: str = "fake-bow") -> None:
        if dim < 2:
            raise ValueError(f"dim must be >= 2, got {dim}")
        self.dim = dim
        self.model = model
        self.calls: list[list[str]] = []

    def _direction(self, word: str) -> list[float]:
        seed = hashlib.sha256(word.encode("utf-8")).digest()
        values: list[float] = []
        counter = 0
        while len(values) < self.dim:
            block = hashlib.sha256(seed + counter.to_bytes(4, "big")).digest()
            values.extend((b - 127.5) / 127.5 for b in block)
            counter += 1
        return values[: self.dim]

    def _embed(self, text: str) -> list[float]:
        vector = [0.0] * self.dim
        for word in _WORD.findall(text.lower()) or ["<empty>"]:
            for i, v in enumerate(self._direction(word)):
                vector[i] += v
        norm = math.sqrt(sum(v * v for v in vector)) or 1.0
        return [v / norm for v in vector]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed documents."""
        self.calls.append(list(texts))
        return [self._embed(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        """Embed one query."""
        self.calls.append([text])
        return self._embed(text)


class CountingStore:
    """Proxies a memory store and counts the records its ``get`` calls return.

    ``read`` is the running total; set it to 0 before the call being measured.
    """

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.read = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def get(self, *args: Any, **kwargs: Any) -> Any:
        """The inner store's ``get``, its records counted."""
        records = self.inner.get(*args, **kwargs)
        self.read += len(records)
        return records


def store_snapshot(store: MemoryStore, namespaces: Iterable[str]) -> dict[str, Any]:
    """Everything ``store`` holds in ``namespaces``, to check that a call changed nothing.

    Keys are ``"<namespace>/<granularity>"`` (the records as sorted JSON),
    ``"<namespace>/profile"`` (JSON or None) and ``"<namespace>/audit"`` (sorted JSON).
    Two snapshots are equal when no record, profile or audit entry was added, changed or
    removed.
    """
    out: dict[str, Any] = {}
    for ns in namespaces:
        for gran in Granularity:
            out[f"{ns}/{gran.value}"] = sorted(r.model_dump_json() for r in store.get(gran, ns))
        profile = store.get_profile(ns)
        out[f"{ns}/profile"] = profile.model_dump_json() if profile else None
        out[f"{ns}/audit"] = sorted(e.model_dump_json() for e in store.list_audit(ns))
    return out


def alternating_turn(namespace: str, i: int, text: str, start: datetime) -> RawTurn:
    """Turn ``i`` of session s1: Alice on odd turns, Bob on even ones, a minute apart."""
    return RawTurn(
        namespace=namespace,
        text=text,
        speaker="Alice" if i % 2 else "Bob",
        session_id="s1",
        turn_index=i,
        occurred_at=start + timedelta(minutes=i),
    )


__all__ = ["CountingStore", "FakeEmbeddings", "StorePool", "alternating_turn", "store_snapshot"]
