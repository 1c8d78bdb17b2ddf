"""Deprecated: moved to :mod:`memstrata.testing.faults`; this path is removed in 0.2."""

from .core.deprecation import warn_moved
from .testing.faults import *  # noqa: F403
from .testing.faults import __all__ as __all__

warn_moved(__name__, "memstrata.testing.faults")
