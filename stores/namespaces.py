"""Reads across namespaces: record counts per granularity, pending work, expired records.

The :class:`~lamina.stores.base.MemoryStore` protocol scopes every call to one
namespace; these read across them. A store of another kind may define
``namespace_counts()``, ``pending_namespaces()`` and ``expired_records(now)`` itself (a
fake, or a backend of your own); Chroma reads row ids only (each is
``"<namespace>|<record id>"``), Postgres groups by its ``namespace`` column.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from typing import Any

from ..errors import InvalidTypeError
from ..records.model import Granularity
from .chroma import ChromaMemoryStore
from .codec import EXPIRES_TS

NamespaceCounts = dict[str, dict[str, int]]
"""``{namespace: {granularity: records}}``; a granularity with no record is left out."""


def _postgres(store: object) -> Any:
    """The store as a Postgres store, or None (the extra may not be installed)."""
    try:
        from .postgres import PostgresMemoryStore
    except ImportError:  # lamina[postgres] not installed: no store can be one
        return None
    return store if isinstance(store, PostgresMemoryStore) else None


def _unsupported(store: object, what: str) -> InvalidTypeError:
    return InvalidTypeError(
        f"{type(store).__name__} cannot list {what}; give it a {what.replace(' ', '_')}() "
        "method, or use ChromaMemoryStore or PostgresMemoryStore"
    )


def _chroma_namespaces(
    store: ChromaMemoryStore, gran: Granularity, where: Any = None
) -> Counter[str]:
    rows = store._calls.read(store._collections[gran].get, where=where, include=[])
    return Counter(row.rsplit("|", 1)[0] for row in rows["ids"])


def namespace_counts(store: object) -> NamespaceCounts:
    """How many records each namespace holds, per granularity (sorted by namespace)."""
    own = getattr(store, "namespace_counts", None)
    if callable(own):
        return dict(own())
    out: dict[str, dict[str, int]] = {}
    if isinstance(store, ChromaMemoryStore):
        for gran in Granularity:
            for ns, n in _chroma_namespaces(store, gran).items():
                out.setdefault(ns, {})[gran.value] = n
    elif (pg := _postgres(store)) is not None:
        from psycopg import sql

        for gran in Granularity:
            statement = sql.SQL("SELECT namespace, count(*) FROM {} GROUP BY namespace").format(
                pg.names.records(gran)
            )
            with pg.atomic() as conn:
                for ns, n in conn.execute(statement).fetchall():
                    out.setdefault(str(ns), {})[gran.value] = int(n)
    else:
        raise _unsupported(store, "namespace counts")
    return dict(sorted(out.items()))


def pending_namespaces(store: object) -> dict[str, int]:
    """Namespaces with raw turns awaiting background consolidation, with how many."""
    own = getattr(store, "pending_namespaces", None)
    if callable(own):
        return dict(own())
    if isinstance(store, ChromaMemoryStore):
        return dict(_chroma_namespaces(store, Granularity.RAW, {"pending": {"$eq": True}}))
    if (pg := _postgres(store)) is not None:
        from psycopg import sql

        statement = sql.SQL(
            "SELECT namespace, count(*) FROM {} WHERE meta -> 'pending' = 'true'::jsonb "
            "GROUP BY namespace"
        ).format(pg.names.records(Granularity.RAW))
        with pg.atomic() as conn:
            return {str(ns): int(n) for ns, n in conn.execute(statement).fetchall()}
    raise _unsupported(store, "pending namespaces")


def expired_records(store: object, now: datetime) -> dict[str, dict[str, list[str]]]:
    """Ids of the records whose ``expires_at`` is at or before ``now``.

    ``{namespace: {granularity: ids}}``.
    """
    own = getattr(store, "expired_records", None)
    if callable(own):
        return dict(own(now))
    out: dict[str, dict[str, list[str]]] = {}
    if isinstance(store, ChromaMemoryStore):
        where = {EXPIRES_TS: {"$lte": now.timestamp()}}
        for gran in Granularity:
            rows = store._calls.read(store._collections[gran].get, where=where, include=[])
            for row in rows["ids"]:
                ns, rid = row.rsplit("|", 1)
                out.setdefault(ns, {}).setdefault(gran.value, []).append(rid)
        return out
    if (pg := _postgres(store)) is not None:
        from psycopg import sql

        for gran in Granularity:
            statement = sql.SQL(
                "SELECT namespace, id FROM {} WHERE (meta ->> %s)::float8 <= %s"
            ).format(pg.names.records(gran))
            with pg.atomic() as conn:
                for ns, rid in conn.execute(statement, [EXPIRES_TS, now.timestamp()]).fetchall():
                    out.setdefault(str(ns), {}).setdefault(gran.value, []).append(str(rid))
        return out
    raise _unsupported(store, "expired records")
