"""Package faces: each public name declared once, imported on first use (PEP 562).

``import lamina`` has to stay cheap: the Chroma store, the BM25 index, LangChain and
LangGraph take over a second to import, and a user who only wants ``lamina.errors``
or ``--help`` should not wait for them. A package face declares each public name once,
with the module that defines it (relative to the package when it starts with a dot)::

    __all__, __getattr__, __dir__ = lazy_exports(globals(), {"Memory": ".memory"})

``__all__`` is the mapping's names. The first lookup of a name imports its home module
and keeps the value in the package's namespace, so later lookups (and ``from package
import name``) never come back here.

Type checkers and IDEs read the face's stub, ``__init__.pyi`` beside it, which is written
from the same mapping (:mod:`lamina.core.stubs`): after changing a mapping, run
``python -m lamina.core.stubs`` to rewrite every face's stub; a test fails while one is
stale. The stub is needed because mypy takes a name as re-exported only from a literal
``__all__`` or an ``import X as X``, and either would spell each name a second time.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any

__all__ = ["LazyFace", "lazy_exports"]


class LazyFace:
    """A package's ``__getattr__`` over ``homes``: public name -> module that defines it."""

    def __init__(self, namespace: dict[str, Any], homes: Mapping[str, str]) -> None:
        self.package: str = namespace["__name__"]
        self.homes = dict(homes)
        self._namespace = namespace

    def __call__(self, name: str) -> Any:
        """The value of ``name``, imported from its home on first use."""
        if name not in self.homes:  # an AttributeError also lets ``from package import module``
            raise AttributeError(f"module {self.package!r} has no attribute {name!r}")
        value = getattr(import_module(self.homes[name], self.package), name)
        self._namespace[name] = value
        return value

    def names(self) -> list[str]:
        """The package's ``__dir__``: what it holds now and every name it exports."""
        return sorted({*self._namespace, *self.homes})


def lazy_exports(
    namespace: dict[str, Any], homes: Mapping[str, str]
) -> tuple[list[str], LazyFace, Callable[[], list[str]]]:
    """``__all__``, ``__getattr__`` and ``__dir__`` of a package face, from ``homes``.

    Args:
        namespace: the package's ``globals()``; a name, once imported, is stored there.
        homes: public name -> the module that defines it, absolute (``lamina.memory``) or
            relative to the package (``.memory``).

    Returns:
        ``(__all__, __getattr__, __dir__)``, to be bound at the package's top level.
    """
    face = LazyFace(namespace, homes)
    return sorted(homes), face, face.names
