"""Deferred consolidation: ``add(..., consolidate="background")`` and its worker.

A background ``add`` stores the raw turns, each marked :class:`PendingBuild` (its call's
batch, time, ``session_closed`` and instructions), and returns; no LLM call is made in
the caller's path. What awaits construction is therefore read from the store
(``where={"pending": True}``, on every backend), never from RAM:

* :class:`Consolidator`, a thread the :class:`~lamina.Memory` owns, builds each pending
  batch of a namespace, oldest first, through the same ingest graph an inline ``add``
  runs (``{"pending_raw_ids": [...]}``: the turns are stored already), then clears the
  marks. A batch is built under its own checkpoint thread and every derived write is an
  upsert under a stable id, so a batch interrupted by a crash is resumed or replayed, never
  built twice.
* One worker per namespace at a time, across processes (:mod:`lamina.stores.worker_lock`):
  a namespace another process is building is tried again a second later, and is
  taken over if that process dies.
* A worker started on a store (by a background add, or :meth:`Memory.flush`) first picks up
  every pending turn it holds: those a crashed or closed process left behind.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import uuid
from collections.abc import Callable
from typing import Any, Literal

from ..config import MemoryConfig
from ..core.context import MemoryContext
from ..core.state import TurnInput
from ..errors import InvalidInputError, InvalidTypeError
from ..records.model import PendingBuild, RawTurn, utc_now
from ..stores.chroma import ChromaMemoryStore
from .inputs import require_namespace
from .lifecycle import CLOSED
from .models import ChatModelProvider
from .outcome import added
from .results import AddResult
from .verbatim import store_raw
from .worker import Consolidator

MAX_PENDING = 1000
"""Turns an ``add(..., consolidate="background")`` may leave waiting for this Memory's
worker; a call that would pass it waits (:data:`BACKLOG_WAIT`). A bound, so a stalled
worker cannot let the pending turns grow without end."""
BACKLOG_WAIT = 30.0
"""Seconds a background add waits for room in the worker's queue before it raises
``ConsolidationBacklogError``, having stored nothing: the caller learns of a stalled
worker instead of blocking on it, and may send the turns again."""

logger = logging.getLogger("lamina.memory")

Consolidate = Literal["inline", "background"]
CONSOLIDATE_MODES: tuple[Consolidate, ...] = ("inline", "background")


def require_consolidate(value: object) -> Consolidate:
    """``consolidate=`` as one of :data:`CONSOLIDATE_MODES`."""
    if value not in CONSOLIDATE_MODES:
        raise InvalidInputError(
            f"consolidate must be one of {CONSOLIDATE_MODES}, got {value!r}: 'background' "
            "stores the turns and leaves construction to the worker (see Memory.flush)"
        )
    return value


def queue_turns(
    store: Any,
    ctx: MemoryContext,
    turns: list[TurnInput],
    *,
    session_closed: bool,
    instructions: str | None,
) -> AddResult:
    """Store ``turns`` as raw records marked pending; a turn already stored stays as it is.

    Every record is built and validated before the first write, so bad input stores
    nothing.
    """
    mark = PendingBuild(
        batch=uuid.uuid4().hex,
        queued_at=utc_now(),
        session_closed=session_closed,
        instructions=instructions,
    )
    new, held = store_raw(store, ctx, turns, pending=mark)
    return AddResult(new_raw_ids=new, duplicate_raw_ids=held, pending_raw_ids=new)


class BackgroundMethods:
    """``add(..., consolidate="background")``, ``flush`` and ``aflush`` of the facade."""

    store: ChromaMemoryStore
    config: MemoryConfig
    _models: ChatModelProvider
    _lock: threading.Lock
    _closed: bool
    _worker: Consolidator | None = None

    _invoke: Callable[[dict[str, Any], MemoryContext, str], Any]  # the facade's graph run

    def _consolidator(self) -> Consolidator:
        with self._lock:
            worker = self._worker
            if worker is None:
                worker = Consolidator(
                    self.store,
                    self._build_pending,
                    max_pending=MAX_PENDING,
                    wait=BACKLOG_WAIT,
                )
                self._worker = worker
            return worker

    def _add_background(
        self, state: dict[str, Any], ctx: MemoryContext, instructions: str | None
    ) -> AddResult:
        """Store the turns pending and hand them to the worker; no LLM call."""
        if self._closed:
            raise InvalidInputError(CLOSED)
        turns: list[TurnInput] = state["turns"]
        worker = self._consolidator()
        worker.reserve(len(turns))
        result = queue_turns(
            self.store,
            ctx,
            turns,
            session_closed=bool(state.get("session_closed")),
            instructions=instructions,
        )
        worker.submitted(ctx.namespace, len(result.pending_raw_ids))
        return result

    def _build_pending(self, namespace: str, turns: list[RawTurn]) -> str | None:
        """Build one pending batch, then clear its marks; why it must wait, or None."""
        mark = turns[0].pending
        assert mark is not None
        overrides: dict[str, Any] = {}
        if mark.instructions:
            overrides["instructions"] = mark.instructions
        ctx = self.config.memory_context(namespace, **overrides)
        ids = [t.id for t in turns]
        state = {"pending_raw_ids": ids, "session_closed": mark.session_closed}
        result = added(self._invoke(state, ctx, "add"), namespace, self._models.get)
        if result.model_error is not None:
            return result.model_error
        now = self.store.get("raw", namespace, ids)  # as construction left them
        cleared = [
            t.model_copy(update={"pending": None})
            for t in now
            if isinstance(t, RawTurn) and t.pending is not None and t.pending.batch == mark.batch
        ]
        if cleared:
            self.store.add(namespace, cleared)
        return None

    def flush(self, namespace: str | None = None, *, timeout: float | None = None) -> None:
        """Wait until background consolidation has built every pending turn.

        Also starts the worker on turns a crashed or closed process left pending.

        Args:
            namespace: Wait for this namespace only (default: every namespace).
            timeout: Seconds to wait at most (default: as long as it takes).

        Raises:
            ConsolidationPendingError: Past ``timeout``, or when the last build could not
                reach the model or the store; ``pending`` says how many turns still wait
                (they stay stored, and the worker goes on).
            NamespaceError: A malformed ``namespace``; InvalidTypeError: a ``timeout``
                that is not a number of seconds (both before the worker starts).
        """
        if namespace is not None:
            require_namespace(namespace)
        given: object = timeout  # what a caller passed, whatever the annotation says
        if given is not None and (
            isinstance(given, bool) or not isinstance(given, int | float) or given != given
        ):
            raise InvalidTypeError(f"timeout must be a number of seconds or None, got {given!r}")
        if isinstance(given, int) and given > 10**9:  # past any float: as long as None waits
            timeout = None
        if self._closed:
            raise InvalidInputError(CLOSED)
        self._consolidator().flush(namespace, timeout)

    async def aflush(self, namespace: str | None = None, *, timeout: float | None = None) -> None:
        """Async :meth:`flush`."""
        await asyncio.to_thread(self.flush, namespace, timeout=timeout)

    def _stop_worker(self) -> None:
        """Stop the worker after its batch in progress (the rest stays pending, stored)."""
        if self._worker is not None:
            self._worker.stop()
