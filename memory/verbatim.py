"""``add(..., infer=False)``: store turns verbatim, with no LLM call, ever.

The turns become raw records exactly as ``add`` writes them before consolidation (same
ids, sessions, turn indexes, resolved dates and metadata), but they are marked as having
nothing to consolidate, so no later ``add`` hands them to a model either: they stay in
the raw layer, where search, get_all and answer find them.
"""

from __future__ import annotations

from typing import Any, cast

from ..agents.common.deps import NodeDeps
from ..agents.ingest.nodes.raw_writer import build_raw_turns
from ..core.context import MemoryContext
from ..core.state import TurnInput
from ..stores.chroma import ChromaMemoryStore
from .results import AddResult

_NO_MODEL = cast(Any, None)
"""The caller slot of NodeDeps: build_raw_turns reads only its store and clock."""


def store_verbatim(
    store: ChromaMemoryStore, ctx: MemoryContext, turns: list[TurnInput]
) -> AddResult:
    """Write ``turns`` to the raw layer of ``ctx.namespace``; a turn already stored stays.

    Every record is built and validated before the first write, so bad input stores
    nothing.
    """
    built = build_raw_turns(NodeDeps(store=store, caller=_NO_MODEL), ctx, turns)
    records = [r.model_copy(update={"trivial": True}) for r in built]
    stored = {r.id for r in store.get("raw", ctx.namespace, [r.id for r in records])}
    fresh = list({r.id: r for r in records if r.id not in stored}.values())
    if fresh:
        store.add(ctx.namespace, fresh)
    return AddResult(new_raw_ids=[r.id for r in fresh], duplicate_raw_ids=sorted(stored))
