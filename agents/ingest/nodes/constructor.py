"""The Constructor node: consolidate the jobs the episode trigger planned.

For an ``episode`` job it first tries merge-first (an existing episode similar enough
absorbs the turns), otherwise synthesises a new episode; the episode and its atomic facts
come from one construction call. It stores the facts and the episode, files the episode
into a scene and marks the turns consolidated. ``merge`` jobs fold turns into a named
episode. ``turn_facts`` jobs (eager policy) extract facts from their turns in one call.
A failing step is recorded and skipped: turns whose consolidation failed stay
unconsolidated in the raw layer and are picked up by a later trigger.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

from langgraph.runtime import Runtime

from ....core.context import MemoryContext, context_of
from ....core.nodes import CONSTRUCTOR
from ....core.state import IngestState, Job, Written
from ....records.model import EpisodeRecord, FactRecord, MemoryRecord, RawTurn, SceneRecord
from ....stores.expiry import inherited_expiry
from ...common import refinement
from ...common.deps import NodeDeps, StepLog
from ..extraction import construct, drafting
from . import episodes, scenes
from .conflicts import flagged
from .episode_trigger import MERGE_THRESHOLD

WINDOW_TURNS = 6
"""Recent turns shown as context when extracting facts from a single turn."""


class _Run:
    """One Constructor pass: the step log plus what it wrote."""

    def __init__(self, deps: NodeDeps, ctx: MemoryContext) -> None:
        self.deps, self.ctx = deps, ctx
        self.log = StepLog(CONSTRUCTOR, deps)
        self.written: list[Written] = []
        self.new_facts: list[str] = []
        self.scenes_changed = False

    def turns(self, ids: list[str]) -> list[RawTurn]:
        found = self.deps.store.get("raw", self.ctx.namespace, ids)
        turns = [t for t in found if isinstance(t, RawTurn)]
        return sorted(turns, key=lambda t: (t.occurred_at, t.session_id, t.turn_index))

    def expiring(self, records: list[FactRecord], known: list[RawTurn]) -> list[FactRecord]:
        """``records``, each expiring with the last of its source turns (``expires_at``)."""
        by_id: dict[str, MemoryRecord] = {t.id: t for t in known}
        missing = sorted({s for r in records for s in r.source_ids} - set(by_id))
        if missing:
            by_id.update((t.id, t) for t in self.deps.store.get("raw", self.ctx.namespace, missing))
        if all(r.expires_at is None for r in by_id.values()):
            return records
        out = []
        for r in records:
            sources = [by_id[s] for s in r.source_ids if s in by_id]
            out.append(r.model_copy(update={"expires_at": inherited_expiry(sources)}))
        return out

    def store_facts(
        self,
        facts: list[FactRecord],
        replayed_episode: str | None = None,
        known: Sequence[RawTurn] = (),
    ) -> None:
        fresh = refinement.deduplicate(self.log, self.ctx, self.expiring(facts, list(known)))
        if fresh:  # flagged until the Refresher commits their supersessions (refresher.settle)
            self.deps.store.add(self.ctx.namespace, [flagged(f) for f in fresh])
        reported = [f.id for f in fresh]
        if replayed_episode is not None:  # facts an interrupted attempt already stored
            earlier = self.deps.store.get(
                "fact", self.ctx.namespace, where={"metadata.episode_id": replayed_episode}
            )
            reported += [f.id for f in earlier if f.id not in reported]
        self.new_facts.extend(reported)
        self.written.extend(Written(granularity="fact", id=i, action="created") for i in reported)

    def held_by(self, episode: EpisodeRecord | None, turns: list[RawTurn]) -> bool:
        """Whether ``episode`` already holds every one of ``turns``.

        Only an interrupted attempt of the same job leaves that behind (a crash or a
        killed worker after the episode was written; the turns are marked consolidated
        last), so the job is resumed with the stored episode instead of being redone.
        """
        return episode is not None and {t.id for t in turns} <= set(episode.source_ids)

    def scene_holding(self, episode_id: str) -> SceneRecord | None:
        for scene in self.deps.store.get("scene", self.ctx.namespace):
            if isinstance(scene, SceneRecord) and episode_id in scene.members:
                return scene
        return None

    def consolidate(
        self,
        episode: EpisodeRecord,
        turns: list[RawTurn],
        action: Literal["created", "merged"],
        facts: list[FactRecord],
        *,
        replay: bool = False,
    ) -> None:
        """Write the facts, the episode and its scene, then mark the turns consolidated.

        Marking the turns is the commit point: if any earlier write fails, the turns stay
        unconsolidated and a later trigger redoes the job. Every write is an upsert under
        a stable id (facts, episode, scene), so the redo completes the records instead
        of duplicating them. Facts are written before the episode, so a ``replay`` (the
        stored episode already holds the turns: an interrupted attempt) reports the facts
        stored then and does not summarise the scene a second time.
        """
        store, ns = self.deps.store, self.ctx.namespace
        self.store_facts(facts, replayed_episode=episode.id if replay else None, known=turns)
        if not replay:
            sources: list[MemoryRecord] = [*turns, *([episode] if action == "merged" else [])]
            episode = episode.model_copy(update={"expires_at": inherited_expiry(sources)})
            store.add(ns, [episode])
        self.written.append(Written(granularity="episode", id=episode.id, action=action))
        held = self.scene_holding(episode.id) if replay else None
        scene, created = (held, False) if held else scenes.assign(self.log, self.ctx, episode)
        self.written.append(
            Written(granularity="scene", id=scene.id, action="created" if created else "updated")
        )
        self.scenes_changed = True
        marked = [
            t.model_copy(
                update={
                    "consolidated_into": list(dict.fromkeys([*t.consolidated_into, episode.id]))
                }
            )
            for t in turns
        ]
        store.add(ns, marked)

    def episode_job(self, job: Job) -> None:
        turns = self.turns(job.raw_ids)
        if not turns:
            return
        own_id = episodes.episode_id(self.ctx.namespace, [t.id for t in turns])
        own = self.deps.store.get("episode", self.ctx.namespace, [own_id])
        if own and isinstance(own[0], EpisodeRecord) and self.held_by(own[0], turns):
            self.consolidate(own[0], turns, "created", [], replay=True)
            return
        near = episodes.nearest_episode(self.log, self.ctx, turns)
        if near is not None and self.held_by(near[0], turns):  # merged before the break
            self.consolidate(near[0], turns, "merged", [], replay=True)
            return
        if near is not None and near[1] >= MERGE_THRESHOLD:
            merged = episodes.merge(self.log, self.ctx, near[0], turns)
            if merged is not None:
                self.consolidate(merged[0], turns, "merged", merged[1])
            return
        drafted = episodes.synthesize(self.log, self.ctx, turns)
        if drafted is not None:
            self.consolidate(drafted[0], turns, "created", drafted[1])

    def merge_job(self, job: Job) -> None:
        turns = self.turns(job.raw_ids)
        found = self.deps.store.get("episode", self.ctx.namespace, [job.episode_id or ""])
        if not turns or not found or not isinstance(found[0], EpisodeRecord):
            self.log.fail("merge", f"episode {job.episode_id!r} or its turns are gone")
            return
        if self.held_by(found[0], turns):
            self.consolidate(found[0], turns, "merged", [], replay=True)
            return
        merged = episodes.merge(self.log, self.ctx, found[0], turns)
        if merged is not None:
            self.consolidate(merged[0], turns, "merged", merged[1])

    def turn_facts_job(self, job: Job) -> None:
        """Facts from the job's turns in one call (eager policy), recent turns as context."""
        turns = self.turns(job.raw_ids)
        if not turns:
            return
        first = turns[0]
        stored = self.deps.store.get(
            "raw", self.ctx.namespace, where={"session_id": first.session_id}
        )
        window = sorted(
            (t for t in stored if isinstance(t, RawTurn) and t.turn_index < first.turn_index),
            key=lambda t: t.turn_index,
        )[-WINDOW_TURNS:]
        shown = [*window, *turns]
        result = drafting.draft_excerpt(self.log, self.ctx, shown, step="turn_facts")
        if result is None:
            return
        draft, labels = result
        own = {t.id for t in turns}
        items = [f for f in draft.facts if labels.get(f.source or "") in own]
        self.store_facts(
            construct.fact_records(self.log, self.ctx, items, shown, labels), known=shown
        )


def make_constructor(deps: NodeDeps) -> Callable[..., dict[str, Any]]:
    """Build the ``constructor`` node."""

    def constructor(state: IngestState, runtime: Runtime[MemoryContext]) -> dict[str, Any]:
        """Run each planned job; record what was written and what failed."""
        run = _Run(deps, context_of(runtime))
        trigger = state.get("trigger")
        handlers = {
            "episode": run.episode_job,
            "merge": run.merge_job,
            "turn_facts": run.turn_facts_job,
        }
        for job in trigger.jobs if trigger else []:
            try:
                handlers[job.kind](job)
            except Exception as e:  # a store or model failure must not crash the graph
                run.log.fail(job.kind, e)
        if run.scenes_changed:
            try:
                scenes.update_profile(run.log, run.ctx)
            except Exception as e:
                run.log.fail("profile", e)
        return {"written": run.written, "new_fact_ids": run.new_facts, **run.log.update()}

    return constructor
