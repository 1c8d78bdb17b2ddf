"""The background consolidation worker of one Memory (see :mod:`.background`).

A thread, started on demand, that exits when idle. It drains one namespace at a time
under that namespace's worker lock (:mod:`lamina.stores.worker_lock`), batch by batch,
oldest first; a namespace another process holds is tried again a second later.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from typing import Any

from ..errors import ConsolidationBacklogError, ConsolidationPendingError, InvalidInputError
from ..records.model import RawTurn
from ..stores.namespaces import pending_namespaces
from ..stores.worker_lock import worker_lock
from .lifecycle import CLOSED

logger = logging.getLogger("lamina.memory")

RETRY_SECONDS = 1.0
"""How soon a namespace another process is building is tried again."""
BACKOFF_SECONDS = 30.0
"""How long a namespace whose build failed (model or store unreachable) waits."""
SETTLE_SECONDS = 0.3
"""A namespace is built once its adds pause this long (see :meth:`Consolidator.submitted`)."""
MAX_SETTLE_SECONDS = 3.0
"""... or this long after the first add waiting, whatever comes first."""
POLL_SECONDS = 0.2
"""How often :meth:`Memory.flush` re-reads the store (another process may build)."""


def pending_batches(store: Any, namespace: str) -> list[list[RawTurn]]:
    """The namespace's pending turns, one list per add call, oldest call first."""
    found = store.get("raw", namespace, where={"pending": True})
    batches: dict[str, list[RawTurn]] = {}
    for turn in found:
        if isinstance(turn, RawTurn) and turn.pending is not None:
            batches.setdefault(turn.pending.batch, []).append(turn)
    ordered = sorted(
        batches.values(),
        key=lambda b: (min(t.pending.queued_at for t in b), b[0].pending.batch),  # type: ignore[union-attr]
    )
    return [sorted(b, key=lambda t: (t.occurred_at, t.session_id, t.turn_index)) for b in ordered]


def pending_count(store: Any, namespace: str | None = None) -> int:
    """Raw turns awaiting background consolidation, in ``namespace`` or in the store."""
    if namespace is not None:  # any MemoryStore answers this
        return len(store.get("raw", namespace, where={"pending": True}))
    return sum(pending_namespaces(store).values())


WORKER_NICENESS = 10
"""How much lower the worker thread's CPU priority is than the app's (Linux)."""


def yield_cpu() -> None:
    """Lower this thread's CPU priority, so the app's own calls go first on a busy CPU.

    Linux schedules threads one by one, so a thread's niceness is its own; elsewhere
    this does nothing.
    """
    try:
        current = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), current + WORKER_NICENESS)
    except (AttributeError, OSError):  # not Linux, or not allowed: run as is
        pass


Build = Callable[[str, list[RawTurn]], str | None]
"""Builds one batch of a namespace; returns None when built, or why it must wait."""


