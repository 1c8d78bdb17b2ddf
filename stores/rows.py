"""Read one namespace's rows of a record collection: by id, or all of them, in pages.

Row ids carry the namespace (``"<namespace>|<record id>"``), so a read by id needs no
``where``; the namespace in each row's metadata is checked again all the same.

Vectors of rows another process wrote on the same persistent path can be missing from
this process's in-memory HNSW segment (Chroma then raises "Error finding id"). Such a
page is split until the rows whose vectors can be read are found; the others come back
with ``None`` and the caller re-embeds their index text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from chromadb.api.models.Collection import Collection
from chromadb.errors import InternalError

from .chroma_calls import ChromaCalls
from .codec import row_id
from .keyed import namespace_where

PAGE = 2000
"""Ids per Chroma call: SQLite caps the number of variables in one statement."""


@dataclass(frozen=True)
class Row:
    """One stored row: its record id, metadata and (when asked for) its vector."""

    record_id: str
    metadata: dict[str, Any]
    vector: Any | None = None


def namespace_ids(calls: ChromaCalls, collection: Collection, namespace: str) -> list[str]:
    """Record ids of every row of ``namespace`` (one ``where`` call, ids only)."""
    rows = calls.read(collection.get, where=namespace_where(namespace), include=[])
    return [rid.split("|", 1)[1] for rid in rows["ids"]]


def small_namespace(calls: ChromaCalls, collection: Collection, namespace: str) -> list[Row] | None:
    """Every row of a namespace of at most :data:`PAGE` rows, with vectors, in one call.

    None when the namespace is larger, or some vectors cannot be read in this process:
    the caller then reads the ids and pages through them.
    """
    try:
        rows = calls.read(
            collection.get,
            where=namespace_where(namespace),
            include=["metadatas", "embeddings"],
            limit=PAGE + 1,
        )
    except InternalError:
        return None
    metas = rows["metadatas"] or []
    if len(metas) > PAGE:
        return None
    found = rows.get("embeddings")
    if not _aligned(found, metas):
        return None  # a concurrent write split the read: page through the ids instead
    return _rows(namespace, metas, found)


def rows_by_id(
    calls: ChromaCalls,
    collection: Collection,
    namespace: str,
    ids: Sequence[str],
    *,
    vectors: bool = False,
) -> list[Row]:
    """The stored rows among ``ids`` of ``namespace``, in pages of :data:`PAGE`."""
    out: list[Row] = []
    for i in range(0, len(ids), PAGE):
        page = [row_id(namespace, x) for x in ids[i : i + PAGE]]
        out.extend(_page(calls, collection, namespace, page, vectors))
    return out


def _page(
    calls: ChromaCalls, collection: Collection, namespace: str, ids: list[str], vectors: bool
) -> list[Row]:
    include = ["metadatas", "embeddings"] if vectors else ["metadatas"]
    try:
        rows = calls.read(collection.get, ids=ids, include=cast(Any, include))
    except InternalError:
        if not vectors:
            raise
        if len(ids) > 1:  # find the rows whose vectors this process can read
            return _halves(calls, collection, namespace, ids)
        rows = calls.read(collection.get, ids=ids, include=["metadatas"])
        vectors = False
    metas = rows["metadatas"] or []
    found = rows.get("embeddings") if vectors else None
    if vectors and not _aligned(found, metas):
        if len(ids) > 1:
            return _halves(calls, collection, namespace, ids)
        found = None  # the caller re-embeds this row's index text
    return _rows(namespace, metas, found)


def _rows(namespace: str, metas: Sequence[Any], found: Any) -> list[Row]:
    """The rows of ``namespace`` in a read (its metadata and, unless None, vectors)."""
    return [
        Row(str(m.get("record_id")), dict(m), None if found is None else found[n])
        for n, m in enumerate(metas)
        if m.get("namespace") == namespace
    ]


def _halves(
    calls: ChromaCalls, collection: Collection, namespace: str, ids: list[str]
) -> list[Row]:
    half = len(ids) // 2
    first = _page(calls, collection, namespace, ids[:half], True)
    return first + _page(calls, collection, namespace, ids[half:], True)


def _aligned(found: Any, metas: Sequence[Any]) -> bool:
    """Whether a read's vectors pair one to one with its metadata rows.

    A write committed while Chroma answers a ``get`` can leave the vectors it returns
    out of step with the metadata it returns (seen as an empty vector array beside
    rows); vectors are then matched to no row rather than to the wrong one.
    """
    return not metas or (found is not None and len(found) == len(metas))
