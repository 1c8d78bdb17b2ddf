"""The sweeper: expired memories (``add(..., expires_at=)`` / ``ttl=``) forgotten for good.

Reads leave an expired record out at once (:mod:`lamina.stores.expiry`); the sweep then
removes it through ``forget``, with the same cascade (what was derived only from it
goes too), tombstone and erasure. ``MemoryConfig(sweep_interval_minutes=...)`` runs it
periodically on a thread the Memory owns; ``sweep_expired()`` runs it now.

A namespace may have a default TTL (``set_default_ttl``), applied to every memory added
to it afterwards without an ``expires_at`` or ``ttl`` of its own. It is kept in the
store (:class:`~lamina.records.settings.NamespaceSettings`), so every process and
machine that opens the store applies it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import datetime, timedelta

from ..agents.ingest.nodes.scenes import summary_of
from ..config import MemoryConfig
from ..errors import InvalidTypeError
from ..records.model import SceneRecord, utc_now
from ..records.settings import NamespaceSettings
from ..stores.chroma import ChromaMemoryStore
from ..stores.expiry import earliest_expiry, unexpired
from ..stores.namespaces import expired_records
from .inputs import require_aware, require_namespace, require_ttl
from .results import ForgetResult
from .twins import in_thread

logger = logging.getLogger("lamina.memory")


def namespace_settings(store: object, namespace: str) -> NamespaceSettings | None:
    """The namespace's settings, or None (none set, or a store that keeps none)."""
    get = getattr(store, "get_namespace_settings", None)
    found = get(namespace) if callable(get) else None
    return found if isinstance(found, NamespaceSettings) else None


def namespace_default_ttl(store: object, namespace: str) -> timedelta | None:
    """The default TTL ``store`` keeps for ``namespace``, or None."""
    settings = namespace_settings(store, namespace)
    return None if settings is None else settings.default_ttl


def default_expiry(store: object, namespace: str, now: datetime | None = None) -> datetime | None:
    """When a memory added to ``namespace`` at ``now`` expires by its default (None: never)."""
    ttl = namespace_default_ttl(store, namespace)
    return None if ttl is None else (now or utc_now()) + ttl


class ExpiryMethods:
    """``sweep_expired`` and the periodic sweeper, mixed into :class:`~lamina.Memory`."""

    store: ChromaMemoryStore
    config: MemoryConfig
    _sweeper: threading.Thread | None = None
    _sweep_stop: threading.Event | None = None
    _closed: bool  # the facade's (:class:`.lifecycle.LifecycleMethods`)

    forget: Callable[..., ForgetResult]  # the facade's (:class:`.editing.EditMethods`)

    def set_default_ttl(self, namespace: str, ttl: timedelta | float | None) -> None:
        """Make memories added to ``namespace`` from now on expire ``ttl`` after they are added.

        The default is stored in the store, so every process and machine that opens it
        applies it; memories already stored keep their expiry. An ``add`` or
        ``add_facts`` given its own ``expires_at`` or ``ttl`` uses that instead, and what
        is built from the turns expires with them.

        Args:
            namespace: The namespace it applies to.
            ttl: A timedelta, or seconds; None removes the default (memories never expire).

        Raises:
            InvalidInputError: A ``ttl`` not positive (a memory that has already expired
                is not stored) or longer than a thousand years.
            InvalidTypeError: ``ttl`` is not a timedelta or a number; or the store keeps
                no namespace settings.
        """
        namespace = require_namespace(namespace)
        seconds = None if ttl is None else require_ttl("ttl", ttl).total_seconds()
        put = getattr(self.store, "put_namespace_settings", None)
        if not callable(put):
            raise InvalidTypeError(
                f"{type(self.store).__name__} keeps no namespace settings: give it "
                "put_namespace_settings() and get_namespace_settings(), or use "
                "ChromaMemoryStore or PostgresMemoryStore"
            )
        put(NamespaceSettings(namespace=namespace, default_ttl_seconds=seconds))

    def default_ttl(self, namespace: str) -> timedelta | None:
        """The default TTL of ``namespace`` (``set_default_ttl``); None when it has none."""
        return namespace_default_ttl(self.store, require_namespace(namespace))

    aset_default_ttl = in_thread(set_default_ttl)
    """Async :meth:`set_default_ttl`, with the same arguments (run in a worker thread)."""
    adefault_ttl = in_thread(default_ttl)
    """Async :meth:`default_ttl`, with the same arguments (run in a worker thread)."""

    def sweep_expired(self, namespace: str | None = None, *, now: datetime | None = None) -> int:
        """Forget every memory whose ``expires_at`` has passed; return how many were deleted.

        Each namespace's expired turns, facts and episodes go in one ``forget`` (cascade,
        tombstone and erasure included). A scene that quoted an expired episode is
        rewritten from the members left, or forgotten when none is. Searches, lists and
        answers leave expired memories out before any sweep.

        Args:
            namespace: Sweep this namespace only (default: all of them).
            now: The time expiry is judged at (aware; default: now).
        """
        if namespace is not None:
            require_namespace(namespace)
        at = require_aware("now", now) or utc_now()
        deleted = 0
        for ns, found in sorted(expired_records(self.store, at).items()):
            if namespace is not None and ns != namespace:
                continue
            ids = sorted({i for gran, rids in found.items() if gran != "scene" for i in rids})
            if ids:
                deleted += self.forget(namespace=ns, memory_ids=ids).count
            deleted += self._rewrite_scenes(ns, found.get("scene", []), at)
        return deleted

    asweep_expired = in_thread(sweep_expired)
    """Async :meth:`sweep_expired`, with the same arguments (run in a worker thread)."""

    def _rewrite_scenes(self, namespace: str, ids: list[str], now: datetime) -> int:
        """Scenes hidden by an expired member: rebuilt from the others, or forgotten."""
        gone = []
        for scene in self.store.get("scene", namespace, ids):
            if not isinstance(scene, SceneRecord):
                continue
            members = unexpired(self.store.get("episode", namespace, scene.members), now)
            if not members:
                gone.append(scene.id)
                continue
            kept = [m.id for m in members]
            ctx = self.config.memory_context(namespace)
            fresh = scene.model_copy(
                update={
                    "members": kept,
                    "text": summary_of(self.store, ctx, kept) or scene.text,
                    "source_ids": list(dict.fromkeys(s for m in members for s in m.source_ids)),
                    "expires_at": earliest_expiry(members),
                }
            )
            self.store.update(namespace, fresh)
        return self.forget(namespace=namespace, memory_ids=gone).count if gone else 0

    def _start_sweeper(self) -> None:
        """Sweep every ``config.sweep_interval_minutes`` until :meth:`_stop_sweeper`."""
        minutes = self.config.sweep_interval_minutes
        if minutes is None or self._sweeper is not None:
            return
        interval = minutes * 60
        stop = threading.Event()

        def run() -> None:
            while not stop.wait(interval):
                try:
                    self.sweep_expired()
                except Exception as e:  # a store that is down: the next sweep tries again
                    if self._closed:  # closed mid-sweep: the rest waits for the next Memory
                        return
                    logger.warning("sweeping expired memories failed: %s", e)

        self._sweep_stop = stop
        self._sweeper = threading.Thread(target=run, name="lamina-sweeper", daemon=True)
        self._sweeper.start()

    def _stop_sweeper(self) -> None:
        if self._sweep_stop is not None:
            self._sweep_stop.set()
