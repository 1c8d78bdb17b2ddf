"""Erasure after a forget: the store's files stop holding what was deleted.

A delete removes a record from every read and search at once, but the bytes may stay on
disk: in Chroma's write-ahead queue, full-text index and free pages, in the mirror files
lamina keeps beside Chroma, in Postgres's dead tuples. A store that can rewrite those has
an ``erase(namespace, parts)`` method (:class:`Erasable`); a forget calls it once its
deletes have landed (:func:`erase_after`), or once for many forgets
(:func:`erasure_deferred`). What each backend erases, and what it cannot (Postgres's
WAL, backups), is in docs/concepts/forgetting.md.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Protocol, runtime_checkable

from ..errors import InvalidInputError
from ..records.model import validate_namespace

__all__ = [
    "PARTS",
    "Erasable",
    "erase_after",
    "erased_namespaces",
    "erased_parts",
    "erasure_deferred",
]

PARTS = ("raw", "fact", "episode", "scene", "profile", "audit")
"""What a forget may change: the four granularities, the profile and the audit log."""


def erased_parts(parts: Collection[str]) -> list[str]:
    """``parts`` in :data:`PARTS` order; an unknown part is refused with the list of known ones."""
    if isinstance(parts, str):
        raise InvalidInputError(f"parts must be a list such as ['raw', 'fact'], not {parts!r}")
    unknown = sorted(set(parts) - set(PARTS))
    if unknown:
        raise InvalidInputError(f"erase() parts must be among {list(PARTS)}; got {unknown}")
    return [p for p in PARTS if p in parts]


def erased_namespaces(namespaces: str | Collection[str]) -> list[str]:
    """One namespace or several, checked, without repeats (the order kept)."""
    found = [namespaces] if isinstance(namespaces, str) else list(namespaces)
    return list(dict.fromkeys(validate_namespace(ns) for ns in found))


@runtime_checkable
class Erasable(Protocol):
    """A store that can rewrite its files so deleted content is gone from them."""

    def erase(self, namespaces: str | Collection[str], parts: Collection[str] = PARTS) -> Any:
        """Rewrite what may still hold deleted or replaced content of ``parts``."""
        ...


def erase_after(store: object, namespace: str, parts: Collection[str]) -> bool:
    """Call ``store.erase`` for the ``parts`` a forget changed; False when it has none.

    A wrapped store (:class:`~lamina.stores.wrapping.WrappedStore`) answers with its inner
    store's ``erase``. Nothing changed (no ``parts``), nothing is rewritten. Inside
    :func:`erasure_deferred` the call is noted, and made when the block ends.
    """
    erase = getattr(store, "erase", None)
    if not parts or not callable(erase):
        return False
    pending = _DEFERRED.get()
    if pending is None:
        erase(namespace, erased_parts(parts))
    else:
        _, namespaces, noted = pending.setdefault(id(store), (erase, {}, set()))
        namespaces[namespace] = None
        noted.update(erased_parts(parts))
    return True


_Pending = dict[int, tuple[Callable[..., Any], dict[str, None], set[str]]]
"""Per store (by id): its ``erase``, the namespaces forgotten in, the parts changed."""
_DEFERRED: ContextVar[_Pending | None] = ContextVar("lamina_erasure_deferred", default=None)


@contextmanager
def erasure_deferred() -> Iterator[None]:
    """Forgets inside the block erase once per store, when the block ends.

    Each erasure rewrites whole files (a vacuum), so many forgets in a row (a bulk
    removal, in any namespaces) cost one rewrite instead of one each. Until the block
    ends the forgotten text is gone from every read but may still be on disk. It ends
    even on an error, so what was deleted is erased; nested blocks leave it to the
    outermost one.
    """
    if _DEFERRED.get() is not None:
        yield
        return
    pending: _Pending = {}
    token = _DEFERRED.set(pending)
    try:
        yield
    finally:
        _DEFERRED.reset(token)
        for erase, namespaces, parts in pending.values():
            erase(list(namespaces), erased_parts(parts))
