"""The nodes of the memory graphs, one module each, and what they share.

Ingest: :mod:`.raw_writer` (turns to the raw layer, no LLM) -> :mod:`.episode_trigger`
(when to consolidate) -> :mod:`.constructor` (episodes, facts, scenes) -> :mod:`.judge`
(conflict check) -> :mod:`.refresher` (update or supersede, keeping history).
Recall: :mod:`.retriever` (deterministic analysis, one pooled search) -> :mod:`.judge`
(sufficiency and a draft answer) -> :mod:`.rewriter` on an insufficient round ->
:mod:`.answer`; :mod:`.refresher` when memories conflict.

Each node is built by a ``make_*`` factory from the :class:`~.deps.NodeDeps` that
:func:`~.deps.node_deps` bundles (store, structured LLM caller, clock), reads the run's
:class:`~lamina.core.context.MemoryContext` and returns a partial state update of
:mod:`lamina.core.state`. The other modules are the helpers the nodes share
(construction, pooling, time parsing, formatting) and the pydantic schema of every LLM
decision (:mod:`.schemas`, :mod:`.recall_schemas`). The graphs in :mod:`lamina.graphs`
wire them; nothing here imports a graph.
"""
