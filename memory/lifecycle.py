"""Closing a :class:`~lamina.Memory`: ``close``, ``aclose`` and the context managers."""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import Callable
from typing import Any, Self


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
        Safe to call twice; also runs at interpreter exit for a Memory never closed.
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
