"""Old import paths keep working for one release, with a warning that names the new one."""

from __future__ import annotations

import warnings

REMOVED_IN = "0.2"
"""The release in which the old paths go."""


def warn_moved(old: str, new: str) -> None:
    """Warn, from a re-export module at the old path ``old``, that it moved to ``new``.

    The warning is attributed to the module that imported the old path, so pytest's
    ``error::DeprecationWarning:memstrata.*`` filter fails any memstrata module that
    still uses one.
    """
    warnings.warn(
        f"{old} moved to {new}; import from {new} ({old} is removed in {REMOVED_IN})",
        DeprecationWarning,
        stacklevel=3,
    )
