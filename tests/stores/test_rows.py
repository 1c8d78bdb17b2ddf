"""Reading a namespace's rows when Chroma answers with vectors out of step with metadata.

A write committed while Chroma answers a ``get`` can return rows whose vector array is
shorter than their metadata (CI saw an empty array beside one row). Such a read must
never pair a vector with the wrong row or fail: vectors come back as None and the
mirror re-embeds the index text.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from lamina.stores.chroma_calls import ChromaCalls
from lamina.stores.rows import rows_by_id, small_namespace


class RacyCollection:
    """A collection whose ``get`` drops the vectors of the rows listed in ``torn``."""

    def __init__(self, ids: list[str], torn: set[str]) -> None:
        self.rows = {f"ns|{x}": {"namespace": "ns", "record_id": x} for x in ids}
        self.vectors = {f"ns|{x}": np.full(3, float(n)) for n, x in enumerate(ids)}
        self.torn = {f"ns|{x}" for x in torn}
        self.calls = 0

    def get(self, ids: list[str] | None = None, include: Any = (), **_: Any) -> dict[str, Any]:
        self.calls += 1
        keys = [k for k in (ids if ids is not None else list(self.rows)) if k in self.rows]
        out: dict[str, Any] = {"ids": keys, "metadatas": [self.rows[k] for k in keys]}
        if "embeddings" in include:
            whole = [self.vectors[k] for k in keys if k not in self.torn]
            out["embeddings"] = np.array(whole) if whole else np.empty((0,))
        return out


def calls() -> ChromaCalls:
    return ChromaCalls("test", threading.RLock())


def test_a_torn_read_of_a_whole_namespace_falls_back_to_paging() -> None:
    collection = RacyCollection(["a", "b"], torn={"a"})
    assert small_namespace(calls(), collection, "ns") is None  # type: ignore[arg-type]


def test_a_consistent_read_keeps_every_vector_on_its_row() -> None:
    collection = RacyCollection(["a", "b"], torn=set())
    rows = small_namespace(calls(), collection, "ns")  # type: ignore[arg-type]
    assert rows is not None
    assert {r.record_id: float(r.vector[0]) for r in rows} == {"a": 0.0, "b": 1.0}
    assert small_namespace(calls(), RacyCollection([], torn=set()), "ns") == []  # type: ignore[arg-type]


def test_a_torn_page_keeps_the_vectors_that_came_back_and_no_others() -> None:
    ids = ["a", "b", "c", "d"]
    collection = RacyCollection(ids, torn={"c"})
    rows = rows_by_id(calls(), collection, "ns", ids, vectors=True)  # type: ignore[arg-type]
    got = {r.record_id: None if r.vector is None else float(r.vector[0]) for r in rows}
    assert got == {"a": 0.0, "b": 1.0, "c": None, "d": 3.0}
