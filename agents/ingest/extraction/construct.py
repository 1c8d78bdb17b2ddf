"""What a construction draft becomes: facts with source, owner and date; the episode text.

The draft comes from one model call (:mod:`.drafting`). Dates are the parser's, not the
model's: facts are resolved against their source turn's date, and a date the model
wrote that contradicts the turn's resolved date is replaced.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime
from datetime import time as clock_time

from ....core.context import MemoryContext
from ....records.model import (
    ROLE_KEY,
    FactRecord,
    MetadataValue,
    RawTurn,
    TimeRef,
    annotate_times,
)
from ...common.deps import StepLog
from ...common.formatting import SENTENCE_BREAK
from ...common.lexicon import MONTHS_EN
from ...common.refinement import fact_id
from ...common.timeparse import reference_day, resolve_times
from ..evidence.questions import answer_to, only_asked
from ..evidence.support import (
    SOURCE_MARGIN,
    SUPPORT_THRESHOLD,
    content_terms,
    support_ratio,
    supported,
)
from ..ownership.owner_check import checked_owner
from ..ownership.present import present_owner
from ..ownership.relations import named_relations, pet_keepers, relation_records
from ..ownership.reported import owned_summary
from ..ownership.titles import owned_title, voiced_summary
from ..schemas import ConstructionDraft, FactLine
from .example_leaks import copies_example, cut_unsaid_relations
from .kinds import checked_kind
from .split_notes import split_note

_MONTH = rf"(?:{'|'.join(m.capitalize() for m in MONTHS_EN)})"
_DATE_TEXT = re.compile(
    rf"\b\d{{1,2}}(?:st|nd|rd|th)? {_MONTH},? \d{{4}}\b|\b{_MONTH} \d{{1,2}}(?:st|nd|rd|th)?,? "
    r"\d{4}\b|\b\d{4}-\d{2}-\d{2}\b"
)
"""An absolute date as a model writes one: 14 July 2023, July 14th, 2023, 2023-07-14."""


def _at(day: date, ctx: MemoryContext) -> datetime:
    return datetime.combine(day, clock_time(), ctx.tz).astimezone(UTC)


def resolve_statement(
    statement: str, turns: list[RawTurn], anchor: date
) -> tuple[str, TimeRef | None]:
    """The statement with its time resolved: the parser's dates win over the model's.

    A relative expression left in the statement is resolved against ``anchor`` (its
    source turn's day). A resolved date the model copied is recognised. An absolute date
    the model wrote that is not the one its single source time resolved to is replaced.
    """
    own = resolve_times(statement, anchor)
    if own:
        return annotate_times(statement, own), own[0]
    refs = [r for t in turns for r in t.time_refs]
    for ref in refs:
        if ref.label() in statement:
            return statement, ref
    written = _DATE_TEXT.search(statement)
    if written is not None and len(refs) == 1 and refs[0].granularity in ("day", "weekend"):
        start, end = written.span()
        return f"{statement[:start]}{refs[0].label()}{statement[end:]}", refs[0]
    return statement, None


def _people(log: StepLog, ctx: MemoryContext, turns: list[RawTurn]) -> list[str]:
    """The namespace's speakers (the excerpt's first), for owners and addressees."""
    people = list(dict.fromkeys(t.speaker for t in turns))
    try:
        stored = log.deps.store.lexical_index("raw", ctx.namespace).distinct("speaker")
    except Exception:  # no index: the excerpt's speakers are enough to decide most owners
        stored = []
    return list(dict.fromkeys([*people, *(str(v) for v in stored if isinstance(v, str))]))


def _stored_relations(log: StepLog, ctx: MemoryContext) -> list[FactRecord]:
    """The namespace's facts read from turns without the model ("Noah's rabbit is Clover.")."""
    try:
        where = {"metadata.derived_by": "relations"}
        stored = log.deps.store.get("fact", ctx.namespace, where=where)
    except Exception:  # a store that cannot filter: the excerpt's own pets are enough
        return []
    return [f for f in stored if isinstance(f, FactRecord)]


def _said(turn: RawTurn, *, answered: bool = False) -> list[str]:
    """What a turn says: its text and its shared image's caption.

    ``answered`` adds the turn it answers (``context``: "Yes, last week!" says what the
    question asked).
    """
    return [turn.text, turn.media_caption or "", (turn.context or "") if answered else ""]


TOLD_SUPPORT = 0.5
"""Share of a fact's content words a person's turn must hold to source a fact the model
cited to the agent's own turn: a person who named the company did not say what the agent
added about it."""


