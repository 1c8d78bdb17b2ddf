"""A store that wraps another: every call goes to the inner store unless overridden.

Stages that change one part of a store's behaviour (the reranking stage changes search)
subclass :class:`WrappedStore` and override that part only, instead of restating the
whole :class:`~lamina.stores.base.MemoryStore` protocol.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Unpack

from ..records.audit import AuditEntry
from ..records.model import FactRecord, Granularity, MemoryRecord, ProfileRecord
from .base import (
    GetOptions,
    MemoryStore,
    Scope,
    SearchAnswer,
    SearchByRequest,
    SearchRequest,
    SupersedeOptions,
)
from .indexing import IndexTextPolicy


class WrappedStore(SearchByRequest):
    """A :class:`MemoryStore` that forwards every call to ``inner``.

    Store-specific methods (``delete_namespace``, ``lexical_index``...) are the inner
    store's too.
    """

    def __init__(self, inner: MemoryStore) -> None:
        self.inner = inner

    @property
    def index_policy(self) -> IndexTextPolicy:
        """The inner store's index text policy."""
        return self.inner.index_policy

    def search_many(self, request: SearchRequest) -> SearchAnswer:
        """Every ranking of ``request`` (inner store)."""
        return self.inner.search_many(request)

    def add(self, namespace: str, records: Sequence[MemoryRecord]) -> list[str]:
        """Insert or replace records (inner store)."""
        return self.inner.add(namespace, records)

    def get(
        self,
        granularity: Granularity | str,
        namespace: str,
        ids: Sequence[str] | None = None,
        **options: Unpack[GetOptions],
    ) -> list[MemoryRecord]:
        """Return records by id and/or filter (inner store)."""
        return self.inner.get(granularity, namespace, ids, **options)

    def update(self, namespace: str, record: MemoryRecord) -> MemoryRecord:
        """Replace an existing record (inner store)."""
        return self.inner.update(namespace, record)

    def mark_superseded(
        self,
        namespace: str,
        fact_id: str,
        *,
        superseded_by: str,
        **options: Unpack[SupersedeOptions],
    ) -> FactRecord:
        """Close a fact's validity, with its audit entry when given (inner store)."""
        return self.inner.mark_superseded(
            namespace, fact_id, superseded_by=superseded_by, **options
        )

    def delete(
        self,
        granularity: Granularity | str,
        namespace: str,
        ids: Sequence[str] | None = None,
        **scope: Unpack[Scope],
    ) -> int:
        """Delete records (inner store)."""
        return self.inner.delete(granularity, namespace, ids, **scope)

    def count(self, granularity: Granularity | str, namespace: str) -> int:
        """Count records (inner store)."""
        return self.inner.count(granularity, namespace)

    def put_profile(self, profile: ProfileRecord) -> ProfileRecord:
        """Store a profile (inner store)."""
        return self.inner.put_profile(profile)

    def get_profile(self, namespace: str) -> ProfileRecord | None:
        """Return a profile (inner store)."""
        return self.inner.get_profile(namespace)

    def append_audit(self, entry: AuditEntry) -> AuditEntry:
        """Append an audit entry (inner store)."""
        return self.inner.append_audit(entry)

    def list_audit(self, namespace: str) -> list[AuditEntry]:
        """Return the audit log (inner store)."""
        return self.inner.list_audit(namespace)

    def __getattr__(self, name: str) -> Any:
        """Store-specific methods (``delete_namespace``...) of the inner store."""
        if name == "inner":  # not set yet: never recurse
            raise AttributeError(name)
        return getattr(self.inner, name)


__all__ = ["WrappedStore"]
