"""The :class:`Memory` facade: add, search, answer, update and forget over one store.

It exports the facade, :func:`open_store` and what the facade's calls take and return,
each imported on first use (:mod:`lamina.core.lazy`).

``facade`` wires the store (``opening`` opens the one a config describes), the chat
model and the memory graph. ``reading`` and ``editing`` hold the calls that need no LLM
(``filters``, ``forget``, ``revision`` and ``verbatim`` do their work), ``portable``
exports and imports a namespace, and ``given`` stores facts an application gives
directly. ``inputs`` checks what callers pass; ``hits`` and ``outcome`` turn store hits
and graph outputs into the pydantic models of ``results``; ``models`` and
``checkpointing`` choose the chat model and the checkpointer; ``twins`` gives the calls
that need no LLM their async twins.
"""

from __future__ import annotations

from ..core.lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    globals(),
    {
        "AddFactsResult": ".given",
        "AddResult": ".results",
        "AnswerResult": ".results",
        "FactInput": ".given",
        "ForgetResult": ".results",
        "ImportResult": ".portable",
        "Memory": ".facade",
        "MemoryHit": ".results",
        "TokenUsage": ".results",
        "UpdateResult": ".revision",
        "open_store": ".opening",
    },
)
