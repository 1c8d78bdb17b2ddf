"""Several store calls as one transaction, where the store has transactions.

A change made of many calls (a forget: deletes, updates of the records that stay, audit
redactions and a tombstone) should land whole or not at all. The Postgres store can
promise that: its ``atomic()`` binds every call made inside the block to one connection
and one transaction. Chroma has no transaction across calls or collections, so there the
block is a plain one and each call lands on its own.
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from typing import Any, Protocol, runtime_checkable

__all__ = ["Atomic", "all_or_nothing"]


@runtime_checkable
class Atomic(Protocol):
    """A store whose calls inside ``with store.atomic():`` commit together or not at all."""

    def atomic(self) -> AbstractContextManager[Any]:
        """One transaction for every call made inside the block."""
        ...


def all_or_nothing(store: object) -> AbstractContextManager[Any]:
    """``store.atomic()`` when the store has transactions, else a block that adds nothing.

    A wrapped store (:class:`~lamina.stores.wrapping.WrappedStore`) answers with its inner
    store's ``atomic``.
    """
    atomic = getattr(store, "atomic", None)
    return atomic() if callable(atomic) else nullcontext()
