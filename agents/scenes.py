"""Scenes (EverMemOS §3.4): online clustering of episodes, scene summaries, profile.

An episode joins the scene whose centroid is most similar when the cosine is at least
``scene_tau`` and some member episode lies within ``scene_max_gap_days`` of it;
otherwise it starts a new scene. The scene summary is rewritten on each assimilation,
and the namespace profile is distilled from the most recent scene summaries.
"""

from __future__ import annotations

from datetime import timedelta

import numpy as np

from ..graphs.context import MemoryContext
from ..prompts.construction import PROFILE, SCENE_SUMMARY
from ..stores.records import EpisodeRecord, ProfileRecord, SceneRecord, stable_id
from .deps import StepLog
from .formatting import as_data, format_record
from .schemas import ProfileUpdate, SceneSummary


def _unit(vector: list[float] | np.ndarray) -> np.ndarray:
    v = np.asarray(vector, dtype=np.float64)
    norm = float(np.linalg.norm(v))
    return v / norm if norm > 0 else v


def _centroid(log: StepLog, ctx: MemoryContext, member_ids: list[str]) -> list[float]:
    vectors = log.deps.store.vectors("episode", ctx.namespace, member_ids)
    if not vectors:
        return []
    return [float(x) for x in _unit(np.mean([_unit(v) for v in vectors.values()], axis=0))]


def _within_gap(
    log: StepLog, ctx: MemoryContext, scene: SceneRecord, episode: EpisodeRecord
) -> bool:
    members = log.deps.store.get("episode", ctx.namespace, scene.members)
    limit = timedelta(days=ctx.scene_max_gap_days)
    return any(abs(m.occurred_at - episode.occurred_at) <= limit for m in members)


def choose_scene(log: StepLog, ctx: MemoryContext, episode: EpisodeRecord) -> SceneRecord | None:
    """The scene ``episode`` belongs to: the one holding it, else the nearest eligible one."""
    scenes = [s for s in log.deps.store.get("scene", ctx.namespace) if isinstance(s, SceneRecord)]
    for scene in scenes:
        if episode.id in scene.members:
            return scene
    vector = log.deps.store.vectors("episode", ctx.namespace, [episode.id]).get(episode.id)
    if vector is None:
        return None
    v = _unit(vector)
    scored = sorted(
        ((float(v @ _unit(s.centroid)), s) for s in scenes if s.centroid),
        key=lambda pair: -pair[0],
    )
    for similarity, scene in scored:
        if similarity < ctx.scene_tau:
            break
        if _within_gap(log, ctx, scene, episode):
            return scene
    return None


def assign(log: StepLog, ctx: MemoryContext, episode: EpisodeRecord) -> tuple[SceneRecord, bool]:
    """File ``episode`` into a scene, updating its centroid and summary; store it.

    Returns the scene and whether it was newly created.
    """
    scene = choose_scene(log, ctx, episode)
    store = log.deps.store
    if scene is None:
        scene = SceneRecord(
            id=stable_id("scene", ctx.namespace, episode.id),
            namespace=ctx.namespace,
            title=episode.title,
            text=episode.text,
            members=[episode.id],
            centroid=_centroid(log, ctx, [episode.id]) or None,
            occurred_at=episode.occurred_at,
            recorded_at=log.deps.clock(),
            source_ids=list(episode.source_ids),
        )
        store.add(ctx.namespace, [scene])
        return scene, True
    members = list(dict.fromkeys([*scene.members, episode.id]))
    messages = SCENE_SUMMARY.format_messages(
        summary=format_record(scene, ctx.tz), episode=format_record(episode, ctx.tz)
    )
    summary = log.ask(SceneSummary, messages, "scene_summary")
    updated = scene.model_copy(
        update={
            "members": members,
            "centroid": _centroid(log, ctx, members) or scene.centroid,
            "title": summary.title.strip() if summary else scene.title,
            "text": summary.summary.strip() if summary else scene.text,
            "occurred_at": min(scene.occurred_at, episode.occurred_at),
            "recorded_at": log.deps.clock(),
            "source_ids": list(dict.fromkeys([*scene.source_ids, *episode.source_ids])),
        }
    )
    store.add(ctx.namespace, [updated])
    return updated, False


def update_profile(log: StepLog, ctx: MemoryContext) -> ProfileRecord | None:
    """Rewrite the namespace profile from the most recent scene summaries."""
    store = log.deps.store
    scenes = sorted(store.get("scene", ctx.namespace), key=lambda s: s.occurred_at)
    recent = scenes[-ctx.profile_scenes :]
    if not recent:
        return None
    current = store.get_profile(ctx.namespace) or ProfileRecord(namespace=ctx.namespace)
    messages = PROFILE.format_messages(
        profile=as_data(current.render()),
        scenes="\n".join(f"- {format_record(s, ctx.tz)}" for s in recent),
    )
    update = log.ask(ProfileUpdate, messages, "profile")
    if update is None:
        return None
    profile = ProfileRecord(
        namespace=ctx.namespace,
        explicit_facts=[f.strip() for f in update.explicit_facts if f.strip()],
        implicit_traits=[t.strip() for t in update.implicit_traits if t.strip()],
        source_ids=[s.id for s in recent],
        occurred_at=recent[-1].occurred_at,
        recorded_at=log.deps.clock(),
    )
    return store.put_profile(profile)
