"""Deprecated: moved to :mod:`memstrata.core.nodes`; this path is removed in 0.2."""

from ..core.nodes import *  # noqa: F403
from ..core.nodes import __all__ as __all__
