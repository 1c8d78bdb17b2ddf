"""Old import paths keep working for one release, with a warning that names the new one.

Issue 18 moved modules to the layer they belong to; issue 34 moved the records and time
references to :mod:`lamina.records` and the embedders to :mod:`lamina.embedders`. The old
modules are no files any more: :func:`install` (called when :mod:`lamina` is imported)
puts a finder on ``sys.meta_path`` that builds each old module on import from the two
tables below, after the normal finders have found no file of that name.

* :data:`MOVED_MODULES`: the module moved whole. Importing the old path warns once, on
  import, and the old module hands out the new module's objects (its ``__all__`` too).
* :data:`SPLIT_MODULES`: the module's names went to several modules. Importing the old
  path is silent; each name looked up warns, naming the module that now holds it.

Each warning is a :class:`DeprecationWarning` attributed to the code that used the old
path, so pytest's ``error::DeprecationWarning:lamina.*`` filter fails any lamina
module that still uses one. The names here are strings: nothing is imported until an
old path is.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Sequence
from importlib import import_module
from importlib.abc import Loader, MetaPathFinder
from importlib.machinery import ModuleSpec
from importlib.util import spec_from_loader
from types import ModuleType
from typing import Any

REMOVED_IN = "0.2"
"""The release in which the old paths go."""

MOVED_MODULES: dict[str, str] = {
    "lamina.agents.replies": "lamina.llm.replies",
    "lamina.agents.structured": "lamina.llm.structured",
    "lamina.faults": "lamina.testing.faults",
    "lamina.graphs.context": "lamina.core.context",
    "lamina.graphs.nodes": "lamina.core.nodes",
    "lamina.graphs.state": "lamina.core.state",
    "lamina.graphs.studio": "lamina.integrations.studio",
    "lamina.results": "lamina.memory.results",
    "lamina.stores.forgetting": "lamina.memory.forget",
    "lamina.stores.audit": "lamina.records.audit",
    "lamina.stores.cross_encoder": "lamina.embedders.cross_encoder",
    "lamina.stores.embedder_choice": "lamina.embedders.choice",
    "lamina.stores.embedding_identity": "lamina.embedders.identity",
    "lamina.stores.embeddings": "lamina.embedders.minilm",
    "lamina.stores.engine_faces": "lamina.embedders.faces",
    "lamina.stores.records": "lamina.records.model",
    "lamina.stores.static_embeddings": "lamina.embedders.static",
    "lamina.stores.timerefs": "lamina.records.timerefs",
}
"""Old module -> the module it moved to, whole."""

SPLIT_MODULES: dict[str, tuple[str, ...]] = {
    "lamina.memory_inputs": ("lamina.memory.inputs",),
    "lamina.memory_models": ("lamina.memory.models", "lamina.memory.checkpointing"),
    "lamina.memory_results": ("lamina.memory.hits",),
}
"""Old module -> the modules its names went to, searched in order."""

__all__ = ["MOVED_MODULES", "REMOVED_IN", "SPLIT_MODULES", "install", "moved_attribute"]


def moved_attribute(old: str, name: str, homes: Sequence[str]) -> Any:
    """``name`` looked up at the old module path ``old``, found in one of ``homes``.

    Meant for a module-level ``__getattr__``: the DeprecationWarning names the new
    module and is attributed to the code that called that ``__getattr__``.

    Raises:
        AttributeError: ``name`` is private or in none of ``homes``.
    """
    if not name.startswith("_"):
        for home in homes:
            module = import_module(home)
            if hasattr(module, name):
                warnings.warn(
                    f"{old}.{name} moved to {home}.{name}; import it from {home} "
                    f"({old} is removed in {REMOVED_IN})",
                    DeprecationWarning,
                    stacklevel=3,
                )
                return getattr(module, name)
    raise AttributeError(f"module {old!r} has no attribute {name!r}")


class _OldPathLoader(Loader):
    """Builds an old module from the tables; the module object is a fresh one."""

    def exec_module(self, module: ModuleType) -> None:
        old = module.__name__
        if old in MOVED_MODULES:
            new = MOVED_MODULES[old]
            _forward(module, import_module(new))
            # attributed to the importer: the import system's own frames are skipped
            warnings.warn(
                f"{old} moved to {new}; import from {new} ({old} is removed in {REMOVED_IN})",
                DeprecationWarning,
                stacklevel=2,
            )
            return
        homes = SPLIT_MODULES[old]
        module.__doc__ = f"Deprecated: moved to {', '.join(homes)} (removed in {REMOVED_IN})."

        def __getattr__(name: str) -> Any:
            return moved_attribute(old, name, homes)

        module.__getattr__ = __getattr__  # type: ignore[method-assign]


def _forward(module: ModuleType, target: ModuleType) -> None:
    """Make ``module`` hand out ``target``'s names (looked up live, on each use)."""
    module.__doc__ = f"Deprecated: moved to :mod:`{target.__name__}` (removed in {REMOVED_IN})."
    module.__all__ = list(target.__all__)  # type: ignore[attr-defined]

    def __getattr__(name: str) -> Any:
        try:
            return getattr(target, name)
        except AttributeError:
            raise AttributeError(f"module {module.__name__!r} has no attribute {name!r}") from None

    module.__getattr__ = __getattr__  # type: ignore[method-assign]


class _OldPathFinder(MetaPathFinder):
    """Finds the old paths of :data:`MOVED_MODULES` and :data:`SPLIT_MODULES`."""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> ModuleSpec | None:
        if fullname in MOVED_MODULES or fullname in SPLIT_MODULES:
            return spec_from_loader(fullname, _LOADER)
        return None


_LOADER = _OldPathLoader()


def install() -> None:
    """Let the old paths be imported (once per process; later calls do nothing).

    The finder goes last on ``sys.meta_path``, so a real module file always wins.
    """
    if not any(isinstance(finder, _OldPathFinder) for finder in sys.meta_path):
        sys.meta_path.append(_OldPathFinder())
