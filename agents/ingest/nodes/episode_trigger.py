"""The episode-trigger node: decide when raw turns are consolidated, and why.

Policies (``MemoryContext.trigger_policy``):

* ``eager`` (AMA): facts from every new turn (one call per batch); an LLM boundary judge
  closes episodes.
* ``recurrence`` (RecMem): no LLM call until a turn has ``THETA_COUNT`` unconsolidated
  raw neighbours with cosine >= ``THETA_SIM``; that cluster, in time order, is
  consolidated. A turn close enough to an existing episode is merged into it first.
* ``boundary``: heuristics close the episode (session change, time gap, token
  saturation), with no LLM call.
* ``session``: the episode closes when its session does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from langgraph.runtime import Runtime

from ....core.context import MemoryContext, context_of
from ....core.nodes import EPISODE_TRIGGER
from ....core.state import IngestState, Job, TriggerDecision
from ....llm.tokens import TokenCounter, token_counter_for
from ....prompts.construction import BOUNDARY
from ....records.model import RawTurn
from ...common.deps import NodeDeps, StepLog
from ...common.formatting import format_turns
from ..schemas import BoundaryDecision

THETA_SIM = 0.7
"""Recurrence: cosine a raw neighbour needs to count as a recurrence (RecMem's theta_sim)."""
THETA_COUNT = 5
"""Recurrence: neighbours needed before the cluster is consolidated (RecMem's theta_count)."""
NEIGHBOUR_K = 10
"""Recurrence: raw neighbours inspected per incoming turn (twice ``THETA_COUNT``)."""
MERGE_THRESHOLD = 0.7
"""Merge-first: cosine at which an existing episode absorbs new turns (RecMem's theta_sim,
so a turn that would recur with an episode's turns joins it instead)."""
BOUNDARY_GAP_MINUTES = 240.0
"""Boundary: a silence longer than this (four hours) closes the current episode."""


@dataclass
class _Plan:
    """Jobs and reasons collected while a policy walks the new turns."""

    log: StepLog
    jobs: list[Job] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)

    def close(self, buffer: list[RawTurn], why: str) -> None:
        """Plan one episode per session among ``buffer``'s turns (in time order).

        Splitting by session keeps a job's turn set, and so its stable episode id, the
        same when turns left unconsolidated by a failed run are closed again later.
        """
        groups: dict[str, list[RawTurn]] = {}
        for turn in buffer:
            groups.setdefault(turn.session_id, []).append(turn)
        for turns in groups.values():
            self.jobs.append(Job(kind="episode", raw_ids=[t.id for t in turns], reason=why))
            self.reasons.append(f"{why}: episode of {len(turns)} turn(s)")


def _walk(
    plan: _Plan,
    buffer: list[RawTurn],
    new: list[RawTurn],
    closed: bool,
    boundary: Callable[[list[RawTurn], RawTurn], str | None],
) -> _Plan:
    """Close an episode before each turn ``boundary`` gives a reason for, and if ``closed``."""
    for turn in new:
        why = boundary(buffer, turn) if buffer else None
        if why is not None:
            plan.close(buffer, why)
            buffer = []
        buffer.append(turn)
    if closed:
        plan.close(buffer, "session closed")
    return plan


def _eager(
    deps: NodeDeps, ctx: MemoryContext, buffer: list[RawTurn], new: list[RawTurn], closed: bool
) -> _Plan:
    plan = _Plan(StepLog(EPISODE_TRIGGER, deps), reasons=[f"eager: facts from {len(new)} turn(s)"])
    if new:  # one call extracts the facts of every new turn
        plan.jobs.append(
            Job(kind="turn_facts", raw_ids=[t.id for t in new], reason="eager: every turn")
        )

    def judged(history: list[RawTurn], turn: RawTurn) -> str | None:
        """Ask the boundary judge; a failed call counts as no boundary (nothing is lost)."""
        history_text, _ = format_turns(history[-12:], ctx.tz, prefix="h")
        new_text, _ = format_turns([turn], ctx.tz, prefix="n")
        messages = BOUNDARY.format_messages(history=history_text, new=new_text)
        decision = plan.log.ask(BoundaryDecision, messages, "boundary")
        if decision is None or not decision.new_episode:
            return None
        plan.reasons.append(f"boundary judge: {decision.reason or 'new episode'}")
        return "boundary judge"

    return _walk(plan, buffer, new, closed, judged)


def _heuristic_boundary(
    ctx: MemoryContext,
    buffer: list[RawTurn],
    turn: RawTurn,
    count: TokenCounter,
    *,
    max_tokens: int,
) -> str | None:
    last = buffer[-1]
    if turn.session_id != last.session_id:
        return f"session {last.session_id} ended"
    gap = (turn.occurred_at - last.occurred_at).total_seconds() / 60
    if gap > BOUNDARY_GAP_MINUTES:
        return f"time gap of {gap:.0f} min > {BOUNDARY_GAP_MINUTES:.0f}"
    tokens = sum(count(t.text) for t in buffer) + count(turn.text)
    if tokens > max_tokens:
        how = " (estimated)" if count.estimated else ""
        return f"saturation: {tokens} tokens{how} > {max_tokens}"
    return None


