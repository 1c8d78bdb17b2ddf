"""Episode synthesis and merge-first (RecMem eq. 6) for the Constructor.

An episode and the atomic facts of its turns come from one construction call
(:mod:`..extraction.drafting`, :mod:`..extraction.construct`), so semantic refinement
costs no second call.
"""

from __future__ import annotations

from ....core.context import MemoryContext
from ....records.model import EpisodeRecord, FactRecord, RawTurn, stable_id
from ...common.deps import StepLog
from ...common.formatting import SENTENCE_BREAK
from ..extraction.construct import episode_text, fact_records
from ..extraction.drafting import draft_excerpt


def episode_id(namespace: str, raw_ids: list[str]) -> str:
    """A deterministic id, so re-consolidating the same turns rewrites the same episode."""
    return stable_id("episode", namespace, *sorted(raw_ids))


def nearest_episode(
    log: StepLog, ctx: MemoryContext, turns: list[RawTurn]
) -> tuple[EpisodeRecord, float] | None:
    """The stored episode most similar to ``turns`` (cosine), if any."""
    text = " ".join(f"{t.speaker}: {t.text}" for t in turns)[:4000]
    hits = log.deps.store.search(text, "episode", ctx.namespace, k=1, mode="dense")
    if not hits or not isinstance(hits[0].record, EpisodeRecord):
        return None
    return hits[0].record, hits[0].channel_scores["dense"]


Drafted = tuple[EpisodeRecord, list[FactRecord]]


def synthesize(log: StepLog, ctx: MemoryContext, turns: list[RawTurn]) -> Drafted | None:
    """A new episode and its facts from ``turns`` (sorted by time), in one call."""
    result = draft_excerpt(log, ctx, turns, step="episode")
    if result is None:
        return None
    draft, labels = result
    title, summary = episode_text(log, draft, turns, ctx)
    eid = episode_id(ctx.namespace, [t.id for t in turns])
    facts = fact_records(log, ctx, draft.facts, turns, labels, eid)
    start, end = turns[0].occurred_at, turns[-1].occurred_at
    episode = EpisodeRecord(
        id=eid,
        namespace=ctx.namespace,
        title=title,
        text=summary,
        occurred_at=start,
        recorded_at=log.deps.clock(),
        start_at=start,
        end_at=end,
        source_ids=[t.id for t in turns],
    )
    return episode, facts


def extend_narrative(text: str, addition: str) -> str:
    """``text`` followed by the sentences of ``addition`` it does not already hold.

    A small model asked for what new turns add often repeats the known episode; only
    the new sentences are kept, so merges never pile up copies.
    """
    known = {s.strip().casefold() for s in SENTENCE_BREAK.split(text)}
    new = [s for s in SENTENCE_BREAK.split(addition) if s.strip().casefold() not in known]
    return " ".join([text, *new]) if new else text


def merge(
    log: StepLog, ctx: MemoryContext, episode: EpisodeRecord, turns: list[RawTurn]
) -> Drafted | None:
    """``episode`` (same id) extended by ``turns``, and the turns' facts, in one call.

    The model writes only what the new turns add; the stored narrative is kept and the
    addition appended, so a merge costs the new turns, not a rewrite of the episode.
    """
    result = draft_excerpt(log, ctx, turns, known=episode, step="merge")
    if result is None:
        return None
    draft, labels = result
    title, addition = episode_text(log, draft, turns, ctx)
    facts = fact_records(log, ctx, draft.facts, turns, labels, episode.id)
    text = extend_narrative(episode.text, addition)
    times = [t.occurred_at for t in turns]
    merged = episode.model_copy(
        update={
            "title": title if draft.title.strip() else episode.title,
            "text": text,
            "start_at": min([episode.start_at or episode.occurred_at, *times]),
            "end_at": max([episode.end_at or episode.occurred_at, *times]),
            "source_ids": list(dict.fromkeys([*episode.source_ids, *(t.id for t in turns)])),
            "recorded_at": log.deps.clock(),
        }
    )
    return merged, facts