class Consolidator:
    """The background worker of one Memory: a thread, started on demand, idle-exiting.

    Args:
        store: The store whose pending turns it builds.
        build: Builds one batch (the Memory's graph run, then the marks cleared).
        max_pending: Turns this Memory may leave waiting before a background add waits.
        wait: Seconds such an add waits for room before it raises.
    """

    def __init__(self, store: Any, build: Build, *, max_pending: int, wait: float) -> None:
        self.store = store
        self.build = build
        self.max_pending = max_pending
        self.wait = wait
        self._cond = threading.Condition()
        self._due: dict[str, float] = {}
        """Namespaces to drain, each with the monotonic time it is due."""
        self._waiting: dict[str, float] = {}
        """When the oldest add still waiting for its namespace's build came."""
        self._outstanding: dict[str, int] = {}
        """Turns this Memory queued per namespace that its worker has not seen built."""
        self._errors: dict[str, str] = {}
        """Why the last build of a namespace waits (model or store unreachable)."""
        self._current: str | None = None
        self._thread: threading.Thread | None = None
        self._stopping = False
        self._scanned = False

    # ----------------------------------------------------------------- queueing
    def reserve(self, n: int) -> None:
        """Wait for room for ``n`` more turns; raise when none came within ``wait``."""
        deadline = time.monotonic() + self.wait
        with self._cond:
            while sum(self._outstanding.values()) + n > self.max_pending and not self._stopping:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise ConsolidationBacklogError(
                        f"{sum(self._outstanding.values())} turn(s) already await background "
                        f"consolidation (at most {self.max_pending}) and none were built "
                        f"within {self.wait:g} s; nothing of this add was stored. Send it "
                        "again later, or add inline"
                    )
                self._cond.wait(left)

    def submitted(self, namespace: str, n: int) -> None:
        """``n`` turns of ``namespace`` were stored pending: build them once adds pause.

        The namespace is built :data:`SETTLE_SECONDS` after its last add, or at most
        :data:`MAX_SETTLE_SECONDS` after the first one waiting, so a burst of adds is
        not slowed down by building it while it lasts (``flush`` builds at once).
        """
        with self._cond:
            if n:
                self._outstanding[namespace] = self._outstanding.get(namespace, 0) + n
            now = time.monotonic()
            first = self._waiting.setdefault(namespace, now)
            due = min(now + SETTLE_SECONDS, first + MAX_SETTLE_SECONDS)
            self._due[namespace] = max(self._due.get(namespace, due), due)
            self._cond.notify_all()
            self._ensure_thread()

    def start(self, namespace: str | None = None) -> None:
        """Pick up the pending turns the store holds (all namespaces the first time)."""
        found = pending_namespaces(self.store) if namespace is None or not self._scanned else {}
        with self._cond:
            self._scanned = True
            for ns in [*found, *([] if namespace is None else [namespace])]:
                self._schedule(ns, 0.0)
            self._ensure_thread()

    def _schedule(self, namespace: str, delay: float) -> None:
        due = time.monotonic() + delay
        self._due[namespace] = min(self._due.get(namespace, due), due)
        self._cond.notify_all()

    def _ensure_thread(self) -> None:
        if self._stopping:
            raise InvalidInputError(CLOSED)
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(
                target=self._run, name="lamina-consolidator", daemon=True
            )
            self._thread.start()

    # ------------------------------------------------------------------ working
    def _next(self) -> str | None:
        with self._cond:
            while not self._stopping:
                now = time.monotonic()
                ready = [ns for ns, due in self._due.items() if due <= now]
                if ready:
                    namespace = min(ready, key=self._due.__getitem__)
                    del self._due[namespace]
                    self._waiting.pop(namespace, None)
                    self._current = namespace
                    return namespace
                if not self._due:
                    self._thread = None  # idle: the next submit starts a new one
                    return None
                self._cond.wait(min(self._due.values()) - now)
            return None

    def _run(self) -> None:
        yield_cpu()
        while (namespace := self._next()) is not None:
            try:
                self._drain(namespace)
            except Exception as e:  # the store failed: the turns stay pending in it
                logger.warning("background consolidation of %r failed: %s", namespace, e)
                with self._cond:
                    self._errors[namespace] = f"{type(e).__name__}: {e}"
                    self._schedule(namespace, BACKOFF_SECONDS)
            finally:
                with self._cond:
                    self._current = None
                    self._cond.notify_all()

    def _drain(self, namespace: str) -> None:
        lock = worker_lock(self.store, namespace)
        if not lock.acquire():  # another worker builds it; take over if it dies
            with self._cond:
                self._schedule(namespace, RETRY_SECONDS)
            return
        try:
            while not self._stopping:
                batches = pending_batches(self.store, namespace)
                if not batches:
                    with self._cond:
                        self._outstanding.pop(namespace, None)
                        self._errors.pop(namespace, None)
                        self._cond.notify_all()
                    return
                why = self.build(namespace, batches[0])
                with self._cond:
                    if why is not None:
                        self._errors[namespace] = why
                        self._schedule(namespace, BACKOFF_SECONDS)
                        return
                    self._errors.pop(namespace, None)
                    left = self._outstanding.get(namespace, 0) - len(batches[0])
                    self._outstanding[namespace] = max(left, 0)
                    self._cond.notify_all()
        finally:
            lock.release()

    # ------------------------------------------------------------------ waiting
    def flush(self, namespace: str | None, timeout: float | None) -> None:
        """Wait until the store holds no pending turn (in ``namespace``, or at all)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        self.start(namespace)
        where = f"namespace {namespace!r}" if namespace is not None else "the store"
        while True:
            left = pending_count(self.store, namespace)
            if left == 0:
                return
            with self._cond:
                errors = self._errors.items()  # a namespace being built now may yet succeed
                failed = [e for ns, e in errors if ns != self._current and namespace in (None, ns)]
                if failed:
                    raise ConsolidationPendingError(
                        f"{left} turn(s) still pending in {where}: the last build could not "
                        f"run ({failed[0]}); they stay stored and the worker tries again in "
                        f"{BACKOFF_SECONDS:g} s",
                        pending=left,
                    )
                now = time.monotonic()
                if deadline is not None and now >= deadline:
                    raise ConsolidationPendingError(
                        f"{left} turn(s) still pending in {where} after {timeout:g} s; they "
                        "stay stored and the worker goes on building them",
                        pending=left,
                    )
                wait = POLL_SECONDS if deadline is None else min(POLL_SECONDS, deadline - now)
                self._cond.wait(wait)

    def stop(self, timeout: float | None = None) -> None:
        """Stop after the batch in progress; what is left stays pending in the store."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