def _boundary(
    deps: NodeDeps, ctx: MemoryContext, buffer: list[RawTurn], new: list[RawTurn], closed: bool
) -> _Plan:
    count = token_counter_for(deps.caller.model)  # the served model's tokenizer, if known
    most = deps.arms.boundary_max_tokens

    def ends(history: list[RawTurn], turn: RawTurn) -> str | None:
        return _heuristic_boundary(ctx, history, turn, count, max_tokens=most)

    return _walk(_Plan(StepLog(EPISODE_TRIGGER, deps)), buffer, new, closed, ends)


def _session(
    deps: NodeDeps, ctx: MemoryContext, buffer: list[RawTurn], new: list[RawTurn], closed: bool
) -> _Plan:
    def ended(history: list[RawTurn], turn: RawTurn) -> str | None:
        last = history[-1].session_id
        return f"session {last} closed" if last != turn.session_id else None

    return _walk(_Plan(StepLog(EPISODE_TRIGGER, deps)), buffer, new, closed, ended)


def _recurrence(
    deps: NodeDeps, ctx: MemoryContext, buffer: list[RawTurn], new: list[RawTurn], closed: bool
) -> _Plan:
    plan = _Plan(StepLog(EPISODE_TRIGGER, deps))
    ns, store = ctx.namespace, deps.store
    new_ids = {t.id for t in new}
    claimed: set[str] = set()
    merges: dict[str, list[str]] = {}
    for turn in new:
        if turn.id in claimed:
            continue
        text = store.index_policy.render(turn)
        nearest = store.search(text, "episode", ns, k=1, mode="dense")
        if nearest and nearest[0].channel_scores["dense"] >= MERGE_THRESHOLD:
            episode_id = nearest[0].record.id
            merges.setdefault(episode_id, []).append(turn.id)
            claimed.add(turn.id)
            plan.reasons.append(
                f"merge-first: cos {nearest[0].channel_scores['dense']:.2f} >= "
                f"{MERGE_THRESHOLD} with episode {episode_id}"
            )
            continue
        hits = store.search(
            text, "raw", ns, k=NEIGHBOUR_K + 1, mode="dense", where={"consolidated": False}
        )
        neighbours = [
            h.record
            for h in hits
            if h.record.id != turn.id
            and h.record.id not in claimed
            and (h.record.id in new_ids or getattr(h.record, "pending", None) is None)
            and h.channel_scores["dense"] >= THETA_SIM
        ][:NEIGHBOUR_K]
        if len(neighbours) >= THETA_COUNT:
            cluster = sorted([turn, *neighbours], key=lambda t: (t.occurred_at, t.id))
            claimed.update(t.id for t in cluster)
            plan.jobs.append(
                Job(
                    kind="episode",
                    raw_ids=[t.id for t in cluster],
                    reason=f"recurrence: {len(neighbours)} neighbours >= {THETA_SIM}",
                )
            )
            plan.reasons.append(
                f"recurrence: {len(neighbours)} unconsolidated neighbours with cos >= "
                f"{THETA_SIM} (needed {THETA_COUNT}): cluster of {len(cluster)}"
            )
    for episode_id, raw_ids in merges.items():
        plan.jobs.append(
            Job(kind="merge", raw_ids=raw_ids, episode_id=episode_id, reason="merge-first")
        )
    if not plan.jobs:
        plan.reasons.append(
            f"recurrence: no turn has {THETA_COUNT} neighbours with cos >= {THETA_SIM}; "
            "kept in the raw layer"
        )
    return plan


_POLICIES: dict[str, Callable[..., _Plan]] = {
    "eager": _eager,
    "recurrence": _recurrence,
    "boundary": _boundary,
    "session": _session,
}


def _by_time(turns: list[RawTurn]) -> list[RawTurn]:
    return sorted(turns, key=lambda t: (t.occurred_at, t.session_id, t.turn_index, t.id))


def make_episode_trigger(deps: NodeDeps) -> Callable[..., dict[str, Any]]:
    """Build the ``episode_trigger`` node."""

    def episode_trigger(state: IngestState, runtime: Runtime[MemoryContext]) -> dict[str, Any]:
        """Decide which turns to consolidate now; record the decision and its reason."""
        ctx = context_of(runtime)
        new_ids = set(state.get("new_raw_ids", []))
        pending = [r for r in deps.store.get("raw", ctx.namespace, where={"consolidated": False})]
        raw = [r for r in pending if isinstance(r, RawTurn)]
        new = _by_time([r for r in raw if r.id in new_ids])
        # turns a background add left pending have not reached the trigger yet: their
        # own build plans them, in order, so no other run may close them
        buffer = _by_time([r for r in raw if r.id not in new_ids and r.pending is None])
        closed = bool(state.get("session_closed", False))
        plan = _POLICIES[ctx.trigger_policy](deps, ctx, buffer, new, closed)
        consolidate = any(j.kind in ("episode", "merge") for j in plan.jobs)
        decision = TriggerDecision(
            policy=ctx.trigger_policy,
            consolidate=consolidate,
            reason="; ".join(plan.reasons) or "no new turns",
            jobs=plan.jobs,
        )
        return {"trigger": decision, **plan.log.update()}

    return episode_trigger
