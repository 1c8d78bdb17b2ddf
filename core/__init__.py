"""The ground every layer stands on: graph state, run context and node names.

``core`` imports nothing of lamina but :mod:`lamina.errors`; namespace validation
(:mod:`~lamina.core.namespace`) lives here so that the run context and the stores
share one check. Agents, graphs and the facade all read these types; none of them is
defined twice.
"""

from .calls import LLMCall
from .context import SMALL_MODEL_PROFILE, MemoryContext, context_of

__all__ = ["SMALL_MODEL_PROFILE", "LLMCall", "MemoryContext", "context_of"]
