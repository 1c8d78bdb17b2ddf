"""The Judge node on the write path: which stored facts the new facts update.

It flags contradictions between new facts and the facts already stored (AMA's conflict
detection); the Refresher (:mod:`.refresher`) supersedes them. A new fact's candidates
are the current facts about the same person nearest to it by embedding
(:mod:`..supersession.updates`), so no word list decides which pairs are looked at, in any language,
and the model decides each. A 1.5B model cannot judge those pairs, so the small-model
profile (``MemoryContext.small_model``), which the facade turns on for the offline model
only, keeps the English slot pre-filter (:mod:`..supersession.slots`) and its cues
(:mod:`..supersession.update_cues`) instead.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from langgraph.runtime import Runtime

from ....core.context import MemoryContext, context_of
from ....core.nodes import JUDGE
from ....core.state import Conflict, IngestState
from ....prompts.construction import UPDATE_CHECK
from ....records.model import FactRecord, RawTurn
from ...common.deps import NodeDeps, StepLog
from ...common.formatting import data_line, long_date
from ...common.token_caps import capped_log
from ..schemas import SupersessionCheck
from ..supersession.slots import candidate_pairs as slot_pairs
from ..supersession.update_cues import may_change, pair_cue, plainly_said
from ..supersession.updates import CandidatePair, candidate_pairs, same_person

CONFLICT_K = 4
"""Nearest stored facts (by search) looked at for each new fact."""
PAIRS_PER_FACT = 3
"""At most this many stored facts paired with one new fact (the same person's, nearest by
embedding first; see :mod:`..supersession.updates`)."""
MAX_PAIRS = 8
"""Pairs asked about in one call (more pairs take more calls)."""
UPDATE_TOKENS_BASE = 24
"""Output cap of an update check call, plus ``UPDATE_TOKENS_PER_PAIR`` per listed pair."""
UPDATE_TOKENS_PER_PAIR = 20
"""One verdict, ``{"pair": "p1", "outdated": true}``, with room to spare."""


def _filed_under(log: StepLog, ctx: MemoryContext, person: str) -> list[str]:
    """The subjects the namespace's facts are filed under that name ``person``."""
    try:
        filed = log.deps.store.lexical_index("fact", ctx.namespace).distinct("subject", 512)
    except Exception:  # no index: only the exact subject is looked up
        filed = []
    named = [s for s in filed if isinstance(s, str) and same_person(s, person)]
    return list(dict.fromkeys([person, *named]))


def _nearest_of_person(
    log: StepLog, ctx: MemoryContext, fact: FactRecord, exclude: int
) -> dict[str, tuple[FactRecord, float]]:
    """The current stored facts about ``fact``'s person, nearest to it by embedding first.

    Each with its cosine similarity to ``fact``.
    """
    if not fact.subject:
        return {}
    hits = log.deps.store.search(
        fact.text,
        "fact",
        ctx.namespace,
        k=CONFLICT_K + exclude,
        where={"superseded": False, "subject": _filed_under(log, ctx, fact.subject)},
        mode="dense",
    )
    return {
        h.record.id: (h.record, h.channel_scores.get("dense", 0.0))
        for h in hits
        if isinstance(h.record, FactRecord)
    }


def _said_at(log: StepLog, ctx: MemoryContext) -> Callable[[FactRecord], datetime]:
    """When a stored fact was said: its newest source turn (else its event time).

    A plan said in March for September can be replaced by anything said after March.
    """
    known: dict[str, datetime] = {}

    def said(fact: FactRecord) -> datetime:
        if fact.id not in known:
            turns = log.deps.store.get("raw", ctx.namespace, fact.source_ids)
            times = [t.occurred_at for t in turns]
            known[fact.id] = max(times) if times else fact.event_time()
        return known[fact.id]

    return said


def _own_words(log: StepLog, ctx: MemoryContext, new: list[FactRecord]) -> dict[str, list[str]]:
    """Per new fact, the texts of its source turns that its own person spoke."""
    ids = list(dict.fromkeys(s for f in new for s in f.source_ids))
    stored = log.deps.store.get("raw", ctx.namespace, ids) if ids else []
    turns = {t.id: t for t in stored if isinstance(t, RawTurn)}
    return {
        f.id: [
            t.text
            for s in f.source_ids
            if (t := turns.get(s)) is not None and same_person(t.speaker, f.subject)
        ]
        for f in new
    }


