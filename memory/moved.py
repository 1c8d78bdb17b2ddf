"""Old facade module paths keep working for one release, through a warning."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from importlib import import_module
from typing import Any

REMOVED_IN = "0.2"
"""The release in which the old paths go."""


def moved_attribute(old: str, name: str, homes: Sequence[str]) -> Any:
    """``name`` looked up at the old module path ``old``, found in one of ``homes``.

    Meant for a module-level ``__getattr__``. The DeprecationWarning names the new
    module and is attributed to the code that used the old path.

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
