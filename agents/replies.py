"""Deprecated: moved to :mod:`memstrata.llm.replies`; this path is removed in 0.2."""

from ..core.deprecation import warn_moved
from ..llm.replies import *  # noqa: F403
from ..llm.replies import __all__ as __all__

warn_moved(__name__, "memstrata.llm.replies")
