"""Deprecated: moved to :mod:`memstrata.core.state`; this path is removed in 0.2."""

from ..core.deprecation import warn_moved
from ..core.state import *  # noqa: F403
from ..core.state import __all__ as __all__

warn_moved(__name__, "memstrata.core.state")
