"""Deprecated: moved to :mod:`memstrata.core.context`; this path is removed in 0.2."""

from ..core.context import *  # noqa: F403
from ..core.context import __all__ as __all__
from ..core.deprecation import warn_moved

warn_moved(__name__, "memstrata.core.context")
