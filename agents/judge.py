"""The Judge node, on both paths.

Write path: flags contradictions between new facts and the facts already stored (AMA's
conflict detection); the Refresher supersedes them. Read path: one structured call
returns the sufficiency of the context (EverMemOS's check), what is missing, the
memories that contradict each other (AMA's Refresh) and a draft answer; when the context
suffices, the answer node returns that draft without a second call.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from langgraph.runtime import Runtime

from ..core.context import MemoryContext, context_of
from ..core.nodes import JUDGE
from ..core.state import Candidate, Conflict, IngestState, RecallState, RecallVerdict
from ..prompts.construction import UPDATE_CHECK
from ..prompts.recall import ANSWER_HINTS, JUDGE_ANSWER
from ..stores.records import FactRecord
from .attribution import ungrounded_person, unsupported_person
from .deps import NodeDeps, StepLog
from .formatting import as_data, data_line, long_date
from .premise import ForeignTopic, foreign_answer, foreign_topic, premise_found
from .premise_owner import other_owner
from .query_analysis import QueryAnalysis
from .recall_context import render_for
from .recall_schemas import DraftFirst, JudgedAnswer, is_refusal_text
from .schemas import SupersessionCheck
from .slots import CandidatePair, candidate_pairs, event_time, same_person
from .token_caps import capped_log
from .update_cues import may_change, update_cue

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
    no such pair. A pair whose newer fact states the change in so many words (an update
    cue, :mod:`~lamina.agents.update_cues`; ``ctx.update_cues``) is an update without a
    call, counted in ``log.checks``. Of the other pairs, those whose newer fact has no
    word of change at all are skipped (unless ``ctx.update_check_all_pairs``; counted as
    ``update_pair_skipped``). The rest go to the model
    ``conflict_max_pairs`` at a time, in one capped structured call each, and only the
    pairs it confirms are returned. A failed call is recorded in ``log`` and supersedes
    nothing, so both facts stay current.
    """
    store, ns = log.deps.store, ctx.namespace
    new = [f for f in store.get("fact", ns, new_ids) if isinstance(f, FactRecord)]
    if not new:
        return []
    pairs = candidate_pairs(
        new,
        _stored_for(log, ctx, new),
        per_fact=ctx.conflict_pairs_per_fact,
        said_at=_said_at(log, ctx),
    )
    conflicts: list[Conflict] = []
    seen: set[str] = set()
    asked: list[CandidatePair] = []
    for pair in pairs:
        cue = update_cue(pair) if ctx.update_cues else None
        if cue is None:
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


JUDGE_SCHEMAS: dict[str, type[JudgedAnswer] | type[DraftFirst]] = {
    "verdict_first": JudgedAnswer,
    "answer_first": DraftFirst,
}
"""The combined call's schema per ``MemoryContext.judge_order`` (same fields, other order)."""


def verdict_of(
    judged: JudgedAnswer | DraftFirst, labels: dict[str, str], round_: int
) -> RecallVerdict:
    """The state's verdict from the combined call's reply (labels mapped to ids).

    A "sufficient" verdict whose draft is empty or itself a refusal is not sufficient:
    a refusal gets a retry with rewritten queries before it stands.
    """
    refusal = not judged.answer or is_refusal_text(judged.answer)
    return RecallVerdict(
        status="judged",
        sufficient=judged.sufficient and not refusal,
        missing=judged.missing or ("" if judged.sufficient and not refusal else "the answer"),
        answer="" if refusal else judged.answer,
        refusal=refusal,
        cited_ids=[labels[x] for x in judged.cited if x in labels],
        conflicting_ids=list(dict.fromkeys(labels[x] for x in judged.conflicting if x in labels)),
        round=round_,
    )


