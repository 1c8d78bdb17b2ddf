"""Building the memory an evaluation run needs: each stage's store, batch by batch.

:func:`build_memory` opens an ingestor per stage (lamina's ingest graph on a chat model
that answers from the construction folder's kept replies first, a peer's own memory, or
no model at all), builds what each store still lacks and copies the finished batches
into the run's journal.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

from tqdm import tqdm

from lamina.graphs import build_ingest_graph

from ..datasets.locomo_annotations import Annotations
from .assembly import reply_file
from .construction import ConstructionCache
from .ingest import LAMINA_STAGE, Ingestor
from .peers import PeerIngestor, PeerMemory, is_peer_stage
from .records import Journal, ingests_of
from .reply_cache import replaying
from .settings import EvalModels, EvalSettings
from .subset import Subset


def progress_bar(total: int, desc: str, unit: str, progress: bool) -> Any:
    """A tqdm bar on stderr (off when ``progress`` is false; tqdm's own choice otherwise)."""
    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, disable=not progress or None)


def build_memory(
    settings: EvalSettings,
    models: EvalModels,
    subset: Subset,
    caches: dict[str, ConstructionCache],
    journal: Journal,
    progress: bool,
    annotations: dict[str, Annotations],
    peers: Mapping[str, PeerMemory],
) -> None:
    """Build what the stages' stores still lack; copy the batches into the run's journal."""
    ingestors: dict[str, Ingestor | PeerIngestor] = {}
    replies = reply_file(settings, models)
    for stage, cache in caches.items():
        done = cache.built()
        if is_peer_stage(stage):  # the peer writes its own store, under the stage's folder
            ingestors[stage] = PeerIngestor(
                memory=peers[stage], batch_size=settings.batch_size, done=done, record=cache.record
            )
            continue
        graph = None
        if stage.startswith(LAMINA_STAGE):  # only lamina's stages call the model
            graph = build_ingest_graph(
                chat_model=replaying(models.chat_model, replies),
                store=cache.store,
                structured_method=settings.structured_method,
                max_attempts=settings.max_attempts,
            ).compile()
        ingestors[stage] = Ingestor(
            store=cache.store,
            graph=graph,
            batch_size=settings.batch_size,
            chunk_words=settings.chunk_words,
            chunk_overlap=settings.chunk_overlap,
            done=done,
            record=cache.record,
            annotations=annotations,
            kept=lambda: replies.hits,
        )
    plan = [(stage, conv) for conv in subset.conversations for stage in caches]
    planned = [(stage, ingestors[stage].planned_turns(stage, conv)) for stage, conv in plan]
    if any(turns for stage, turns in planned if calls_model(stage)):
        models.ready()  # memory still to build with the model: a local one loads now
    total = sum(turns for _, turns in planned)
    with progress_bar(total, "ingest", "turn", progress) as bar:
        for stage, conv in plan:
            bar.set_postfix_str(f"{stage} {conv.sample_id}")
            ingestors[stage].advance = bar.update
            ingestors[stage].run(stage, conv)
    if replies.hits:
        print(
            f"construction: {replies.hits} kept replies reused, {replies.misses} asked",
            file=sys.stderr,
        )
    # a batch rebuilt into another store (a new construction key) is recorded again
    recorded = {(i.key, i.cache_key) for i in ingests_of(journal.read())}
    wanted = {conv.sample_id for conv in subset.conversations}
    for cache in caches.values():
        for step in cache.steps():
            if step.conversation in wanted and (step.key, step.cache_key) not in recorded:
                journal.append(step)
                recorded.add((step.key, step.cache_key))


def calls_model(stage: str) -> bool:
    """Whether building ``stage`` asks the chat model (lamina's stages and the peers')."""
    return stage.startswith(LAMINA_STAGE) or is_peer_stage(stage)


__all__ = ["build_memory", "calls_model", "progress_bar"]
