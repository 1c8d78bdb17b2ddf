"""The Judge node on the write path: which stored facts the new facts update.

It flags contradictions between new facts and the facts already stored (AMA's conflict
detection); the Refresher (:mod:`.refresher`) supersedes them. Candidate pairs come from
the slot pre-filter (:mod:`.slots`); a pair whose newer fact states the change in so many
words (:mod:`.update_cues`) needs no model call.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from langgraph.runtime import Runtime

from ...core.context import MemoryContext, context_of
from ...core.nodes import JUDGE
from ...core.state import Conflict, IngestState
from ...prompts.construction import UPDATE_CHECK
from ...records.model import FactRecord, RawTurn
from ..common.deps import NodeDeps, StepLog
from ..common.formatting import data_line, long_date
from ..common.token_caps import capped_log
from .schemas import SupersessionCheck
from .slots import CandidatePair, candidate_pairs, event_time, same_person
from .update_cues import may_change, pair_cue, plainly_said

UPDATE_TOKENS_BASE = 24
"""Output cap of an update check call, plus ``UPDATE_TOKENS_PER_PAIR`` per listed pair."""
UPDATE_TOKENS_PER_PAIR = 20
"""One verdict, ``{"pair": "p1", "outdated": true}``, with room to spare."""


def _filed_under(log: StepLog, ctx: MemoryContext, people: list[str]) -> list[str]:
    """The subjects the namespace's facts are filed under that name one of ``people``."""
    try:
        filed = log.deps.store.lexical_index("fact", ctx.namespace).distinct("subject", 512)
    except Exception:  # no index: only the exact subjects are looked up
        filed = []
    named = [s for s in filed if isinstance(s, str) and any(same_person(s, p) for p in people)]
    return list(dict.fromkeys([*people, *named]))


def _stored_for(log: StepLog, ctx: MemoryContext, new: list[FactRecord]) -> list[FactRecord]:
    """Current stored facts the new facts may update, the nearest by search first.

    Then the current facts filed under the new facts' people (names matched leniently),
    newest first.
    """
    store, ns = log.deps.store, ctx.namespace
    nearest: dict[str, FactRecord] = {}
    for fact in new:
        for hit in store.search(
            fact.text, "fact", ns, k=ctx.conflict_k, where={"superseded": False}
        ):
            if isinstance(hit.record, FactRecord):
                nearest.setdefault(hit.record.id, hit.record)
    subjects = _filed_under(log, ctx, [f.subject for f in new if f.subject])
    theirs = (
        store.get("fact", ns, where={"superseded": False, "subject": subjects}) if subjects else []
    )
    by_person = sorted(
        (f for f in theirs if isinstance(f, FactRecord)), key=event_time, reverse=True
    )
    return list({f.id: f for f in [*nearest.values(), *by_person]}.values())


def _said_at(log: StepLog, ctx: MemoryContext) -> Callable[[FactRecord], datetime]:
    """When a stored fact was said: its newest source turn (else its event time).

    A plan said in March for September can be replaced by anything said after March.
    """
    known: dict[str, datetime] = {}

    def said(fact: FactRecord) -> datetime:
        if fact.id not in known:
            turns = log.deps.store.get("raw", ctx.namespace, fact.source_ids)
            times = [t.occurred_at for t in turns]
            known[fact.id] = max(times) if times else event_time(fact)
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


def _pairs_text(pairs: list[CandidatePair], tz: ZoneInfo) -> tuple[str, dict[str, CandidatePair]]:
    """The pairs as labelled blocks (``[p1]``), and label -> pair."""
    lines, labels = [], {}
    for n, pair in enumerate(pairs, start=1):
        label = f"p{n}"
        labels[label] = pair
        lines += [
            f"[{label}] {data_line(pair.person, 120)}, {pair.slot_words()}",
            f"  OLD ({long_date(event_time(pair.old), tz)}): {data_line(pair.old.text, 600)}",
            f"  NEW ({long_date(event_time(pair.new), tz)}): {data_line(pair.new.text, 600)}",
        ]
    return "\n".join(lines), labels