def _stored_for(log: StepLog, ctx: MemoryContext, new: list[FactRecord]) -> list[FactRecord]:
    """Current stored facts the slot pre-filter looks at: the nearest by search first.

    Then the current facts filed under the new facts' people, newest first.
    """
    store, ns = log.deps.store, ctx.namespace
    nearest: dict[str, FactRecord] = {}
    for fact in new:
        for hit in store.search(fact.text, "fact", ns, k=CONFLICT_K, where={"superseded": False}):
            if isinstance(hit.record, FactRecord):
                nearest.setdefault(hit.record.id, hit.record)
    people = list(dict.fromkeys(f.subject for f in new if f.subject))
    subjects = list(dict.fromkeys(s for p in people for s in _filed_under(log, ctx, p)))
    theirs = (
        store.get("fact", ns, where={"superseded": False, "subject": subjects}) if subjects else []
    )
    by_person = sorted(
        (f for f in theirs if isinstance(f, FactRecord)), key=FactRecord.event_time, reverse=True
    )
    return list({f.id: f for f in [*nearest.values(), *by_person]}.values())


def _cued(
    log: StepLog, ctx: MemoryContext, new: list[FactRecord], per_fact: int
) -> tuple[list[Conflict], list[CandidatePair]]:
    """The small-model profile: English slot pairs, settled by cues where they can be.

    Returns the cued conflicts and the pairs left for the model: uncued slot pairs whose
    newer fact has some word of change (:func:`~..supersession.update_cues.may_change`). A
    pair whose hedge only the model wrote is settled by the person's own words or not at all.
    """
    said = _own_words(log, ctx, new)
    plain = plainly_said(new, said)
    pairs = slot_pairs(
        new,
        _stored_for(log, ctx, new),
        per_fact=per_fact,
        said_at=_said_at(log, ctx),
        plain=plain,
    )
    conflicts: list[Conflict] = []
    asked: list[CandidatePair] = []
    seen: set[str] = set()
    for pair in pairs:
        cue = pair_cue(pair, said.get(pair.new.id, ()))
        if cue is None and pair.new.id in plain:
            log.count("update_pair_hedged")  # the model's hedge: only the turns could cue it
        elif cue is None and not may_change(pair):
            log.count("update_pair_skipped")
        elif cue is None:
            asked.append(CandidatePair(pair.new, pair.old, pair.person, pair.slot_words()))
        elif pair.old.id not in seen:
            seen.add(pair.old.id)
            log.count(f"update_cue:{cue.kind}")
            reason = f"{pair.person}: the newer fact says {cue.phrase!r} ({pair.slot_words()})"
            conflicts.append(Conflict(old_id=pair.old.id, new_id=pair.new.id, reason=reason))
    return conflicts, [p for p in asked if p.old.id not in seen]


def _pairs_text(pairs: list[CandidatePair], tz: ZoneInfo) -> tuple[str, dict[str, CandidatePair]]:
    """The pairs as labelled blocks (``[p1]``), and label -> pair."""
    lines, labels = [], {}
    for n, pair in enumerate(pairs, start=1):
        label = f"p{n}"
        labels[label] = pair
        lines += [
            f"[{label}] {data_line(pair.person, 120)}" + (f", {pair.about}" if pair.about else ""),
            f"  OLD ({long_date(pair.old.event_time(), tz)}): {data_line(pair.old.text, 600)}",
            f"  NEW ({long_date(pair.new.event_time(), tz)}): {data_line(pair.new.text, 600)}",
        ]
    return "\n".join(lines), labels


