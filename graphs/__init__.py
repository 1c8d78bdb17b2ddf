"""The memory graphs: ingest, recall and the combined graph, built from the agents' nodes.

Each builder returns an uncompiled ``StateGraph`` over the state and context of
:mod:`lamina.core`; ``MemoryContext`` is re-exported here for callers that compile
and run a graph themselves, with the types they pass and get back (``TurnInput``, the
turns an ingest takes; ``Candidate``, the pooled context recall returns; ``LLMCall``, the
model calls a run reports), and :mod:`.checkpoint` opens the checkpointers they compile
with (``open_checkpointer``, ``aopen_checkpointer``) or gives the serializer any other
saver needs (``state_serializer``). The names are imported on first use
(:mod:`lamina.core.lazy`), so ``import lamina.graphs.checkpoint`` loads no graph.
"""

from __future__ import annotations

from ..core.lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    globals(),
    {
        "Candidate": "..core.state",
        "GraphOptions": ".options",
        "LLMCall": "..core.calls",
        "MemoryContext": "..core.context",
        "ResearchArms": "..core.arms",
        "TurnInput": "..core.state",
        "aopen_checkpointer": ".checkpoint",
        "build_ingest_graph": ".ingest",
        "build_memory_graph": ".memory",
        "build_recall_graph": ".recall",
        "open_checkpointer": ".checkpoint",
        "state_serializer": ".checkpoint",
    },
)