def by_assistant(turn: RawTurn) -> bool:
    """Whether the agent wrote the turn (metadata ``role``, or the bare label "assistant").

    An assistant's reply is context, not testimony: "Helio Solar is a solar company."
    drawn from the agent's own guess would be a fact nobody told it.
    """
    return turn.metadata.get(ROLE_KEY) == "assistant" or turn.speaker.casefold() == "assistant"


def _all_said(turns: list[RawTurn]) -> list[str]:
    """What the turns say, with the turns they answer (see :func:`_said`)."""
    return [x for t in turns for x in _said(t, answered=True)]


def supporting_turns(
    log: StepLog, statement: str, cited: list[str], turns: list[RawTurn], people: list[str]
) -> list[str] | None:
    """The ids of the turns a statement is drawn from, or None when none supports it.

    Support: the turns' text and captions hold
    :data:`~lamina.agents.support.SUPPORT_THRESHOLD` of its content words. A small
    model often writes the right note under the wrong turn label, so the one turn of the
    excerpt that supports the note best is its source when it holds
    :data:`~lamina.agents.support.SOURCE_MARGIN` more of its words than the cited turn,
    or when the cited turns do not support it (both counted ``source_corrected``). Else
    the cited turns, when they support it alone or together with the turns they answer
    ("Yes, last week!" after "Did you move?"). A note with no label cites the whole
    excerpt and is pinned to its best turn when that turn supports it alone.
    """
    by_id = {t.id: t for t in turns}
    ratios = {t.id: support_ratio(statement, _said(t), people) for t in turns}
    best = max(turns, key=lambda t: ratios[t.id])
    alone = ratios[best.id] >= SUPPORT_THRESHOLD
    if len(cited) > 1 and alone:
        return [best.id]
    if len(cited) == 1 and ratios[best.id] >= ratios[cited[0]] + SOURCE_MARGIN:
        log.count("source_corrected")  # another turn says clearly more of it
        return [best.id]
    if supported(statement, [x for i in cited for x in _said(by_id[i])], people):
        return cited
    if alone:
        log.count("source_corrected")
        return [best.id]
    answered = [x for i in cited for x in _said(by_id[i], answered=True)]
    return cited if supported(statement, answered, people) else None