def update_candidates(
    log: StepLog, ctx: MemoryContext, new: list[FactRecord], *, per_fact: int = PAIRS_PER_FACT
) -> list[CandidatePair]:
    """Each new fact paired with the nearest current facts about its person.

    Among each new fact's :data:`CONFLICT_K` nearest, a stored fact is paired with the
    one new fact nearest to it (the first such, on a tie), and a new fact with at most
    ``per_fact`` (:data:`PAIRS_PER_FACT`) stored facts.
    """
    new_ids = {f.id for f in new}
    said = _said_at(log, ctx)
    scored: list[tuple[float, int, CandidatePair]] = []
    for order, fact in enumerate(new):
        nearest = _nearest_of_person(log, ctx, fact, len(new))
        records = [record for record, _ in nearest.values()]
        pairs = candidate_pairs(fact, records, exclude=new_ids, per_fact=len(records), said_at=said)
        scored += [(-nearest[p.old.id][1], order, p) for p in pairs]
    taken: set[str] = set()
    per_new: dict[str, int] = {}
    chosen: list[tuple[int, float, CandidatePair]] = []
    for distance, order, pair in sorted(scored, key=lambda r: (r[0], r[1])):
        if pair.old.id in taken or per_new.get(pair.new.id, 0) >= per_fact:
            continue
        taken.add(pair.old.id)
        per_new[pair.new.id] = per_new.get(pair.new.id, 0) + 1
        chosen.append((order, distance, pair))
    return [pair for _, _, pair in sorted(chosen, key=lambda c: (c[0], c[1]))]


PENDING_KEY = "update_check"
"""Fact metadata: ``"pending"`` while an update check about the fact has failed; the next
run's Judge checks it again with that run's new facts."""
PENDING = "pending"


def flagged(fact: FactRecord) -> FactRecord:
    """``fact`` marked unjudged (:data:`PENDING_KEY`) until its supersessions commit.

    :func:`~.refresher.settle` clears the flag in the same transaction as the
    supersessions, so a failure or a kill in between leaves it for the next run's Judge.
    """
    return fact.model_copy(update={"metadata": {**fact.metadata, PENDING_KEY: PENDING}})


def _pending_ids(log: StepLog, ctx: MemoryContext) -> list[str]:
    """The namespace's current facts whose update check failed in an earlier run."""
    try:
        stored = log.deps.store.get(
            "fact", ctx.namespace, where={f"metadata.{PENDING_KEY}": PENDING}
        )
    except Exception:  # a store that cannot filter: they wait for a later fact to reach them
        return []
    return [f.id for f in stored if isinstance(f, FactRecord) and f.valid_to is None]


def _mark(log: StepLog, ctx: MemoryContext, ids: set[str], pending: bool) -> None:
    """Set or clear the pending flag of the facts ``ids`` (a failure here is recorded)."""
    store = log.deps.store
    for fact in store.get("fact", ctx.namespace, sorted(ids)) if ids else []:
        if not isinstance(fact, FactRecord):
            continue
        meta = dict(fact.metadata)
        if pending:
            meta[PENDING_KEY] = PENDING
        else:
            meta.pop(PENDING_KEY, None)
        if meta != fact.metadata:
            try:
                store.update(ctx.namespace, fact.model_copy(update={"metadata": meta}))
            except Exception as e:  # the flag is a retry hint; the facts themselves stand
                log.fail("conflicts_pending", e)


