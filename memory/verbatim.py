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


def store_raw(
    store: ChromaMemoryStore, ctx: MemoryContext, turns: list[TurnInput], **marks: object
) -> tuple[list[str], list[str]]:
    """Write ``turns`` as raw records with the fields ``marks``; a turn already stored stays.

    Every record is built and validated before the first write, so bad input stores
    nothing. Returns the ids written and the ids already stored.
    """
    built = build_raw_turns(NodeDeps(store=store, caller=_NO_MODEL), ctx, turns)
    stored = {r.id for r in store.get("raw", ctx.namespace, [r.id for r in built])}
    fresh = list({r.id: r.model_copy(update=marks) for r in built if r.id not in stored}.values())
    if fresh:
        store.add(ctx.namespace, fresh)
    return [r.id for r in fresh], sorted(stored)


def store_verbatim(
    store: ChromaMemoryStore, ctx: MemoryContext, turns: list[TurnInput]
) -> AddResult:
    """Write ``turns`` to the raw layer of ``ctx.namespace``, marked trivial (see above)."""
    new, held = store_raw(store, ctx, turns, trivial=True)
    return AddResult(new_raw_ids=new, duplicate_raw_ids=held)
