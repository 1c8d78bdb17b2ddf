"""Deprecated: moved to :mod:`memstrata.core.nodes`; this path is removed in 0.2."""

from ..core.deprecation import warn_moved
from ..core.nodes import *  # noqa: F403
from ..core.nodes import __all__ as __all__

warn_moved(__name__, "memstrata.core.nodes")
