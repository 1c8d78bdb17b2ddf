"""Episode synthesis and merge-first (RecMem eq. 6) for the Constructor."""

from __future__ import annotations

from ..graphs.context import MemoryContext
from ..prompts.construction import EPISODE, MERGE
from ..stores.records import EpisodeRecord, RawTurn, stable_id
from .deps import StepLog
from .formatting import format_record, format_turns, parse_date
from .schemas import EpisodeDraft


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


def synthesize(log: StepLog, ctx: MemoryContext, turns: list[RawTurn]) -> EpisodeRecord | None:
    """Write a new third-person episode from ``turns`` (sorted by time); None on failure."""
    text, _ = format_turns(turns, ctx.tz)
    draft = log.ask(EpisodeDraft, EPISODE.format_messages(turns=text), "episode")
    if draft is None:
        return None
    start, end = turns[0].occurred_at, turns[-1].occurred_at
    return EpisodeRecord(
        id=episode_id(ctx.namespace, [t.id for t in turns]),
        namespace=ctx.namespace,
        title=draft.title.strip() or "Untitled episode",
        text=draft.narrative.strip(),
        occurred_at=parse_date(draft.date, ctx.tz) or start,
        recorded_at=log.deps.clock(),
        start_at=start,
        end_at=end,
        source_ids=[t.id for t in turns],
    )


def merge(
    log: StepLog, ctx: MemoryContext, episode: EpisodeRecord, turns: list[RawTurn]
) -> EpisodeRecord | None:
    """Fold ``turns`` into ``episode`` in place (same id); None on failure."""
    text, _ = format_turns(turns, ctx.tz)
    messages = MERGE.format_messages(episode=format_record(episode, ctx.tz), turns=text)
    draft = log.ask(EpisodeDraft, messages, "merge")
    if draft is None:
        return None
    times = [t.occurred_at for t in turns]
    start = min([episode.start_at or episode.occurred_at, *times])
    end = max([episode.end_at or episode.occurred_at, *times])
    sources = list(dict.fromkeys([*episode.source_ids, *(t.id for t in turns)]))
    return episode.model_copy(
        update={
            "title": draft.title.strip() or episode.title,
            "text": draft.narrative.strip(),
            "start_at": start,
            "end_at": end,
            "source_ids": sources,
            "recorded_at": log.deps.clock(),
        }
    )
