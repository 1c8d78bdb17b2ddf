"""Every call the store makes to Chroma, with its failures translated.

A ``chroma run`` server that is down, or dies during a call, surfaces from chromadb as
an ``httpx`` transport error (or a ``ValueError`` when a client is created); here it
becomes one :class:`~lamina.errors.StoreUnavailableError` naming the server and
saying how to resume. A persistent client can report a missing HNSW segment when a
read races a write of the same collection (chroma-core/chroma#4212); such a read is
retried once while this store's writes are held off (waiting at most
:data:`RETRY_LOCK_S` for them, so a reader never deadlocks with a writer).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import httpx
from chromadb.api import ClientAPI
from chromadb.errors import InternalError

from ..errors import StoreUnavailableError

T = TypeVar("T")

RETRY_LOCK_S = 2.0
"""How long a failed read waits for the store's write lock before retrying anyway."""
RESUME_HINT = (
    "Restart the server and send the same records again: writes are idempotent by "
    "record id, so nothing is duplicated."
)


def describe_client(client: ClientAPI) -> str:
    """A short label for error messages: the server address, or the kind of client."""
    try:
        settings = client.get_settings()
    except Exception:  # noqa: BLE001 - a label must never fail
        return "Chroma"
    host = getattr(settings, "chroma_server_host", None)
    if host:
        port = getattr(settings, "chroma_server_http_port", None)
        return f"the Chroma server at {host}:{port}" if port else f"the Chroma server at {host}"
    return "the local Chroma"


def unavailable(where: str, error: BaseException) -> StoreUnavailableError:
    """The error raised when ``where`` cannot be reached."""
    return StoreUnavailableError(
        f"{where} is unreachable ({type(error).__name__}: {error}). {RESUME_HINT}"
    )


class ChromaCalls:
    """Runs Chroma calls for one store: translates transport failures, retries racy reads."""

    def __init__(self, where: str, lock: threading.RLock) -> None:
        self.where = where
        """Label of the Chroma behind the store, for error messages."""
        self._lock = lock

    def read(self, call: Callable[..., T], **kwargs: Any) -> T:
        """Run a read; retry it once under the store's write lock if Chroma raced a write."""
        try:
            return self.write(call, **kwargs)
        except InternalError:
            # A reader may hold a namespace mirror's lock that a writer holding the store
            # lock waits for: never wait for the store lock forever.
            locked = self._lock.acquire(timeout=RETRY_LOCK_S)
            try:
                return self.write(call, **kwargs)
            finally:
                if locked:
                    self._lock.release()

    def write(self, call: Callable[..., T], **kwargs: Any) -> T:
        """Run a write; a transport failure becomes :class:`StoreUnavailableError`."""
        with self.guard():
            return call(**kwargs)

    @contextmanager
    def guard(self) -> Iterator[None]:
        """Translate transport failures of a block of Chroma calls (e.g. opening collections)."""
        try:
            yield
        except httpx.TransportError as e:
            raise unavailable(self.where, e) from e
