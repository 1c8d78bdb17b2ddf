"""The steps of ``lamina demo``: build the memory, answer, update a fact, forget.

Every step goes through the public :class:`~lamina.Memory` API, prints what it did
with the elapsed time, and says plainly when the model left something out (no fact to
update, a refusal): the demo shows the real model's work, never a scripted stand-in.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from ..memory import Memory
from ..memory.results import AddResult, MemoryHit
from ..records.model import EpisodeRecord, FactRecord, MemoryRecord, RawTurn
from ..samples import TourForget, TourUpdate, sample_sessions
from .common import one_line, report_failures
from .demo_progress import Progress

WIDTH = 110
"""Detail lines are cut to this many characters."""
SHOWN_HITS = 3
"""Search hits printed per search."""


@dataclass(frozen=True)
class Supersession:
    """A fact replaced by a newer one, and who replaced it."""

    old_id: str
    new_id: str | None
    by: str


def day(when: datetime) -> str:
    """``16 March 2024``."""
    return f"{when.day} {when:%B %Y}"


def counts_line(memory: Memory, namespace: str) -> str:
    """``memory: 7 raw turns → 5 facts → 2 episodes (1 scene)``; superseded facts not counted."""

    def n(gran: str, word: str) -> str:
        count = len(memory.get_all(namespace=namespace, granularities=[gran]))
        return f"{count} {word}{'' if count == 1 else 's'}"

    return (
        f"  memory: {n('raw', 'raw turn')} → {n('fact', 'fact')} → "
        f"{n('episode', 'episode')} ({n('scene', 'scene')})"
    )


def _records(memory: Memory, namespace: str, gran: str, ids: Sequence[str]) -> list[MemoryRecord]:
    return memory.store.get(gran, namespace, list(ids)) if ids else []


def _llm_cost(result: AddResult | Any, seconds: float) -> str:
    usage = result.usage
    calls = f"{usage.calls} LLM call{'' if usage.calls == 1 else 's'}"
    if usage.calls and usage.unreported_calls < usage.calls:
        calls += f", {usage.prompt_tokens} prompt + {usage.completion_tokens} completion tokens"
    return f"{calls}, {seconds:.1f} s"


def labelled(label: str, text: str) -> str:
    """``text`` on one line after a label padded to a column, cut to :data:`WIDTH`."""
    return f"{label:<8} {one_line(text, WIDTH)}"


# ------------------------------------------------------------------------- build
def build_memory(
    memory: Memory, namespace: str, data: dict[str, Any], progress: Progress
) -> list[Supersession]:
    """Add the sample turn by turn; each session's last turn closes it (consolidation).

    Returns the facts the Judge and the Refresher superseded while building.
    """
    superseded: list[Supersession] = []
    first = True
    for session, turns in sample_sessions(namespace, data):
        for n, turn in enumerate(turns):
            closing = n == len(turns) - 1
            started = time.monotonic()
            if first and memory.chat_model_source == "local":
                with progress.waiting(
                    "loading the offline model (Qwen2.5-Coder-1.5B, llama.cpp in-process; "
                    "about a minute on 2 cores)",
                    short="still loading the model",
                ):
                    result = _add(memory, namespace, session, turn, closing=False)
                loaded = getattr(memory.local_server, "startup_seconds", None)
                took = f" in {loaded:.1f} s" if isinstance(loaded, float) else ""
                progress.line(f"  model ready{took}")
            elif closing:
                with progress.waiting(
                    f"the last turn of {session} closes it: the model writes the session's "
                    "episode and facts in one call",
                    short=f"the model is still consolidating {session}",
                ):
                    result = _add(memory, namespace, session, turn, closing=True)
            else:
                result = _add(memory, namespace, session, turn, closing=False)
            first = False
            _show_raw(memory, namespace, result, progress)
            if closing:
                superseded += _show_consolidation(
                    memory, namespace, session, result, time.monotonic() - started, progress
                )
    return superseded


def _add(
    memory: Memory, namespace: str, session: str, turn: dict[str, Any], *, closing: bool
) -> AddResult:
    return memory.add(turn, namespace=namespace, session_id=session, session_closed=closing)


def _show_raw(memory: Memory, namespace: str, result: AddResult, progress: Progress) -> None:
    for record in _records(memory, namespace, "raw", result.new_raw_ids):
        if isinstance(record, RawTurn):
            progress.line("  " + labelled("raw", f"{record.speaker}: {record.display_text()}"))


def _show_consolidation(
    memory: Memory,
    namespace: str,
    session: str,
    result: AddResult,
    seconds: float,
    progress: Progress,
) -> list[Supersession]:
    made: dict[str, list[str]] = {}
    for written in result.written:
        made.setdefault(f"{written.granularity}:{written.action}", []).append(written.id)
    new_facts = made.get("fact:created", [])
    episodes = made.get("episode:created", []) + made.get("episode:merged", [])
    progress.line(
        f"  {session} consolidated: +{len(episodes)} episode(s), +{len(new_facts)} fact(s) "
        f"({_llm_cost(result, seconds)})"
    )
    for record in _records(memory, namespace, "episode", episodes):
        if isinstance(record, EpisodeRecord):
            progress.detail(labelled("episode", f"{record.title}: {record.text}"))
    for record in _records(memory, namespace, "fact", new_facts):
        if isinstance(record, FactRecord):
            who = f"[{record.subject}] " if record.subject else ""
            progress.detail(labelled("fact", f"{who}{record.text}"))
    if result.model_error:
        progress.detail(f"no model reached: {one_line(result.model_error, WIDTH)}")
    report_failures(result.failures)
    superseded = []
    for old in _records(memory, namespace, "fact", made.get("fact:superseded", [])):
        if isinstance(old, FactRecord):
            superseded.append(
                Supersession(
                    old.id, old.superseded_by, "the Judge (conflict check) and the Refresher"
                )
            )
            progress.detail(labelled("changed", f"the Judge superseded: {old.text}"))
    progress.line(counts_line(memory, namespace))
    return superseded


# ------------------------------------------------------------------------ answer
def ask(memory: Memory, namespace: str, question: str, progress: Progress) -> None:
    """Answer through the recall graph; show the answer and the memories it cites."""
    progress.line(f"  ? {question}")
    started = time.monotonic()
    with progress.waiting(
        "the recall graph retrieves, judges and answers", short="the model is still answering"
    ):
        result = memory.answer(question, namespace=namespace)
    seconds = time.monotonic() - started
    shown = "(no answer in memory)" if result.refused else result.answer
    progress.line(f"  answer: {shown}")
    rounds = f"{result.rounds} round{'' if result.rounds == 1 else 's'}"
    progress.detail(f"{rounds}, {_llm_cost(result, seconds)}")
    cited = [hit for hit in result.memories if hit.id in set(result.citations)]
    if not cited:
        progress.detail("cites no memory")
    for hit in cited:
        progress.detail(labelled("cites", _hit_text(hit)))
    report_failures(result.failures)


def _hit_text(hit: MemoryHit) -> str:
    who = f"{hit.speaker}: " if hit.speaker else ""
    return f"{hit.granularity} of {day(hit.occurred_at)}, {who}{hit.text}"


# ------------------------------------------------------------------------ update
def update(
    memory: Memory,
    namespace: str,
    plan: TourUpdate,
    superseded: Sequence[Supersession],
    progress: Progress,
) -> None:
    """Show a fact superseded while building, or supersede one with ``Memory.update``."""
    change: Supersession | None
    if superseded:
        progress.line("  the conversation changed a fact, and the ingest graph noticed:")
        change = superseded[0]
    else:
        change = _update_by_hand(memory, namespace, plan, progress)
    if change is None:
        return
    found = _records(memory, namespace, "fact", [change.old_id, change.new_id or ""])
    facts = {f.id: f for f in found if isinstance(f, FactRecord)}
    old, new = facts.get(change.old_id), facts.get(change.new_id or "")
    if old is None:
        progress.detail("the superseded fact is no longer stored")
        return
    until = f"valid until {day(old.valid_to)}" if old.valid_to else "closed"
    progress.detail(labelled("old", f"{old.text} ({until}; kept for history)"))
    if new is not None:
        progress.detail(labelled("new", new.text))
    progress.detail(labelled("by", change.by))
    marks = {old.id: "old", change.new_id or "": "new"}
    progress.detail(f"search {plan.query!r} among current facts:")
    _show_facts(_found_facts(memory, namespace, plan.query, None), marks, progress)
    if old.valid_to is not None:
        before = old.valid_to - timedelta(seconds=1)
        progress.detail(f"the same search as_of {day(before)} {before:%H:%M}, before the change:")
        _show_facts(_found_facts(memory, namespace, plan.query, before), marks, progress)


def _update_by_hand(
    memory: Memory, namespace: str, plan: TourUpdate, progress: Progress
) -> Supersession | None:
    facts = memory.get_all(namespace=namespace, granularities=["fact"])
    target = next((f for f in facts if plan.find.casefold() in f.text.casefold()), None)
    if target is None:
        hits = memory.search(plan.query, namespace=namespace, granularities=["fact"], k=1)
        target = next((f for f in facts if hits and f.id == hits[0].id), None)
    if target is None:
        progress.line("  the model wrote no fact to update, so this step is skipped")
        return None
    progress.line(
        f"  no fact was contradicted while building; the application updates one itself: "
        f"memory.update({target.id[:8]}…, new text)"
    )
    result = memory.update(target.id, plan.text, namespace=namespace)
    return Supersession(result.previous_id, result.id, "Memory.update, called by the application")


def _found_facts(
    memory: Memory, namespace: str, query: str, as_of: datetime | None
) -> list[MemoryHit]:
    """The facts a search finds: current ones, or those valid ``as_of``."""
    return memory.search(query, namespace=namespace, granularities=["fact"], k=10, as_of=as_of)


def _show_facts(hits: list[MemoryHit], marks: dict[str, str], progress: Progress) -> None:
    """The top three hits, and where the marked versions rank if lower or absent."""
    shown = hits[:SHOWN_HITS]
    for n, hit in enumerate(shown, start=1):
        progress.detail(labelled(f"  {n} {marks.get(hit.id, '')}", hit.text))
    ranks = {hit.id: n for n, hit in enumerate(hits, start=1)}
    for fact_id, name in marks.items():
        if fact_id and fact_id not in {h.id for h in shown}:
            where = f"hit {ranks[fact_id]}" if fact_id in ranks else "not found"
            progress.detail(f"  the {name} fact is {where}")


# ------------------------------------------------------------------------ forget
def forget(memory: Memory, namespace: str, plan: TourForget, progress: Progress) -> None:
    """Forget every memory mentioning the subject; show search before and after."""
    needle = plan.subject.casefold()
    before = _mentioning(memory, namespace, plan.query, needle)
    progress.line(f"  {plan.why}. Search {plan.query!r} finds {len(before)} mentioning it:")
    for hit in before[:3]:
        progress.detail(labelled("found", _hit_text(hit)))
    result = memory.forget(namespace=namespace, subject=plan.subject)
    deleted = ", ".join(f"{len(ids)} {g}" for g, ids in sorted(result.deleted.items()) if ids)
    progress.line(
        f"  memory.forget(subject={plan.subject!r}) deleted {deleted or 'nothing'}; "
        "the tombstone keeps ids and counts, never the text"
    )
    after = _mentioning(memory, namespace, plan.query, needle)
    if after:
        progress.detail(f"search still finds {len(after)} mentioning it:")
        for hit in after[:3]:
            progress.detail(labelled("found", _hit_text(hit)))
    else:
        progress.detail(f"search {plan.query!r} now: nothing mentions {plan.subject!r}")
    progress.line(counts_line(memory, namespace))


def _mentioning(memory: Memory, namespace: str, query: str, needle: str) -> list[MemoryHit]:
    hits = memory.search(query, namespace=namespace, k=10)
    return [h for h in hits if needle in h.text.casefold()]


__all__ = ["Supersession", "ask", "build_memory", "counts_line", "forget", "update"]
