"""The first node of ingest: write every incoming turn to the raw collection.

It runs before any LLM call, so nothing a user said is ever lost. A turn's id is stable
(namespace, session and turn index; or its content and timestamp when no index is
given), so sending the same turn again is a no-op that leaves the stored turn untouched.
Relative time expressions ("last Friday") are resolved against the turn's date here, by
rules and a date parser, so every later reader sees "last Friday (14 July 2023)".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langgraph.runtime import Runtime
from pydantic import ValidationError

from ....core.context import MemoryContext, context_of
from ....core.state import IngestState, TurnInput
from ....errors import InvalidInputError
from ....records.model import RawTurn, stable_id
from ...common.deps import NodeDeps
from ...common.timeparse import reference_day, resolve_times
from ..extraction.salience import is_trivial

CONTEXT_CHARS = 300
"""How much of the previous turn is kept as a turn's retrieval context."""


def _validated(turns: object) -> list[TurnInput]:
    if not isinstance(turns, list) or not turns:
        raise InvalidInputError("ingest needs 'turns': a non-empty list of turns")
    out = []
    for n, turn in enumerate(turns):
        try:
            out.append(turn if isinstance(turn, TurnInput) else TurnInput.model_validate(turn))
        except ValidationError as e:
            raise InvalidInputError(f"turn #{n} is invalid: {e}") from e
    return out


def build_raw_turns(deps: NodeDeps, ctx: MemoryContext, turns: list[TurnInput]) -> list[RawTurn]:
    """Turn inputs into raw records with stable ids, turn indexes and neighbour context."""
    ns = ctx.namespace
    next_index: dict[str, int] = {}
    previous: dict[str, str] = {}
    records = []
    for n, turn in enumerate(turns):
        session = turn.session_id
        if session not in next_index:
            stored = deps.store.get("raw", ns, where={"session_id": session})
            next_index[session] = max((r.turn_index for r in stored), default=-1) + 1  # type: ignore[attr-defined]
            if stored:
                last = stored[-1]
                previous[session] = f"{last.speaker}: {last.text}"  # type: ignore[attr-defined]
        if turn.turn_index is not None:
            index = turn.turn_index
            record_id = RawTurn.turn_id(ns, session, index)
        else:
            index = next_index[session]
            record_id = stable_id(
                "raw", ns, session, turn.occurred_at.isoformat(), turn.speaker, turn.text
            )
        next_index[session] = max(next_index[session], index + 1)
        context = previous.get(session)
        times = resolve_times(turn.text, reference_day(turn.occurred_at, ctx.tz))
        try:
            record = RawTurn(
                id=record_id,
                namespace=ns,
                speaker=turn.speaker,
                text=turn.text,
                session_id=session,
                turn_index=index,
                occurred_at=turn.occurred_at,
                recorded_at=deps.clock(),
                media_caption=turn.media_caption,
                metadata=turn.metadata,
                expires_at=turn.expires_at,
                context=context[:CONTEXT_CHARS] if context else None,
                time_refs=times,
                trivial=is_trivial(turn.text, caption=turn.media_caption, times=times),
            )
        except ValidationError as e:
            raise InvalidInputError(f"turn #{n} cannot be stored: {e}") from e
        records.append(record)
        previous[session] = f"{turn.speaker}: {turn.text}"
    return records


def make_raw_write(deps: NodeDeps) -> Callable[..., dict[str, Any]]:
    """Build the ``raw_write`` node."""

    def raw_write(state: IngestState, runtime: Runtime[MemoryContext]) -> dict[str, Any]:
        """Store the incoming turns verbatim; report which were new and which repeats.

        Turns a background add stored (``pending_raw_ids``) are new to construction:
        those still stored are reported new, and nothing is written.
        """
        ctx = context_of(runtime)
        pending = state.get("pending_raw_ids")
        if pending and not state.get("turns"):
            stored = {r.id for r in deps.store.get("raw", ctx.namespace, list(pending))}
            return {"new_raw_ids": [i for i in pending if i in stored], "duplicate_raw_ids": []}
        records = build_raw_turns(deps, ctx, _validated(state.get("turns")))
        existing = {r.id for r in deps.store.get("raw", ctx.namespace, [r.id for r in records])}
        fresh = list({r.id: r for r in records if r.id not in existing}.values())
        if fresh:
            deps.store.add(ctx.namespace, fresh)
        return {
            "new_raw_ids": [r.id for r in fresh],
            "duplicate_raw_ids": sorted(existing),
        }

    return raw_write
