"""Closing a :class:`~lamina.Memory`: ``close``, ``aclose`` and the context managers."""

from __future__ import annotations

import asyncio
import functools
import inspect
import threading
import weakref
from collections.abc import Callable
from typing import Any, Self, TypeVar

from ..errors import InvalidInputError
from .spans import TRACED_ASYNC_CALLS, TRACED_CALLS

C = TypeVar("C", bound=type)

CLOSED = "this Memory is closed; create a new one"


def _open_only(method: Callable[..., Any]) -> Callable[..., Any]:
    """``method``, raising :data:`CLOSED` as an InvalidInputError once the Memory is closed."""
    if inspect.iscoroutinefunction(method):

        @functools.wraps(method)
        async def acall(self: Any, *args: Any, **kwargs: Any) -> Any:
            if self._closed:
                raise InvalidInputError(CLOSED)
            return await method(self, *args, **kwargs)

        return acall

    @functools.wraps(method)
    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        if self._closed:
            raise InvalidInputError(CLOSED)
        return method(self, *args, **kwargs)

    return call


def refuse_once_closed(cls: C) -> C:
    """Make each public call of ``cls`` (the calls that are spans) refuse a closed Memory.

    After ``close()`` every call raises the same :class:`~lamina.errors.InvalidInputError`,
    whatever the store: a Chroma store that the Memory did not open would otherwise still
    answer and take writes, and a closed Postgres store raise a retryable
    ``StoreUnavailableError``. The async twins that run their sync call in a thread are
    refused by that call.
    """
    for name in (*TRACED_CALLS, *TRACED_ASYNC_CALLS):
        setattr(cls, name, _open_only(getattr(cls, name)))
    return cls


class LifecycleMethods:
    """``close``, ``aclose``, ``with`` and ``async with``, mixed into the facade."""

    store: Any
    _closed: bool
    _lock: threading.Lock
    _graph: Any
    _finalizer: weakref.finalize[Any, Any]
    _own_postgres_store: bool

    _stop_worker: Callable[[], None]  # the background worker's (see :mod:`.background`)
    _stop_sweeper: Callable[[], None]  # the periodic sweeper's (see :mod:`.expiry`)

    def close(self) -> None:
        """Stop the local model server; close the checkpointer and Postgres store it opened.

        A background worker stops after the batch it is building; turns still pending
        stay in the store, for the next Memory on it (``flush()`` first to wait for them).
        Every call after it raises InvalidInputError. Safe to call twice; also runs at
        interpreter exit for a Memory never closed.
        """
        self._closed = True
        self._stop_sweeper()
        self._stop_worker()
        with self._lock:
            self._graph = None
        self._finalizer()

    async def aclose(self) -> None:
        """Async :meth:`close`: the async pool of a Postgres store it opened closes on this loop."""
        await asyncio.to_thread(self._stop_worker)
        aclose = getattr(self.store, "aclose", None) if self._own_postgres_store else None
        if aclose is not None:
            await aclose()
        self.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
