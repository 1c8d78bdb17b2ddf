"""The nodes of the memory graphs, grouped by the graph they serve, and what they share.

* :mod:`.ingest` (the write path): :mod:`~.ingest.nodes.raw_writer` (turns to the raw layer,
  no LLM) -> :mod:`~.ingest.nodes.episode_trigger` (when to consolidate) ->
  :mod:`~.ingest.nodes.constructor` (episodes, facts, scenes) -> :mod:`~.ingest.nodes.conflicts`
  (which stored facts the new ones update) -> :mod:`~.ingest.nodes.refresher` (supersede,
  keeping history), all in :mod:`~.ingest.nodes`, over the rules grouped by concern
  (:mod:`~.ingest.extraction`, :mod:`~.ingest.ownership`, :mod:`~.ingest.supersession`,
  :mod:`~.ingest.evidence`).
* :mod:`.recall` (the read path): :mod:`~.recall.retriever` (deterministic analysis, one
  pooled search) -> :mod:`~.recall.judge` (sufficiency and a draft answer) ->
  :mod:`~.recall.rewriter` on an insufficient round -> :mod:`~.recall.answer`;
  :mod:`~.recall.refresher` when memories conflict.
* :mod:`.common`: what both use (node dependencies and step logs, formatting, names,
  time parsing, question analysis, attribution, record ids, output caps).

Each node is built by a ``make_*`` factory from the :class:`~.common.deps.NodeDeps` that
the graphs bundle (store, structured LLM caller, clock; :mod:`lamina.graphs.options`), reads the
run's :class:`~lamina.core.context.MemoryContext` and returns a partial state update of
:mod:`lamina.core.state`. Every LLM decision has a pydantic schema
(:mod:`.ingest.schemas`, :mod:`.recall.schemas`). The graphs in :mod:`lamina.graphs`
wire them; nothing here imports a graph, and neither path imports the other.
"""