def fact_records(
    log: StepLog,
    ctx: MemoryContext,
    items: list[FactLine],
    turns: list[RawTurn],
    labels: dict[str, str],
    episode_id: str | None = None,
) -> list[FactRecord]:
    """Stored facts from a draft's items, with provenance, owner and event time.

    A fact is sourced from the turns that support it (:func:`supporting_turns`); one no
    turn supports is dropped and counted, and so is one that says nothing but names
    (``empty_dropped``), one that only repeats a note of the prompt's example
    (``example_copied``), one its turns support only in their questions
    (``question_dropped``; see :mod:`..evidence.questions`), and one whose only sources are the
    agent's own turns unless a person's turn of the excerpt supports it, which then
    becomes its source (``assistant_only_dropped``; see :func:`by_assistant`). An
    appositive relation the excerpt does not state ("Lena, Maya's cousin, ...") is
    cut out (``relation_unsaid``; see :mod:`.example_leaks`).
    Its owner is the model's, or with the owner rules (``ctx.small_model``, the
    small-model profile) the grammar of its source turn's when the model's disagrees (see
    :mod:`..ownership.grammar`); an owner who is no speaker and no
    one the excerpt names is refused for that note (``owner_absent``; see
    :mod:`..ownership.present`). A pet's news is its keeper's, known from this excerpt or from an
    earlier relation fact ("Noah's rabbit is Clover.", :func:`..ownership.relations.pet_keepers`).
    A note whose later sentence opens with another person is split
    first (``note_split``; see :mod:`.split_notes`). Its kind is read from its wording
    when the model's tag contradicts it (``kind_corrected``; see :mod:`.kinds`).
    """
    by_id = {t.id: t for t in turns}
    people = _people(log, ctx, turns)
    pets = pet_keepers(named_relations(turns), _stored_relations(log, ctx))
    excerpt = _all_said(turns)
    out = []
    notes = []
    for item in items:  # one note per person its sentences open with
        split = split_note(item, people)
        log.count("note_split", len(split) - 1)
        notes += split
    for item in notes:
        if not content_terms(item.statement, people):  # "Maya, Maya, Maya"
            log.count("empty_dropped")
            continue
        cited = [labels[item.source]] if item.source in labels else [t.id for t in turns]
        sources = supporting_turns(log, item.statement, cited, turns, people)
        if sources is None:
            log.count("unsupported_dropped")
            continue
        source_turns = [by_id[s] for s in sources]
        if all(by_assistant(t) for t in source_turns):  # the agent's words: a person's?
            told = [t for t in turns if not by_assistant(t)]
            best = max(
                told, key=lambda t: support_ratio(item.statement, _said(t), people), default=None
            )
            if best is None or not supported(
                item.statement, _said(best), people, threshold=TOLD_SUPPORT
            ):
                log.count("assistant_only_dropped")
                continue
            log.count("source_corrected")
            sources, source_turns = [best.id], [best]
        if copies_example(item.statement, people, _all_said(source_turns)):
            log.count("example_copied")
            continue
        if only_asked(item.statement, source_turns, people):  # a question asserts nothing
            reply = answer_to(source_turns, turns)  # ... unless it was answered
            said = [x for t in source_turns for x in _said(t)]
            if reply is None or not supported(item.statement, [*said, reply.text], people):
                log.count("question_dropped")
                continue
            sources, source_turns = [*sources, reply.id], [*source_turns, reply]
        statement, cut = cut_unsaid_relations(item.statement, excerpt)
        log.count("relation_unsaid", cut)
        anchor = reference_day(source_turns[0].occurred_at, ctx.tz)
        text, when = resolve_statement(statement.strip(), source_turns, anchor)
        if log.deps.arms.owner_rules_on(ctx):
            text, owner, check = checked_owner(
                log, text, item.subject.strip(), source_turns, turns, people, pets
            )
        else:
            owner, check = item.subject.strip(), "model"
        present = present_owner(owner, people, excerpt, vouched=item.subject)
        if present is None:  # no speaker and no one the excerpt names
            log.count("owner_absent")
            continue
        if present != owner:
            log.count("owner_respelled")
        owner = present
        kind, kind_fixed = checked_kind(item.kind, text)
        if kind_fixed:
            log.count("kind_corrected")
        said_at = max(t.occurred_at for t in source_turns)
        point = start = end = None
        if when is not None and when.start == when.end:
            point = _at(when.start, ctx)
        elif when is not None:
            start, end = _at(when.start, ctx), _at(when.end, ctx)
        meta: dict[str, MetadataValue] = {"owner_check": check}
        if episode_id:
            meta["episode_id"] = episode_id
        out.append(
            FactRecord(
                id=fact_id(ctx.namespace, text),
                namespace=ctx.namespace,
                text=text,
                subject=owner,
                kind=kind,
                point_in_time=point,
                start_time=start,
                end_time=end,
                valid_from=start or point or said_at,
                occurred_at=point or start or said_at,
                recorded_at=log.deps.clock(),
                source_ids=sources,
                metadata=meta,
            )
        )
    named = relation_records(ctx.namespace, turns, log.deps.clock(), episode_id)
    log.count("relations_named", len(named))
    return out + named


def episode_text(
    log: StepLog, draft: ConstructionDraft, turns: list[RawTurn], ctx: MemoryContext
) -> tuple[str, str]:
    """(title, narrative) of a draft, with fallbacks when the model left either out.

    A person's possessive in the title goes to whom its turns say, each sentence of the
    summary is told in the voice of the turn it copies (:mod:`..ownership.titles`), and a report
    the model put in the wrong mouth is told by whom its turns say (:mod:`..ownership.reported`),
    counted ``title_owner_corrected``, ``summary_voiced`` and ``summary_owner_corrected``.
    """
    summary = " ".join(dict.fromkeys(s.strip() for s in SENTENCE_BREAK.split(draft.summary)))
    summary = cut_unsaid_relations(summary, _all_said(turns))[0]
    people = _people(log, ctx, turns)
    summary, voiced = voiced_summary(summary.strip(), turns, people)
    log.count("summary_voiced", voiced)
    summary, retold = owned_summary(summary, turns, people)
    log.count("summary_owner_corrected", retold)
    if summary:
        days = {reference_day(t.occurred_at, ctx.tz) for t in turns}
        if len(days) == 1:
            summary = annotate_times(summary, resolve_times(summary, days.pop()))
    else:
        summary = " ".join(f.statement.strip() for f in draft.facts[:3])
    if not summary:
        summary = " ".join(f"{t.speaker}: {t.text}" for t in turns)[:600]
    title = draft.title.strip() or summary.split(".")[0][:80] or "Untitled episode"
    title, corrected = owned_title(title, turns, people)
    log.count("title_owner_corrected", corrected)
    return title, summary
