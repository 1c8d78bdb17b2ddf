"""A store whose calls are OpenTelemetry spans (:mod:`lamina.core.tracing`).

:func:`traced` wraps a store only while an SDK tracer provider is set up, so without one
the nodes talk to the store itself and nothing changes. Each call becomes a span
``lamina.store.<call>`` with the namespace (hashed by default), the granularity and the
number of records it read or wrote; an exception is recorded on its span and raised.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

from ..core.tracing import enabled, traced_method
from ..records.model import Granularity
from .base import LexicalView, MemoryStore
from .wrapping import WrappedStore

T = TypeVar("T")
C = TypeVar("C", bound=type)

TRACED_STORE_CALLS = (
    "add",
    "get",
    "update",
    "mark_superseded",
    "delete",
    "delete_namespace",
    "count",
    "search_many",
    "vectors",
    "put_profile",
    "get_profile",
    "append_audit",
    "list_audit",
)
"""The store calls that are spans (``search`` is ``search_many``'s); a class without one
(``delete_namespace`` is not in the protocol) keeps the others."""

TRACED_ASYNC_STORE_CALLS = (
    "aadd",
    "aget",
    "acount",
    "avectors",
    "adistinct",
    "asearch_many",
    "aget_profile",
    "alist_audit",
)
"""The async twins that are spans, named as their sync call (``lamina.store.get``); the
Postgres store has them (:mod:`lamina.stores.postgres.aio`). ``asearch`` is
``asearch_many``'s, and ``adistinct`` is the span ``lamina.store.distinct``."""

__all__ = [
    "TRACED_ASYNC_STORE_CALLS",
    "TRACED_STORE_CALLS",
    "TracedStore",
    "trace_store_calls",
    "traced",
]


def _traces_itself(store: object) -> bool:
    while store is not None:
        if isinstance(store, TracedStore) or getattr(type(store), "traces_itself", False):
            return True
        store = getattr(store, "inner", None)
    return False


def traced(store: MemoryStore) -> MemoryStore:
    """``store`` with its calls as spans while tracing is on; else ``store`` itself.

    A store that traces itself, or wraps one that does, is returned as it is.
    """
    if not enabled() or _traces_itself(store):
        return store
    return TracedStore(store)


def _granularity(call: str, arguments: dict[str, Any]) -> object:
    """The granularity a store call names, if its arguments say it without being consumed."""
    records = arguments.get("records")
    if "granularity" in arguments:
        return arguments["granularity"]
    if "record" in arguments:
        return getattr(arguments["record"], "granularity", None)
    if hasattr(records, "granularity"):  # one record, which the store takes as a list of one
        records = [records]
    if isinstance(records, list | tuple):  # never iterate a generator the store will read
        grans = {getattr(getattr(r, "granularity", None), "value", None) for r in records}
        return ",".join(sorted(g for g in grans if isinstance(g, str))) or None
    if "request" in arguments:
        return ",".join(str(g) for g in getattr(arguments["request"], "rankings", ()))
    if call == "mark_superseded":
        return Granularity.FACT
    if call in ("put_profile", "get_profile"):
        return "profile"
    return "audit" if "audit" in call else None


def _scope(call: str, arguments: dict[str, Any]) -> tuple[str | None, object]:
    """The namespace and granularity a store call names, read from its arguments."""
    holder = arguments.get("request") or arguments.get("profile") or arguments.get("entry")
    namespace = arguments.get("namespace", getattr(holder, "namespace", None))
    return (namespace if isinstance(namespace, str) else None), _granularity(
        call, arguments
    ) or None


def _span_method(call: str, method: Callable[..., T]) -> Callable[..., T]:
    """``method`` as a span named for the sync call (``aget`` and ``get``: ``lamina.store.get``)."""
    sync = call.removeprefix("a") if inspect.iscoroutinefunction(method) else call
    name = "search" if sync == "search_many" else sync

    def scope(arguments: dict[str, Any]) -> tuple[str | None, dict[str, Any]]:
        namespace, granularity = _scope(sync, arguments)
        return namespace, {"lamina.granularity": str(granularity)} if granularity else {}

    return traced_method(method, f"lamina.store.{name}", scope, _figures)


def _figures(result: object) -> dict[str, int]:
    """A span's figures from a store call's result: how many records it read or wrote."""
    return {} if (n := _count(result)) is None else {"lamina.records": n}


def _count(result: object) -> int | None:
    if isinstance(result, list | tuple | set | dict):
        return len(result)
    if isinstance(result, int) and not isinstance(result, bool):
        return result
    return None


class _TracedView:
    """A keyword index view (:class:`LexicalView`) whose reads are spans of their own."""

    def __init__(self, view: LexicalView, namespace: str, granularity: object) -> None:
        self.inner, self.namespace, self.granularity = view, namespace, granularity

    def ids(self) -> set[str]:
        return self.inner.ids()

    def scores(self, query: str) -> dict[str, float]:
        return self.inner.scores(query)

    def distinct(self, key: str, limit: int = 64) -> list[Any]:
        return self.inner.distinct(key, limit)

    def latest(self) -> float | None:
        return self.inner.latest()

    def __len__(self) -> int:
        return len(self.inner)

    def __contains__(self, record_id: object) -> bool:
        return record_id in self.inner


def _view_scope(arguments: dict[str, Any]) -> tuple[str | None, dict[str, Any]]:
    view = arguments["self"]
    return view.namespace, {"lamina.granularity": str(view.granularity)}


VIEW_SPANS = {"ids": "ids", "scores": "keyword_scores", "distinct": "distinct", "latest": "latest"}
"""The keyword view's reads and their span names (``adistinct``'s span is ``distinct`` too)."""

for _read, _name in VIEW_SPANS.items():
    setattr(
        _TracedView,
        _read,
        traced_method(
            getattr(_TracedView, _read),
            f"lamina.store.{_name}",
            _view_scope,
            _figures,
        ),
    )


def _traced_views(method: Callable[..., LexicalView]) -> Callable[..., LexicalView]:
    """``lexical_index`` whose views' reads are spans while tracing is on."""

    @functools.wraps(method)
    def call(self: Any, granularity: Granularity | str, namespace: str) -> LexicalView:
        view = method(self, granularity, namespace)
        return _TracedView(view, namespace, granularity) if enabled() else view

    return call


def trace_store_calls(cls: C) -> C:
    """Make each of ``cls``'s store calls a span (a class decorator), async twins included.

    ``lexical_index`` returns a view whose reads (``scores``, ``distinct``, ...) are spans.
    """
    for call in (*TRACED_STORE_CALLS, *TRACED_ASYNC_STORE_CALLS):
        if call in dir(cls):
            setattr(cls, call, _span_method(call, getattr(cls, call)))
    if "lexical_index" in dir(cls):
        cls.lexical_index = _traced_views(cls.lexical_index)  # type: ignore[attr-defined]
    cls.traces_itself = True  # type: ignore[attr-defined]
    return cls


@trace_store_calls
class TracedStore(WrappedStore):
    """Every :class:`MemoryStore` call of ``inner`` inside a span of its own.

    For a store of the application's own: lamina's stores trace themselves.
    """
