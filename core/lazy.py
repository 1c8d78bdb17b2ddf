"""Names a package re-exports, imported on first use (PEP 562).

``import lamina`` has to stay cheap: the Chroma store, the BM25 index, LangChain and
LangGraph take over a second to import, and a user who only wants ``lamina.errors``
or ``--help`` should not wait for them. A package face lists its public names in
``__all__``, imports them under ``TYPE_CHECKING`` for type checkers and IDEs, and hands
the rest to :func:`lazy_exports`::

    __getattr__, __dir__ = lazy_exports(globals(), {"ChromaMemoryStore": "lamina.stores.chroma"})

The first lookup of a name imports its home module and keeps the value in the package's
namespace, so later lookups (and ``from package import name``) never come back here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    namespace: dict[str, Any], homes: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A module ``__getattr__`` and ``__dir__`` for the names of ``homes``.

    Args:
        namespace: the package's ``globals()``; a name, once imported, is stored there.
        homes: public name -> absolute name of the module that defines it.

    Returns:
        ``(__getattr__, __dir__)``, to be bound at the package's top level.
    """
    package = namespace["__name__"]

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:  # an AttributeError also lets ``from package import submodule`` work
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(home), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *homes})

    return __getattr__, __dir__
