"""Pooled evidence: one search over raw turns, facts, episodes and scenes.

Each query is one store request over every granularity (hybrid dense + BM25). Analysis
adds the question's channels, which never filter evidence away: the same search in its
time window, and over the turns of the people it names. Scenes lend their member
episodes to the episode ranking (scene-guided retrieval), and derived memories lend
their rank to the raw turns they came from, so an aggregate that matches the question
pulls its evidence up. Each granularity's channels are fused with RRF; the derived
granularities are fused with each other the same way. :func:`cut_to_budget` then builds
the context, raw turns first.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property, partial
from typing import Any, TypeVar
from zoneinfo import ZoneInfo

from ...core.context import DERIVED_KINDS, DerivedKind
from ...core.state import Candidate
from ...records.model import EpisodeRecord, FactRecord, MemoryRecord, RawTurn, SceneRecord
from ...stores.base import (
    PLAIN,
    Channel,
    LexicalView,
    MemoryStore,
    Ranking,
    SearchAnswer,
    SearchRequest,
)
from ...stores.fusion import FusionConfig, reciprocal_rank_fusion
from ..common.formatting import clip
from ..common.names import without_speakers
from ..common.query_analysis import QueryAnalysis
from .context import TokenCount, best_last, cut_to_budget

SOURCE_CHANNEL = "sources"
"""The raw-turn channel built from the source turns of the best derived memories."""
NEIGHBOUR_DECAY = 0.9
"""A neighbouring turn ranks just below the hit it was found next to."""


def to_candidate(record: MemoryRecord, score: float, query: str, **extra: Any) -> Candidate:
    """A record with its provenance, ready for the Judge and the answer."""
    fields: dict[str, Any] = {}
    if isinstance(record, RawTurn):
        fields = {
            "speaker": record.speaker,
            "media_caption": record.media_caption,
            "session_id": record.session_id,
            "turn_index": record.turn_index,
        }
    elif isinstance(record, FactRecord):
        fields = {"valid_to": record.valid_to, "superseded_by": record.superseded_by}
    return Candidate(
        granularity=record.granularity.value,
        id=record.id,
        text=clip(record.display_text()),
        occurred_at=record.occurred_at,
        score=score,
        title=getattr(record, "title", None) or None,
        source_ids=list(record.source_ids),
        query=query,
        **fields,
        **extra,
    )


@dataclass(frozen=True, kw_only=True)
class PoolSettings:
    """How deep each channel searches and what the context may hold."""

    raw_depth: int = 40
    derived_depth: int = 10
    scene_top: int = 3
    kinds: tuple[DerivedKind, ...] = DERIVED_KINDS
    """The derived kinds the context may show (all are searched; scenes guide episodes)."""
    aggregation_kinds: tuple[DerivedKind, ...] = DERIVED_KINDS
    """Of ``kinds``, those an aggregation question not about time shows (``QueryAnalysis``)."""
    neighbours: int = 0
    """Turns on each side of a top raw hit that join the pool (0: none)."""
    neighbour_hits: int = 10
    """How many of the best raw hits bring their neighbours."""
    budget: int = 1500
    derived_share: float = 0.2
    limit: int = 60
    source_weight: float = 1.0
    """RRF weight of the derived-to-source channel of raw turns (0: off); the others weigh 1."""


@dataclass
class _Ranked:
    """One granularity's fused ranking and the records it names."""

    ids: list[str] = field(default_factory=list)
    scores: dict[str, float] = field(default_factory=dict)
    ranks: dict[str, dict[str, int]] = field(default_factory=dict)
    records: dict[str, MemoryRecord] = field(default_factory=dict)
    queries: dict[str, str] = field(default_factory=dict)


Failed = Callable[[str, BaseException], None]
T = TypeVar("T")
Channels = dict[str, tuple[str, list[MemoryRecord]]]
"""One granularity's rankings: ``{channel: (query, records best first)}``."""


