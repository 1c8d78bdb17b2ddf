"""Semantic refinement: atomic, time-qualified facts recovered from turns and episode.

Facts get deterministic ids from their normalised statement, and a fact is dropped when
the same statement, or one nearly identical (cosine >= ``duplicate_threshold``), is
already stored or was produced earlier in the same batch.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..graphs.context import MemoryContext
from ..prompts.construction import REFINE, TURN_FACTS
from ..stores.records import EpisodeRecord, FactRecord, RawTurn, stable_id
from .deps import StepLog
from .formatting import format_facts, format_record, format_turns, parse_date
from .schemas import FactDraft, FactList

_SPACE = re.compile(r"\s+")


def fact_id(namespace: str, statement: str) -> str:
    """A deterministic id from the normalised statement."""
    normalised = _SPACE.sub(" ", statement.strip().lower().rstrip("."))
    return stable_id("fact", namespace, normalised)


def to_record(
    ctx: MemoryContext,
    draft: FactDraft,
    turns: Sequence[RawTurn],
    labels: dict[str, str],
    log: StepLog,
    episode_id: str | None = None,
) -> FactRecord:
    """Turn a model's fact draft into a stored fact with provenance and time qualifiers."""
    by_id = {t.id: t for t in turns}
    sources = [labels[s] for s in draft.sources if s in labels] or [t.id for t in turns]
    said_at = max(by_id[s].occurred_at for s in sources)
    point = parse_date(draft.point_in_time, ctx.tz)
    start = parse_date(draft.start, ctx.tz)
    end = parse_date(draft.end, ctx.tz)
    if start and end and end < start:
        start, end = end, start
    valid_from = start or point or said_at
    valid_to = parse_date(draft.valid_until, ctx.tz) if draft.kind == "foresight" else None
    if valid_to is not None and valid_to < valid_from:
        valid_to = None
    return FactRecord(
        id=fact_id(ctx.namespace, draft.statement),
        namespace=ctx.namespace,
        text=draft.statement.strip(),
        subject=(draft.subject or None),
        kind=draft.kind,
        point_in_time=point,
        start_time=start,
        end_time=end,
        valid_from=valid_from,
        valid_to=valid_to,
        occurred_at=point or start or said_at,
        recorded_at=log.deps.clock(),
        source_ids=sources,
        metadata={"episode_id": episode_id} if episode_id else {},
    )


def deduplicate(log: StepLog, ctx: MemoryContext, facts: list[FactRecord]) -> list[FactRecord]:
    """Drop facts already stored (same id or near-identical text) or repeated in ``facts``."""
    store, ns = log.deps.store, ctx.namespace
    seen: set[str] = {f.id for f in store.get("fact", ns, [f.id for f in facts])}
    kept: list[FactRecord] = []
    for fact in facts:
        if fact.id in seen:
            continue
        seen.add(fact.id)
        hits = store.search(fact.text, "fact", ns, k=1, mode="dense")
        if hits and hits[0].channel_scores["dense"] >= ctx.duplicate_threshold:
            continue
        kept.append(fact)
    return kept


def refine(
    log: StepLog, ctx: MemoryContext, turns: list[RawTurn], episode: EpisodeRecord
) -> list[FactRecord]:
    """New facts from the turns, the episode and the facts already known (RecMem eq. 9)."""
    known = [
        h.record
        for h in log.deps.store.search(
            episode.text, "fact", ctx.namespace, k=ctx.known_facts_k, where={"superseded": False}
        )
        if isinstance(h.record, FactRecord)
    ]
    turns_text, labels = format_turns(turns, ctx.tz)
    known_text, _ = format_facts(known, ctx.tz, prefix="k")
    messages = REFINE.format_messages(
        turns=turns_text, episode=format_record(episode, ctx.tz), known_facts=known_text
    )
    result = log.ask(FactList, messages, "refine")
    if result is None:
        return []
    drafts = [d for d in result.facts if d.statement.strip()]
    return [to_record(ctx, d, turns, labels, log, episode.id) for d in drafts]


def turn_facts(
    log: StepLog, ctx: MemoryContext, turn: RawTurn, window: list[RawTurn]
) -> list[FactRecord]:
    """Facts from one turn, with recent turns as context (AMA's per-turn Constructor)."""
    window_text, _ = format_turns(window, ctx.tz, prefix="w")
    turn_text, labels = format_turns([turn], ctx.tz)
    messages = TURN_FACTS.format_messages(window=window_text or "(none)", turn=turn_text)
    result = log.ask(FactList, messages, "turn_facts")
    if result is None:
        return []
    drafts = [d for d in result.facts if d.statement.strip()]
    return [to_record(ctx, d, [turn], labels, log) for d in drafts]
