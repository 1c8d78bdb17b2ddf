"""The :class:`Memory` facade: add, search, answer, update and forget over one store.

``facade`` wires the store (``opening`` opens the one a config describes), the chat
model and the memory graph. ``reading`` and ``editing`` hold the calls that need no LLM
(``filters``, ``forget``, ``revision`` and ``verbatim`` do their work), ``portable``
exports and imports a namespace, and ``given`` stores facts an application gives
directly. ``inputs`` checks what callers pass; ``hits`` and ``outcome`` turn store hits
and graph outputs into the pydantic models of ``results``; ``models`` and
``checkpointing`` choose the chat model and the checkpointer; ``twins`` gives the calls
that need no LLM their async twins.
"""

from .facade import Memory
from .opening import open_store
from .revision import UpdateResult

__all__ = ["Memory", "UpdateResult", "open_store"]