def check_conflicts(log: StepLog, ctx: MemoryContext, new_ids: list[str]) -> list[Conflict]:
    """The stored facts the new facts update; the model is asked about candidate pairs only.

    The slot pre-filter (:func:`~lamina.agents.slots.candidate_pairs`) pairs a new fact
    with current facts about the same person's same slot; no call is made when there is
    no such pair. A pair whose newer fact states the change in so many words, or whose
    newer fact's person said so in its source turns when the model's wording lost it (an
    update cue, :func:`~lamina.agents.update_cues.pair_cue`; ``ctx.update_cues``), is an
    update without a call, counted in ``log.checks``. A hedged newer fact is paired only
    when its person said it without a hedge, and then only those words can cue it
    (:func:`~lamina.agents.update_cues.plainly_said`; counted as ``update_pair_hedged``
    when they do not). Of the other pairs, those whose
    newer fact has no word of change at all are skipped (unless
    ``ctx.update_check_all_pairs``; counted as ``update_pair_skipped``). The rest go to
    the model ``conflict_max_pairs`` at a time, in one capped structured call each, and only the
    pairs it confirms are returned. A failed call is recorded in ``log`` and supersedes
    nothing, so both facts stay current.
    """
    store, ns = log.deps.store, ctx.namespace
    new = [f for f in store.get("fact", ns, new_ids) if isinstance(f, FactRecord)]
    if not new:
        return []
    said = _own_words(log, ctx, new) if ctx.update_cues else {}
    plain = plainly_said(new, said)
    pairs = candidate_pairs(
        new,
        _stored_for(log, ctx, new),
        per_fact=ctx.conflict_pairs_per_fact,
        said_at=_said_at(log, ctx),
        plain=plain,
    )
    conflicts: list[Conflict] = []
    seen: set[str] = set()
    asked: list[CandidatePair] = []
    for pair in pairs:
        cue = pair_cue(pair, said.get(pair.new.id, ())) if ctx.update_cues else None
        if cue is None and pair.new.id in plain:
            log.count("update_pair_hedged")  # the model's hedge: only the turns could cue it
        elif cue is None:
            asked.append(pair)
        elif pair.old.id not in seen:
            seen.add(pair.old.id)
            log.count(f"update_cue:{cue.kind}")
            reason = f"{pair.person}: the newer fact says {cue.phrase!r} ({pair.slot_words()})"
            conflicts.append(Conflict(old_id=pair.old.id, new_id=pair.new.id, reason=reason))
    asked = [p for p in asked if p.old.id not in seen]
    if ctx.update_cues and not ctx.update_check_all_pairs:
        kept = [p for p in asked if may_change(p)]
        for _ in range(len(asked) - len(kept)):
            log.count("update_pair_skipped")
        asked = kept
    for start in range(0, len(asked), ctx.conflict_max_pairs):
        chunk = asked[start : start + ctx.conflict_max_pairs]
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
        for verdict in report.verdicts if report is not None else []:
            confirmed = labels.get(verdict.pair.strip().strip("[]"))
            if confirmed is None or not verdict.outdated or confirmed.old.id in seen:
                continue
            seen.add(confirmed.old.id)
            reason = f"{confirmed.person}: the newer fact updates {confirmed.slot_words()}"
            conflicts.append(
                Conflict(old_id=confirmed.old.id, new_id=confirmed.new.id, reason=reason)
            )
    return conflicts


def make_judge(deps: NodeDeps) -> Callable[..., dict[str, Any]]:
    """Build the ``judge`` node."""

    def judge(state: IngestState, runtime: Runtime[MemoryContext]) -> dict[str, Any]:
        """Flag stored facts that the facts written in this run contradict."""
        log = StepLog(JUDGE, deps)
        ctx = context_of(runtime)
        try:
            conflicts = check_conflicts(log, ctx, list(state.get("new_fact_ids", [])))
        except Exception as e:  # never crash the graph on a store or model failure
            log.fail("conflicts", e)
            conflicts = []
        return {"conflicts": conflicts, **log.update()}

    return judge
