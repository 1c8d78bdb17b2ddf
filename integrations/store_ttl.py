"""Item TTLs for :class:`~lamina.integrations.LaminaStore`, with LangGraph's semantics.

A put with ``ttl`` (minutes; the store's ``TTLConfig.default_ttl`` when the put gives
none) writes the item's expiry into its record's metadata. A read with ``refresh_ttl``
(``TTLConfig.refresh_on_read``, True by default) moves the expiry of the items it
returns ``ttl`` minutes past now. :meth:`TTLMethods.sweep_ttl` deletes the expired items
(with their indexed fields, and the namespace's registry entry when it empties), and
:meth:`TTLMethods.start_ttl_sweeper` runs it every ``sweep_interval_minutes`` in a
daemon thread. Until a sweep, an expired item is still read, as in LangGraph's stores,
unless ``TTLConfig.omit_expired`` is set: then get, search and list_namespaces leave it
out at once, and a read never refreshes it back to life.
"""

from __future__ import annotations

import concurrent.futures
import math
import threading
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from langgraph.store.base import TTLConfig

from ..errors import InvalidInputError, InvalidTypeError
from ..records.model import Granularity, MemoryRecord
from ..stores.base import MemoryStore
from .store_items import ITEMS, KEY, fields_of, registry_id, registry_labels
from .store_namespace import to_lamina

EXPIRES, TTL_MINUTES = "lg_expires", "lg_ttl"
"""Item record metadata: when it expires (POSIX seconds) and its TTL (minutes)."""

_TTL_KEYS = frozenset({"refresh_on_read", "omit_expired", "default_ttl", "sweep_interval_minutes"})

__all__ = ["EXPIRES", "TTL_MINUTES", "TTLMethods", "check_ttl", "check_ttl_config", "expiry"]


def check_ttl(ttl: object, what: str = "ttl") -> float | None:
    """``ttl`` in minutes, or None for no expiry.

    Raises:
        InvalidTypeError: not a number.
        InvalidInputError: zero, negative or not finite: an item that would be stored
            already expired is refused, never stored.
    """
    if ttl is None:
        return None
    if isinstance(ttl, bool) or not isinstance(ttl, int | float):
        raise InvalidTypeError(f"{what} must be a number of minutes or None, got {ttl!r}")
    try:
        finite = math.isfinite(ttl)
    except OverflowError:  # an int beyond any float
        finite = False
    if not finite or ttl <= 0:
        raise InvalidInputError(
            f"{what} must be a positive number of minutes, got {ttl!r}: an item with it "
            "would expire before it is stored"
        )
    return float(ttl)


def check_ttl_config(config: object) -> TTLConfig | None:
    """A validated LangGraph ``TTLConfig`` (a dict), or None.

    Raises:
        InvalidTypeError: not a dict, or a field of the wrong type.
        InvalidInputError: an unknown key or a non-positive duration.
    """
    if config is None:
        return None
    if not isinstance(config, Mapping):
        raise InvalidTypeError(f"ttl must be a TTLConfig dict or None, got {type(config).__name__}")
    unknown = sorted(set(config) - _TTL_KEYS)
    if unknown:
        raise InvalidInputError(f"unknown TTLConfig key(s) {unknown}; known: {sorted(_TTL_KEYS)}")
    for flag in ("refresh_on_read", "omit_expired"):
        if flag in config and not isinstance(config[flag], bool):
            raise InvalidTypeError(f"TTLConfig {flag} must be True or False")
    check_ttl(config.get("default_ttl"), "TTLConfig default_ttl")
    check_ttl(config.get("sweep_interval_minutes"), "TTLConfig sweep_interval_minutes")
    return TTLConfig(**config)  # type: ignore[typeddict-item]


def expiry(ttl: float | None, now: datetime) -> dict[str, float]:
    """The metadata of an item record written at ``now`` with ``ttl`` (empty: no expiry)."""
    return {} if ttl is None else {TTL_MINUTES: ttl, EXPIRES: now.timestamp() + ttl * 60}


def _expires(record: MemoryRecord) -> float | None:
    value = record.metadata.get(EXPIRES)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