def check_conflicts(
    log: StepLog,
    ctx: MemoryContext,
    new_ids: list[str],
    failed: set[str] | None = None,
    newer: Collection[str] = (),
    *,
    per_fact: int = PAIRS_PER_FACT,
    max_pairs: int = MAX_PAIRS,
) -> list[Conflict]:
    """The stored facts the new facts update.

    With the update cues (``ctx.small_model``, the small-model profile, or the research arm
    ``update_cues``; :func:`_cued`), English slot pairs
    settled by cues, and the uncued ones with a word of change go to the model. Without
    it, the candidates are :func:`update_candidates` (no word list) and the model decides
    each. No call is made when there are none. The pairs go to the model
    ``max_pairs`` (:data:`MAX_PAIRS`) at a time, in one capped structured call each, and only the
    pairs it confirms are returned. A failed call is recorded in ``log`` and supersedes
    nothing, so both facts stay current; the new facts of its pairs are added to
    ``failed``, so the caller can have them checked again at the next run. The facts in
    ``newer`` are never the older side of a pair (a retried fact is not updated by this
    run's facts through its own check).
    """
    store, ns = log.deps.store, ctx.namespace
    new = [f for f in store.get("fact", ns, new_ids) if isinstance(f, FactRecord)]
    if not new:
        return []
    if log.deps.arms.cues_on(ctx):
        conflicts, asked = _cued(log, ctx, new, per_fact)
    else:
        conflicts, asked = [], update_candidates(log, ctx, new, per_fact=per_fact)
    conflicts = [c for c in conflicts if c.old_id not in newer]
    asked = [p for p in asked if p.old.id not in newer]
    seen = {c.old_id for c in conflicts}
    for start in range(0, len(asked), max_pairs):
        chunk = asked[start : start + max_pairs]
        text, labels = _pairs_text(chunk, ctx.tz)
        capped = capped_log(
            JUDGE, log.deps, UPDATE_TOKENS_BASE + UPDATE_TOKENS_PER_PAIR * len(chunk)
        )
        try:
            report = capped.ask(
                SupersessionCheck, UPDATE_CHECK.format_messages(pairs=text), "conflicts"
            )
        finally:
            log.calls.extend(capped.calls)
            log.failures.extend(capped.failures)
        if report is None and failed is not None:
            failed.update(p.new.id for p in chunk)
        for verdict in report.verdicts if report is not None else []:
            confirmed = labels.get(verdict.pair.strip().strip("[]"))
            if confirmed is None or not verdict.outdated or confirmed.old.id in seen:
                continue
            seen.add(confirmed.old.id)
            change = f"updates {confirmed.about}" if confirmed.about else "replaces the older one"
            reason = f"{confirmed.person}: the newer fact {change}"
            conflicts.append(
                Conflict(old_id=confirmed.old.id, new_id=confirmed.new.id, reason=reason)
            )
    return conflicts


def judge_facts(
    log: StepLog, ctx: MemoryContext, new_ids: list[str], *, settled: set[str] | None = None
) -> list[Conflict]:
    """The stored facts that the facts ``new_ids`` (just written) update.

    The facts whose check failed in an earlier run are checked again after the new ones,
    in a check of their own so the new ones may update them. A fact whose check fails
    now is flagged (:data:`PENDING_KEY`) for the next run, and the flag is cleared once
    its check has gone through; given ``settled``, the ids to clear are put there
    instead, for the caller to clear in the same transaction as the supersessions (the
    Constructor writes its facts flagged, :func:`~.refresher.settle`). A store or model
    failure is recorded in ``log`` and supersedes nothing.
    """
    waiting = set(_pending_ids(log, ctx)) if new_ids else set()
    failed: set[str] = set()
    try:
        conflicts = check_conflicts(log, ctx, new_ids, failed) if new_ids else []
        if waiting:  # apart, so this run's new facts can still update them
            retried = sorted(waiting - set(new_ids))
            again = check_conflicts(log, ctx, retried, failed, newer=set(new_ids))
            seen = {c.old_id for c in conflicts}
            conflicts += [c for c in again if c.old_id not in seen]
    except Exception as e:  # never crash the graph on a store or model failure
        log.fail("conflicts", e)
        conflicts, failed = [], set(new_ids) | waiting
    _mark(log, ctx, failed, pending=True)
    if settled is None:
        _mark(log, ctx, waiting - failed, pending=False)
    else:
        settled.update(waiting - failed)
    return conflicts


def make_judge(deps: NodeDeps) -> Callable[..., dict[str, Any]]:
    """Build the ``judge`` node."""

    def judge(state: IngestState, runtime: Runtime[MemoryContext]) -> dict[str, Any]:
        """Flag stored facts that the facts written in this run contradict (:func:`judge_facts`)."""
        log = StepLog(JUDGE, deps)
        settled: set[str] = set()
        new_ids = list(state.get("new_fact_ids", []))
        conflicts = judge_facts(log, context_of(runtime), new_ids, settled=settled)
        return {"conflicts": conflicts, "settled_fact_ids": sorted(settled), **log.update()}

    return judge
