"""A store whose calls are OpenTelemetry spans (:mod:`lamina.core.tracing`).

:func:`traced` wraps a store only while an SDK tracer provider is set up, so without one
the nodes talk to the store itself and nothing changes. Each call becomes a span
``lamina.store.<call>`` with the namespace (hashed by default), the granularity and the
number of records it read or wrote; an exception is recorded on its span and raised.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TypeVar

from ..core.tracing import enabled, span
from ..records.audit import AuditEntry
from ..records.model import FactRecord, Granularity, MemoryRecord, ProfileRecord
from .base import MemoryStore, SearchAnswer, SearchRequest, Where
from .filters import TimeWindow
from .wrapping import WrappedStore

T = TypeVar("T")

__all__ = ["TracedStore", "traced"]


def traced(store: MemoryStore) -> MemoryStore:
    """``store`` with its calls as spans while tracing is on; else ``store`` itself."""
    if not enabled() or isinstance(store, TracedStore):
        return store
    return TracedStore(store)


def _count(result: object) -> int | None:
    if isinstance(result, list | tuple):
        return len(result)
    if isinstance(result, int) and not isinstance(result, bool):
        return result
    return None


class TracedStore(WrappedStore):
    """Every :class:`MemoryStore` call of ``inner`` inside a span of its own."""

    def _call(
        self, name: str, namespace: str | None, granularity: object, run: Callable[[], T]
    ) -> T:
        attributes = {"lamina.granularity": str(granularity)} if granularity is not None else {}
        with span(f"lamina.store.{name}", namespace, attributes) as current:
            result = run()
            if current is not None and (n := _count(result)) is not None:
                current.set_attribute("lamina.records", n)
            return result

    def search_many(self, request: SearchRequest) -> SearchAnswer:
        """Every ranking of ``request`` (one span)."""
        grans = ",".join(str(g) for g in request.rankings)
        return self._call(
            "search", request.namespace, grans, lambda: self.inner.search_many(request)
        )

    def add(self, namespace: str, records: Sequence[MemoryRecord]) -> list[str]:
        """Insert or replace records."""
        grans = ",".join(sorted({r.granularity.value for r in records}))
        return self._call(
            "add", namespace, grans or None, lambda: self.inner.add(namespace, records)
        )

    def get(
        self,
        granularity: Granularity | str,
        namespace: str,
        ids: Sequence[str] | None = None,
        *,
        window: TimeWindow | None = None,
        where: Where | None = None,
        limit: int | None = None,
    ) -> list[MemoryRecord]:
        """Records by id and/or filter."""
        return self._call(
            "get",
            namespace,
            granularity,
            lambda: self.inner.get(
                granularity, namespace, ids, window=window, where=where, limit=limit
            ),
        )

    def update(self, namespace: str, record: MemoryRecord) -> MemoryRecord:
        """Replace an existing record."""
        return self._call(
            "update", namespace, record.granularity, lambda: self.inner.update(namespace, record)
        )

    def mark_superseded(
        self,
        namespace: str,
        fact_id: str,
        *,
        superseded_by: str,
        at: datetime | None = None,
        audit: AuditEntry | None = None,
    ) -> FactRecord:
        """Close a fact's validity in favour of a newer one."""
        return self._call(
            "mark_superseded",
            namespace,
            Granularity.FACT,
            lambda: self.inner.mark_superseded(
                namespace, fact_id, superseded_by=superseded_by, at=at, audit=audit
            ),
        )

    def delete(
        self,
        granularity: Granularity | str,
        namespace: str,
        ids: Sequence[str] | None = None,
        *,
        window: TimeWindow | None = None,
        where: Where | None = None,
    ) -> int:
        """Delete records."""
        return self._call(
            "delete",
            namespace,
            granularity,
            lambda: self.inner.delete(granularity, namespace, ids, window=window, where=where),
        )

    def count(self, granularity: Granularity | str, namespace: str) -> int:
        """How many records a granularity of a namespace holds."""
        return self._call(
            "count", namespace, granularity, lambda: self.inner.count(granularity, namespace)
        )

    def put_profile(self, profile: ProfileRecord) -> ProfileRecord:
        """Store a namespace's profile."""
        return self._call(
            "put_profile", profile.namespace, "profile", lambda: self.inner.put_profile(profile)
        )

    def get_profile(self, namespace: str) -> ProfileRecord | None:
        """A namespace's profile, or None."""
        return self._call(
            "get_profile", namespace, "profile", lambda: self.inner.get_profile(namespace)
        )

    def append_audit(self, entry: AuditEntry) -> AuditEntry:
        """Append an audit entry."""
        return self._call(
            "append_audit", entry.namespace, "audit", lambda: self.inner.append_audit(entry)
        )

    def list_audit(self, namespace: str) -> list[AuditEntry]:
        """A namespace's audit log."""
        return self._call(
            "list_audit", namespace, "audit", lambda: self.inner.list_audit(namespace)
        )