class EvidencePool:
    """Searches every granularity of one namespace and builds the budgeted context."""

    def __init__(
        self,
        store: MemoryStore,
        namespace: str,
        *,
        settings: PoolSettings,
        tz: ZoneInfo,
        count: TokenCount,
        as_of: datetime | None = None,
        on_error: Failed,
    ) -> None:
        self.store, self.namespace, self.settings = store, namespace, settings
        self.tz, self.count, self.as_of = tz, count, as_of
        self.on_error = on_error

    # ----------------------------------------------------------------- search
    def _valid(self, record: MemoryRecord) -> bool:
        if not isinstance(record, FactRecord):
            return True
        if self.as_of is not None:
            return record.is_valid_at(self.as_of)
        return record.superseded_by is None

    def _safely(self, step: str, call: Callable[[], T], fallback: T) -> T:
        """``call()``, or ``fallback`` once its failure is reported (``on_error``)."""
        try:
            return call()
        except Exception as e:  # a failing read degrades recall, never crashes it
            self.on_error(step, e)
            return fallback

    def _request(self, query: str, analysis: QueryAnalysis | None) -> SearchRequest:
        """``query`` everywhere; with ``analysis``, also in its window and by the named people."""
        depth = self.settings.derived_depth
        rankings = {"raw": Ranking(k=self.settings.raw_depth)}
        rankings |= {g: Ranking(k=depth) for g in DERIVED_KINDS}
        if self.as_of is None:  # superseded facts are searched only as of a time
            rankings["fact"] = Ranking(k=depth, where={"superseded": False})
        channels: dict[str, Channel] = {}
        if analysis is not None and (window := analysis.window()) is not None:
            channels["window"] = Channel(window=window)
        if analysis is not None and analysis.persons:
            named = without_speakers(query, analysis.persons)
            where = {"speaker": analysis.persons}
            channels["speaker"] = Channel(query=named, where=where, only=("raw",))
        return SearchRequest(
            query=query, namespace=self.namespace, rankings=rankings, channels=channels
        )

    def _search(self, queries: Sequence[str], analysis: QueryAnalysis) -> list[SearchAnswer]:
        """One request per query; the question's (the first) with its analysis' channels."""
        asked = [self._request(q, analysis if n == 0 else None) for n, q in enumerate(queries)]
        return [self._safely("search", partial(self.store.search_many, r), {}) for r in asked]

    def _channels(self, gran: str, queries: Sequence[str], answers: list[SearchAnswer]) -> Channels:
        """One granularity's rankings: each query's, then the question's filtered ones."""
        ranked = [
            (f"q{n}", q, a.get(gran, {}).get(PLAIN, []))
            for n, (q, a) in enumerate(zip(queries, answers, strict=True))
        ]
        ranked += [
            (c, queries[0], hits) for c, hits in answers[0].get(gran, {}).items() if c != PLAIN
        ]
        return {c: (q, [h.record for h in hits if self._valid(h.record)]) for c, q, hits in ranked}

    def _fuse(self, channels: Channels, extra: dict[str, list[str]] | None = None) -> _Ranked:
        ranked = _Ranked()
        rankings: dict[str, list[str]] = {}
        for name, (query, records) in channels.items():
            rankings[name] = [r.id for r in records]
            for r in records:
                ranked.records.setdefault(r.id, r)
                ranked.queries.setdefault(r.id, query)
        rankings.update(extra or {})
        config = FusionConfig(weights={SOURCE_CHANNEL: self.settings.source_weight})
        for hit in reciprocal_rank_fusion(rankings, config):
            ranked.ids.append(hit.record_id)
            ranked.scores[hit.record_id] = hit.score
            ranked.ranks[hit.record_id] = hit.ranks
        return ranked

    def _scene_members(self, scenes: _Ranked) -> list[str]:
        """Member episodes of the best scenes, best scene first."""
        out: list[str] = []
        for sid in scenes.ids[: self.settings.scene_top]:
            scene = scenes.records.get(sid)
            if isinstance(scene, SceneRecord):
                out.extend(m for m in scene.members if m not in out)
        return out

    def _derived(
        self, queries: Sequence[str], answers: list[SearchAnswer]
    ) -> tuple[list[Candidate], list[str]]:
        """Derived memories (fused across granularities) and their source-turn ranking."""
        scenes = self._fuse(self._channels("scene", queries, answers))
        members = self._scene_members(scenes)
        episodes = self._fuse(
            self._channels("episode", queries, answers), {"scene": members} if members else None
        )
        missing = [m for m in members if m not in episodes.records]
        if missing:
            for record in self.store.get("episode", self.namespace, missing):
                if isinstance(record, EpisodeRecord):
                    episodes.records[record.id] = record
                    episodes.queries[record.id] = queries[0]
        facts = self._fuse(self._channels("fact", queries, answers))
        by_gran = {"fact": facts, "episode": episodes, "scene": scenes}
        across = reciprocal_rank_fusion(
            {g: [i for i in r.ids if i in r.records] for g, r in by_gran.items()}, FusionConfig()
        )
        out: list[Candidate] = []
        sources: list[str] = []
        for hit in across:
            gran = next(g for g in DERIVED_KINDS if hit.ranks.get(g))
            r = by_gran[gran]
            record = r.records[hit.record_id]
            via = (
                "scene"
                if "scene" in r.ranks.get(record.id, {}) and len(r.ranks[record.id]) == 1
                else "search"
            )
            out.append(
                to_candidate(
                    record,
                    hit.score,
                    r.queries.get(record.id, queries[0]),
                    ranks=r.ranks.get(record.id, {}),
                    via=via,
                )
            )
            sources.extend(s for s in record.source_ids if s not in sources)
        return out, sources

    def _neighbours(self, turns: list[Candidate]) -> list[Candidate]:
        """The turns next to the best raw hits, each just below its hit."""
        n = self.settings.neighbours
        if n <= 0:
            return []
        known = {t.id for t in turns}
        out: list[Candidate] = []
        for hit in turns[: self.settings.neighbour_hits]:
            if hit.session_id is None or hit.turn_index is None:
                continue
            near = [hit.turn_index + d for d in range(-n, n + 1) if d and hit.turn_index + d >= 0]
            where: dict[str, Any] = {"session_id": hit.session_id, "turn_index": near}
            read = partial(self.store.get, "raw", self.namespace, where=where)
            found: list[MemoryRecord] = self._safely("neighbours", read, [])
            for other in found:
                if other.id not in known:
                    known.add(other.id)
                    out.append(
                        to_candidate(other, hit.score * NEIGHBOUR_DECAY, hit.query, via="neighbour")
                    )
        return out

    # ---------------------------------------------------------------- results
    def collect(self, queries: Sequence[str], analysis: QueryAnalysis) -> list[Candidate]:
        """The budgeted context for ``queries`` (the first is the question itself).

        The memories come in the context's order: derived memories, then raw turns,
        each from the least to the most relevant (:func:`.context.best_last`).
        """
        if not queries:
            return []
        answers = self._search(queries, analysis)
        derived, sources = self._derived(queries, answers)
        extra = {SOURCE_CHANNEL: sources} if sources and self.settings.source_weight > 0 else {}
        raw = self._fuse(self._channels("raw", queries, answers), extra)
        missing = [i for i in raw.ids if i not in raw.records]
        if missing:  # source turns no search returned: read them, keep their rank
            ranked_sources = set(missing[: self.settings.raw_depth])
            for record in self.store.get("raw", self.namespace, sorted(ranked_sources)):
                raw.records[record.id] = record
                raw.queries[record.id] = queries[0]
        turns = [
            to_candidate(
                raw.records[i],
                raw.scores[i],
                raw.queries.get(i, queries[0]),
                ranks=raw.ranks.get(i, {}),
                via="search" if set(raw.ranks.get(i, {})) - {SOURCE_CHANNEL} else "source",
            )
            for i in raw.ids
            if i in raw.records
        ]
        turns = _interleave(turns, self._neighbours(turns))
        s = self.settings
        kinds = [k for k in s.kinds if not analysis.gathers() or k in s.aggregation_kinds]
        shown = [m for m in derived if m.granularity in kinds]
        kept = cut_to_budget(
            turns,
            shown,
            budget=s.budget,
            derived_share=s.derived_share,
            limit=s.limit,
            tz=self.tz,
            count=self.count,
        )
        return best_last(kept, [m.id for m in turns] + [m.id for m in derived])

    def speakers(self) -> list[str]:
        """Speaker labels of the namespace's raw turns (newest first)."""
        values: list[Any] = self._safely("speakers", lambda: self._raw.distinct("speaker"), [])
        return [v for v in values if isinstance(v, str)]

    def latest(self) -> float | None:
        """POSIX time of the namespace's latest raw turn, or None."""
        return self._safely("latest", lambda: self._raw.latest(), None)

    @cached_property
    def _raw(self) -> LexicalView:
        """The raw turns' lexical index, read once (speakers and latest share it)."""
        return self.store.lexical_index("raw", self.namespace)


def _interleave(turns: list[Candidate], neighbours: list[Candidate]) -> list[Candidate]:
    """Merge neighbour turns into the ranking by score (stable for equal scores)."""
    if not neighbours:
        return turns
    merged = sorted([*turns, *neighbours], key=lambda c: -c.score)
    return list({c.id: c for c in merged}.values())


__all__ = ["EvidencePool", "PoolSettings", "to_candidate"]
