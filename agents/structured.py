"""Deprecated: moved to :mod:`memstrata.llm.structured`; this path is removed in 0.2."""

from ..core.deprecation import warn_moved
from ..llm.structured import *  # noqa: F403
from ..llm.structured import __all__ as __all__

warn_moved(__name__, "memstrata.llm.structured")
