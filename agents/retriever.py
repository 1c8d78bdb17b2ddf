"""The Retriever node (AMA §3.2, EverMemOS §3.5, REMem time windows).

First round: one LLM call rewrites the question to stand alone and yields the intent
vector B = [fine, abstract, event, atomic], K_dyn, and an optional date window or as-of
date. Routing: fine -> raw; abstract or event -> episode (with scene expansion); else
fact; K = max(K_dyn, K_min). Retry rounds search the Judge's complementary queries on the
current granularity and the next one not yet tried. Results of several queries are fused
with RRF and merged with earlier rounds' candidates.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

import numpy as np
from langgraph.runtime import Runtime

from ..errors import InvalidInputError
from ..graphs.context import MemoryContext
from ..graphs.state import Candidate, RecallState
from ..prompts.recall import PLAN
from ..stores.filters import TimeWindow
from ..stores.fusion import FusionConfig, reciprocal_rank_fusion
from ..stores.records import EpisodeRecord, FactRecord, MemoryRecord, RawTurn, SceneRecord
from .deps import NodeDeps, StepLog, context_of
from .formatting import as_data, clip, parse_date
from .recall_schemas import RetrievalPlan

NODE = "retriever"
ORDER = ("raw", "episode", "fact")


def route(plan: RetrievalPlan) -> str:
    """AMA's routing: fine -> raw; abstract or event -> episode; otherwise fact."""
    if plan.fine:
        return "raw"
    if plan.abstract or plan.event:
        return "episode"
    return "fact"


def _window(plan: RetrievalPlan, ctx: MemoryContext) -> TimeWindow | None:
    after, before = parse_date(plan.after, ctx.tz), parse_date(plan.before, ctx.tz)
    try:
        return TimeWindow(after=after, before=before) if after or before else None
    except InvalidInputError:
        return None  # an empty or inverted window from the model is ignored, not fatal


def to_candidate(record: MemoryRecord, score: float, query: str, **extra: Any) -> Candidate:
    """A record with its provenance, ready for the Judge and the answer."""
    return Candidate(
        granularity=record.granularity.value,
        id=record.id,
        text=clip(record.text),
        occurred_at=record.occurred_at,
        score=score,
        title=getattr(record, "title", None) or None,
        speaker=record.speaker if isinstance(record, RawTurn) else None,
        source_ids=list(record.source_ids),
        query=query,
        valid_to=record.valid_to if isinstance(record, FactRecord) else None,
        superseded_by=record.superseded_by if isinstance(record, FactRecord) else None,
        **extra,
    )


class _Search:
    """One retrieval pass over one granularity for several queries."""

    def __init__(self, deps: NodeDeps, ctx: MemoryContext, as_of: datetime | None) -> None:
        self.store, self.ctx, self.as_of = deps.store, ctx, as_of

    def _valid(self, record: MemoryRecord) -> bool:
        if not isinstance(record, FactRecord):
            return True
        if self.as_of is not None:
            return record.is_valid_at(self.as_of)
        return record.superseded_by is None

    def run(
        self,
        granularity: str,
        queries: list[str],
        k: int,
        window: TimeWindow | None,
        neighbours: int = 0,
    ) -> list[Candidate]:
        """Fused hybrid results of ``queries`` on one granularity, with expansions."""
        where = {"superseded": False} if granularity == "fact" and self.as_of is None else None
        rankings: dict[str, list[str]] = {}
        found: dict[str, tuple[MemoryRecord, dict[str, int], str]] = {}
        for n, query in enumerate(queries):
            hits = self.store.search(
                query, granularity, self.ctx.namespace, k=k, window=window, where=where
            )
            kept = [h for h in hits if self._valid(h.record)]
            rankings[f"q{n}"] = [h.record.id for h in kept]
            for h in kept:
                found.setdefault(h.record.id, (h.record, h.ranks, query))
        fused = reciprocal_rank_fusion(rankings, FusionConfig())[:k]
        out = [
            to_candidate(
                found[h.record_id][0], h.score, found[h.record_id][2], ranks=found[h.record_id][1]
            )
            for h in fused
        ]
        if granularity == "episode" and out:
            out = self._expand_scenes(out, queries[0], k)
        if granularity == "raw" and out and neighbours > 0:
            out = self._expand_neighbours(out, neighbours, k)
        return out

    def _expand_neighbours(self, hits: list[Candidate], n: int, k: int) -> list[Candidate]:
        """Follow each raw hit with the turns just before and after it in its session."""
        seen = {h.id for h in hits}
        out: list[Candidate] = []
        for hit in hits:
            out.append(hit)
            record = self.store.get("raw", self.ctx.namespace, [hit.id])
            if not record or not isinstance(record[0], RawTurn):
                continue
            turn = record[0]
            near = [turn.turn_index + d for d in range(-n, n + 1) if d and turn.turn_index + d >= 0]
            where: dict[str, Any] = {"session_id": turn.session_id, "turn_index": near}
            for other in self.store.get("raw", self.ctx.namespace, where=where):
                if other.id not in seen:
                    seen.add(other.id)
                    out.append(to_candidate(other, hit.score * 0.9, hit.query, via="neighbour"))
        return out[: 2 * k]

    def _expand_scenes(self, hits: list[Candidate], query: str, k: int) -> list[Candidate]:
        """Score scenes by their best member hit, pool their episodes, re-rank by cosine.

        The pooled list is capped at twice the budget, so expansion adds siblings of the
        best hits without flooding the Judge.
        """
        scenes = [
            s for s in self.store.get("scene", self.ctx.namespace) if isinstance(s, SceneRecord)
        ]
        best = {h.id: h.score for h in hits}
        scored = sorted(
            ((max((best[m] for m in s.members if m in best), default=0.0), s) for s in scenes),
            key=lambda pair: -pair[0],
        )
        pooled = {m for score, s in scored[: self.ctx.scene_top] if score > 0 for m in s.members}
        extra = [
            e for e in self.store.get("episode", self.ctx.namespace, sorted(pooled - set(best)))
        ]
        if not extra:
            return hits
        records = {h.id: h for h in hits}
        vectors = self.store.vectors(
            "episode", self.ctx.namespace, [*records, *(e.id for e in extra)]
        )
        q = np.asarray(self.store.embeddings.embed_query(query))
        cos = {
            rid: float(np.dot(q, v) / (np.linalg.norm(q) * np.linalg.norm(v) or 1.0))
            for rid, v in vectors.items()
        }
        pool = [
            *hits,
            *(
                to_candidate(e, 0.0, query, via="scene")
                for e in extra
                if isinstance(e, EpisodeRecord)
            ),
        ]
        pool.sort(key=lambda c: -cos.get(c.id, -1.0))
        return pool[: 2 * k]  # expansion may at most double the budget