def _attributed(
    verdict: RecallVerdict,
    analysis: QueryAnalysis,
    question: str,
    candidates: list[Candidate],
    doubted: bool,
    ask_owner: Callable[[ForeignTopic], str | None] | None = None,
) -> RecallVerdict:
    """The verdict, no longer sufficient when the draft rests on someone else's words.

    Its citations are all other people's turns, or the memories that best match its
    answer are (see :mod:`.attribution`), or the turns best matching the question's
    topic are about someone else and so are those best matching the answer, or, asked
    with ``ask_owner``, the model names someone else as the topic's owner (see
    :mod:`.premise`, :mod:`.premise_owner`). ``doubted``: an earlier round's premise
    failed; then only a turn tying the person to the topic lifts it.
    """
    by_id = {c.id: c for c in candidates}
    person = unsupported_person(
        analysis, [by_id[i] for i in verdict.cited_ids if i in by_id]
    ) or ungrounded_person(analysis, verdict.answer, candidates)
    premise_failed = False
    if person is None:
        if doubted:
            premise_failed = not premise_found(analysis, question, candidates)
            person = analysis.persons[0] if premise_failed else None
        else:
            person = _unfounded(analysis, question, verdict.answer, candidates, ask_owner)
            premise_failed = person is not None
    if person is None:
        return verdict
    return verdict.model_copy(
        update={
            "sufficient": False,
            "missing": f"what {person} said about it",
            "unsupported_person": person,
            "premise_failed": premise_failed,
        }
    )


def _unfounded(
    analysis: QueryAnalysis,
    question: str,
    answer: str,
    candidates: list[Candidate],
    ask_owner: Callable[[ForeignTopic], str | None] | None,
) -> str | None:
    """The person whose premise fails, or None.

    It fails when the topic test fires and so does the answer test, or the model names
    another speaker as the subject's owner.
    """
    foreign = foreign_topic(analysis, question, candidates)
    if foreign is None:
        return None
    if foreign_answer(foreign, answer):
        return foreign.person
    if ask_owner is not None and ask_owner(foreign) is not None:
        return foreign.person
    return None


def _owner_question(
    deps: NodeDeps, log: StepLog, ctx: MemoryContext, question: str
) -> Callable[[ForeignTopic], str | None]:
    """The premise owner call, capped at ``premise_max_tokens``, recorded in ``log``."""

    def ask(foreign: ForeignTopic) -> str | None:
        capped = capped_log(JUDGE, deps, ctx.premise_max_tokens)
        try:
            return other_owner(capped, foreign, question)
        finally:
            log.calls.extend(capped.calls)
            log.failures.extend(capped.failures)

    return ask


def make_recall_judge(deps: NodeDeps) -> Callable[..., dict[str, Any]]:
    """Build the recall ``judge`` node: sufficiency and a draft answer in one call."""

    def judge(state: RecallState, runtime: Runtime[MemoryContext]) -> dict[str, Any]:
        """Judge the context and draft the answer (one capped structured call).

        With no memories at all there is nothing to judge: the verdict is insufficient
        without a call, so the graph retries with rewritten queries before refusing.
        """
        ctx = context_of(runtime)
        log = capped_log(JUDGE, deps, ctx.judge_max_tokens)
        candidates = state.get("candidates", [])
        analysis = QueryAnalysis.model_validate(state.get("analysis") or {})
        verdict = RecallVerdict(round=state.get("rounds", 0))
        if not candidates:
            verdict.status, verdict.missing = "empty", "no memories found"
        else:
            memories, labels = render_for(candidates, ctx)
            messages = JUDGE_ANSWER.format_messages(
                memories=memories,
                question=as_data(state.get("question", "")),
                hint=ANSWER_HINTS[analysis.question_type],
            )
            judged = log.ask(JUDGE_SCHEMAS[ctx.judge_order], messages, "judge_answer")
            if judged is None:  # malformed or failed: the answer node asks plainly
                verdict.status = "failed"
            else:
                verdict = verdict_of(judged, labels, verdict.round)
                if ctx.attribution_check and verdict.sufficient:
                    question = state.get("question", "")
                    doubted = any(v.get("premise_failed") for v in state.get("verdicts", []))
                    ask = (
                        _owner_question(deps, log, ctx, question)
                        if ctx.premise_owner_check
                        else None
                    )
                    verdict = _attributed(verdict, analysis, question, candidates, doubted, ask)
        decided = verdict.model_dump()
        return {"verdict": decided, "verdicts": [decided], **log.update()}

    return judge
