"""Async twins of the facade's blocking calls: the same call, run in a worker thread."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Coroutine
from typing import Any, Concatenate, ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")
S = TypeVar("S")

__all__ = ["in_thread"]


def in_thread(
    method: Callable[Concatenate[S, P], R],
) -> Callable[Concatenate[S, P], Coroutine[Any, Any, R]]:
    """The async twin of ``method``: the same arguments, run by :func:`asyncio.to_thread`.

    Meant for a class body, ``asearch = in_thread(search)``. The twin calls the
    instance's own ``method`` (a subclass's override included), is named ``a<method>``
    and has ``method``'s signature (``inspect.signature`` follows ``__wrapped__``).
    """
    name = method.__name__

    @functools.wraps(method)
    async def twin(self: S, /, *args: P.args, **kwargs: P.kwargs) -> R:
        bound: Callable[P, R] = getattr(self, name)
        return await asyncio.to_thread(bound, *args, **kwargs)

    twin.__name__ = f"a{name}"
    twin.__qualname__ = f"{method.__qualname__.rpartition('.')[0]}.a{name}".lstrip(".")
    twin.__doc__ = f"Async :meth:`{name}`, with the same arguments (run in a worker thread)."
    return twin