class TTLMethods:
    """Expiry, refresh and the sweeper, mixed into :class:`LaminaStore`."""

    store: MemoryStore
    registry: str
    root: str
    ttl_config: TTLConfig | None
    _clock: Callable[[], datetime]
    _lock: threading.RLock
    _read_items: dict[tuple[tuple[str, ...], str], MemoryRecord]
    _sweeper: tuple[threading.Thread, threading.Event] | None = None

    def _omit_expired(self) -> bool:
        return bool(self.ttl_config and self.ttl_config.get("omit_expired"))

    def _hidden(self, record: MemoryRecord, now: datetime) -> bool:
        """Whether a read leaves the item record out: expired, and ``omit_expired`` set."""
        ends = _expires(record)
        return self._omit_expired() and ends is not None and ends <= now.timestamp()

    def _refreshed(self, refresh: bool, found: Any, now: datetime) -> None:
        """Move the expiry of the items an op returned (just read), ``ttl`` minutes past now."""
        if not refresh:
            return
        for item in filter(None, found or ()):  # a get that found nothing gives None
            if (record := self._read_items.get((tuple(item.namespace), item.key))) is None:
                continue
            ttl, ends = record.metadata.get(TTL_MINUTES), _expires(record)
            if not isinstance(ttl, int | float) or ends is None or ends <= now.timestamp():
                continue  # no TTL, or already expired: a read does not bring it back
            meta = {**record.metadata, EXPIRES: now.timestamp() + float(ttl) * 60}
            namespace = to_lamina(self.root, tuple(item.namespace))
            self.store.update(namespace, record.model_copy(update={"metadata": meta}))

    def sweep_ttl(self) -> int:
        """Delete every expired item, with its indexed fields; return how many items."""
        return self._sweep()

    def _sweep(self) -> int:
        # the sweeper thread calls this, not sweep_ttl: a subclass may redefine the
        # public methods (LangGraph's async stores make them coroutines)
        now = self._clock().timestamp()
        swept = 0
        with self._lock:
            entries = self.store.get(Granularity.RAW, self.registry)
            for labels in filter(None, map(registry_labels, entries)):
                namespace = to_lamina(self.root, labels)
                items = self.store.get(Granularity.RAW, namespace, where=ITEMS)
                gone = [r for r in items if (ends := _expires(r)) is not None and ends <= now]
                if not gone:
                    continue
                keys = [str(r.metadata.get(KEY)) for r in gone]
                fields = self.store.get(Granularity.RAW, namespace, where=fields_of(keys))
                self.store.delete(Granularity.RAW, namespace, [r.id for r in [*gone, *fields]])
                swept += len(gone)
                if len(gone) == len(items):
                    self.store.delete(Granularity.RAW, self.registry, [registry_id(namespace)])
        return swept

    def start_ttl_sweeper(
        self, sweep_interval_minutes: float | None = None
    ) -> concurrent.futures.Future[None]:
        """Sweep every ``sweep_interval_minutes`` (default: the TTLConfig's) in a thread.

        Returns a future that is done when the sweeper stops. A sweep that fails is
        retried at the next interval.

        Raises:
            InvalidInputError: no interval given or configured.
        """
        configured = (self.ttl_config or {}).get("sweep_interval_minutes")
        interval = check_ttl(sweep_interval_minutes or configured, "sweep_interval_minutes")
        if interval is None:
            raise InvalidInputError(
                "no sweep interval: pass sweep_interval_minutes, or set it in the store's "
                "ttl config ({'sweep_interval_minutes': 60})"
            )
        self._stop_sweeper(None)
        done: concurrent.futures.Future[None] = concurrent.futures.Future()
        stop = threading.Event()

        def run() -> None:
            try:
                while not stop.wait(interval * 60):
                    try:
                        self._sweep()
                    except Exception:  # the store is down: try again at the next interval
                        continue
            finally:
                done.set_result(None)

        thread = threading.Thread(target=run, name="lamina-ttl-sweeper", daemon=True)
        self._sweeper = (thread, stop)
        thread.start()
        return done

    def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        """Stop the sweeper thread; return whether it stopped within ``timeout`` seconds."""
        return self._stop_sweeper(timeout)

    def _stop_sweeper(self, timeout: float | None) -> bool:
        if self._sweeper is None:
            return True
        thread, stop = self._sweeper
        stop.set()
        thread.join(timeout)
        stopped = not thread.is_alive()
        if stopped:
            self._sweeper = None
        return stopped

    def _live_namespaces(self, spaces: list[tuple[str, ...]], now: datetime) -> list[Any]:
        """The namespaces that hold an item a read would return (all without omit_expired)."""
        if not self._omit_expired():
            return spaces
        out = []
        for labels in spaces:
            items = self.store.get(Granularity.RAW, to_lamina(self.root, labels), where=ITEMS)
            if any(not self._hidden(r, now) for r in items):
                out.append(labels)
        return out