def _plan(log: StepLog, ctx: MemoryContext, state: RecallState) -> RetrievalPlan:
    question = state.get("question", "")
    messages = PLAN.format_messages(
        today=log.deps.clock().astimezone(ctx.tz).date().isoformat(),
        window=as_data("\n".join(state.get("window", [])[-10:]) or "(none)"),
        question=as_data(question),
    )
    return log.ask(RetrievalPlan, messages, "plan") or RetrievalPlan(query=question)


def _merge(old: list[Candidate], new: list[Candidate], limit: int) -> list[Candidate]:
    merged: dict[tuple[str, str], Candidate] = {}
    for c in [*old, *new]:
        key = (c.granularity, c.id)
        if key not in merged or c.score > merged[key].score:
            merged[key] = c
    return sorted(merged.values(), key=lambda c: -c.score)[:limit]


def make_retriever(deps: NodeDeps) -> Callable[..., dict[str, Any]]:
    """Build the ``retriever`` node."""

    def retriever(state: RecallState, runtime: Runtime[MemoryContext]) -> dict[str, Any]:
        """Plan (first round) or follow the Judge's queries (retry), search, fuse, merge."""
        question = state.get("question")
        if not isinstance(question, str) or not question.strip():
            raise InvalidInputError("recall needs 'question': a non-empty string")
        ctx = context_of(runtime)
        log = StepLog(NODE, deps)
        rounds = state.get("rounds", 0)
        tried = list(state.get("tried", []))
        if rounds == 0:
            plan = _plan(log, ctx, state)
            queries = [plan.query]
            granularities = [route(plan)]
        else:
            plan = RetrievalPlan.model_validate(state.get("plan") or {"query": question})
            verdict = state.get("verdict") or {}
            queries = [q for q in verdict.get("queries", []) if isinstance(q, str) and q.strip()][
                :3
            ]
            queries = queries or [plan.query]
            following = [g for g in ORDER if g not in tried]
            granularities = list(
                dict.fromkeys([*(state.get("granularities") or [route(plan)])[:1], *following[:1]])
            )
        as_of = state.get("as_of") or parse_date(plan.as_of, ctx.tz)
        k = max(plan.k, ctx.k_min)
        search = _Search(deps, ctx, as_of)
        found: list[Candidate] = []
        # the routed granularities first; if they hold nothing, fall through the others
        fallbacks = [g for g in ORDER if g not in granularities]
        for granularity in [*granularities, *fallbacks]:
            if found and granularity in fallbacks:
                break
            try:
                expand = ctx.neighbour_turns if rounds > 0 else 0
                found += search.run(granularity, queries, k, _window(plan, ctx), expand)
            except Exception as e:  # a failing store degrades recall, never crashes it
                log.fail(f"search:{granularity}", e)
            if granularity in fallbacks and found:
                granularities = [*granularities, granularity]
        return {
            "plan": plan.model_dump(),
            "queries": queries,
            "queries_tried": queries,
            "granularities": granularities,
            "tried": list(dict.fromkeys([*tried, *granularities])),
            "rounds": rounds + 1,
            "candidates": _merge(state.get("candidates", []), found, ctx.max_candidates),
            **log.update(),
        }

    return retriever
