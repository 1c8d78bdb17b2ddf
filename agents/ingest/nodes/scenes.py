"""Scenes (EverMemOS §3.4): online clustering of episodes, scene summaries, profile.

An episode joins the scene whose centroid is most similar when the cosine is at least
``SCENE_TAU`` and some member episode lies within ``SCENE_MAX_GAP_DAYS`` of it;
otherwise it starts a new scene. The scene summary lists its member episodes in time
order, and the namespace profile groups the current facts by the person they are about;
neither needs an LLM call.
"""

from __future__ import annotations

from datetime import timedelta

import numpy as np

from ....core.context import MemoryContext
from ....records.model import EpisodeRecord, FactRecord, ProfileRecord, SceneRecord, stable_id
from ....stores.base import MemoryStore
from ....stores.expiry import earliest_expiry
from ...common.deps import StepLog
from ...common.formatting import long_date

SCENE_TAU = 0.7
"""Cosine to a scene centroid an episode needs to join it (EverMemOS's tau)."""
SCENE_MAX_GAP_DAYS = 7.0
"""An episode joins a scene only within this many days of a member (EverMemOS's gap)."""


def _unit(vector: list[float] | np.ndarray) -> np.ndarray:
    v = np.asarray(vector, dtype=np.float64)
    norm = float(np.linalg.norm(v))
    return v / norm if norm > 0 else v


def _centroid(log: StepLog, ctx: MemoryContext, member_ids: list[str]) -> list[float]:
    vectors = log.deps.store.vectors("episode", ctx.namespace, member_ids)
    if not vectors:
        return []
    return [float(x) for x in _unit(np.mean([_unit(v) for v in vectors.values()], axis=0))]


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
    limit = timedelta(days=SCENE_MAX_GAP_DAYS)
    for similarity, scene in scored:
        if similarity < SCENE_TAU:
            break
        members = log.deps.store.get("episode", ctx.namespace, scene.members)
        if any(abs(m.occurred_at - episode.occurred_at) <= limit for m in members):
            return scene
    return None


SCENE_CHARS = 3000
"""A scene summary keeps its most recent member lines within this many characters."""
PROFILE_FACTS_PER_PERSON = 12
PROFILE_PEOPLE = 20


def summary_of(store: MemoryStore, ctx: MemoryContext, member_ids: list[str]) -> str:
    """One line per member episode in time order: its date, title and first sentence.

    Built without an LLM: the episodes already hold the model's words, and a scene is
    what aggregates them across sessions.
    """
    members = store.get("episode", ctx.namespace, member_ids)
    lines = []
    for ep in sorted(members, key=lambda e: e.occurred_at):
        first = ep.text.split(". ")[0].rstrip(".")
        lines.append(f"{long_date(ep.occurred_at, ctx.tz)}: {getattr(ep, 'title', '')}. {first}.")
    text = "\n".join(lines)
    while len(text) > SCENE_CHARS and len(lines) > 1:
        lines.pop(0)
        text = "\n".join(lines)
    return text[-SCENE_CHARS:]


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
            text=summary_of(store, ctx, [episode.id]) or episode.text,
            members=[episode.id],
            centroid=_centroid(log, ctx, [episode.id]) or None,
            occurred_at=episode.occurred_at,
            recorded_at=log.deps.clock(),
            source_ids=list(episode.source_ids),
            expires_at=episode.expires_at,
        )
        store.add(ctx.namespace, [scene])
        return scene, True
    members = list(dict.fromkeys([*scene.members, episode.id]))
    updated = scene.model_copy(
        update={
            "members": members,
            "centroid": _centroid(log, ctx, members) or scene.centroid,
            "text": summary_of(store, ctx, members) or scene.text,
            "occurred_at": min(scene.occurred_at, episode.occurred_at),
            "recorded_at": log.deps.clock(),
            "source_ids": list(dict.fromkeys([*scene.source_ids, *episode.source_ids])),
            "expires_at": earliest_expiry(store.get("episode", ctx.namespace, members)),
        }
    )
    store.add(ctx.namespace, [updated])
    return updated, False


def update_profile(log: StepLog, ctx: MemoryContext) -> ProfileRecord | None:
    """Rebuild the namespace profile from its current facts, grouped by person.

    Every entry reads ``"<person>: <fact>"``, and a fact is filed under the person the
    Constructor said it is about, never under the speaker who told it; preferences are
    the implicit traits. No LLM call: the facts already hold the model's words.
    """
    store = log.deps.store
    facts = [
        f
        for f in store.get("fact", ctx.namespace, where={"superseded": False})
        if isinstance(f, FactRecord) and f.subject
    ]
    if not facts:
        return None
    by_person: dict[str, list[FactRecord]] = {}
    for fact in sorted(facts, key=lambda f: f.occurred_at):
        by_person.setdefault((fact.subject or "").strip(), []).append(fact)
    people = sorted(by_person, key=lambda p: -len(by_person[p]))[:PROFILE_PEOPLE]
    explicit: list[str] = []
    implicit: list[str] = []
    sources: list[str] = []
    for person in people:
        recent = by_person[person][-PROFILE_FACTS_PER_PERSON:]
        for fact in recent:
            entry = f"{person}: {fact.text}"
            (implicit if fact.kind == "preference" else explicit).append(entry)
            sources.append(fact.id)
    profile = ProfileRecord(
        namespace=ctx.namespace,
        explicit_facts=explicit,
        implicit_traits=implicit,
        source_ids=sources,
        occurred_at=max(f.occurred_at for f in facts),
        recorded_at=log.deps.clock(),
    )
    return store.put_profile(profile)
