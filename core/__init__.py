"""The ground every layer stands on: graph state, run context and node names.

``core`` imports nothing above :mod:`memstrata.errors` (and, until namespace validation
moves down here, :func:`memstrata.stores.records.validate_namespace`). Agents, graphs
and the facade all read these types; none of them is defined twice.
"""

from .calls import LLMCall
from .context import MemoryContext, context_of

__all__ = ["LLMCall", "MemoryContext", "context_of"]
