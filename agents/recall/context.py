"""The context a question is answered from: one line per memory, and the budget cut.

Raw turns are rendered the way the evaluation's baselines render retrieved turns
(``[m1] (8 May 2023, 13:56) Maya: text [shared image: caption]``), so lamina and
the baselines differ in what they show, never in how. Derived memories come with their
kind and date (``[m21] (fact, 7 May 2023) ...``).

:func:`cut_to_budget` decides what stays: raw turns first, up to the share of the budget
that derived memory may not take; then derived memories that add a source turn the
context does not show yet; then more raw turns in the room left. A derived memory whose
source turns are all shown is a duplicate of its evidence and is dropped. Of two derived
memories where one restates the other (a scene made of one episode repeats that
episode's summary), only the fuller one is shown (:data:`RESTATED`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from zoneinfo import ZoneInfo

from ...core.context import MemoryContext
from ...core.state import Candidate
from ...stores.lexical import Analyzer
from ..common.formatting import data_line, long_date, said_line
from ..common.lexicon import MONTHS_EN

TokenCount = Callable[[str], int]
"""Counts the tokens of a text (the serving model's tokenizer, or an estimate)."""
NO_MEMORIES = "(no memories found)"
RESTATED = 0.8
"""A derived memory restates another when at least this share of its content words
(title and text, stemmed; stop words, numbers and month names left out) are the other's."""
_ANALYZER = Analyzer()
_MONTHS = frozenset(_ANALYZER(" ".join(MONTHS_EN)))


def render_turn(
    label: str, when: datetime, speaker: str, text: str, caption: str | None, tz: ZoneInfo
) -> str:
    """One conversation turn: label, date and time, speaker, text, shared image."""
    local = when.astimezone(tz)
    return f"[{label}] ({long_date(when, tz)}, {local:%H:%M}) " + said_line(speaker, text, caption)


def _said_order(m: Candidate) -> tuple[datetime, str, int, str]:
    """Conversation order of raw turns."""
    return (m.occurred_at, m.session_id or "", m.turn_index or 0, m.id)


def render_memory(label: str, memory: Candidate, tz: ZoneInfo) -> str:
    """One memory as a context line (raw turns as turns, others with kind and date)."""
    if memory.granularity == "raw":
        speaker = memory.speaker or "unknown"
        return render_turn(
            label, memory.occurred_at, speaker, memory.text, memory.media_caption, tz
        )
    head = f"[{label}] ({memory.granularity}, {long_date(memory.occurred_at, tz)}"
    if memory.superseded_by or memory.valid_to:
        until = long_date(memory.valid_to, tz) if memory.valid_to else "?"
        head += f", valid until {until}"
    title = f"{data_line(memory.title, 300)}: " if memory.title else ""
    return f"{head}) {title}{data_line(memory.text, 1500)}"


def context_order(memories: Sequence[Candidate]) -> list[Candidate]:
    """Raw turns in conversation order, then derived memories in time order."""
    raw = [m for m in memories if m.granularity == "raw"]
    derived = [m for m in memories if m.granularity != "raw"]
    raw.sort(key=_said_order)
    derived.sort(key=lambda m: (m.occurred_at, m.granularity, m.id))
    return raw + derived


def best_last(memories: Sequence[Candidate], ranking: Sequence[str]) -> list[Candidate]:
    """Derived memories, then raw turns, each from the least to the most relevant.

    ``ranking`` lists memory ids best first; a memory it does not name counts as the least
    relevant. The best raw turn comes last, next to the question that follows the context.
    """
    position = {memory_id: n for n, memory_id in enumerate(ranking)}

    def worst_first(m: Candidate) -> tuple[int, str]:
        return (-position.get(m.id, len(position)), m.id)

    raw = sorted((m for m in memories if m.granularity == "raw"), key=worst_first)
    derived = sorted((m for m in memories if m.granularity != "raw"), key=worst_first)
    return derived + raw


def render_context(
    memories: Sequence[Candidate], tz: ZoneInfo, *, ordered: bool = False
) -> tuple[str, dict[str, str]]:
    """The context text and label -> id.

    The labels ``m1..`` follow :func:`context_order`, or the order given when
    ``ordered`` (a context the retriever already put in its order, :func:`best_last`).
    """
    shown = list(memories) if ordered else context_order(memories)
    lines, labels = [], {}
    for n, memory in enumerate(shown, start=1):
        label = f"m{n}"
        labels[label] = memory.id
        lines.append(render_memory(label, memory, tz))
    return "\n".join(lines) or NO_MEMORIES, labels


def render_for(
    memories: Sequence[Candidate], ctx: MemoryContext, tz: ZoneInfo | None = None
) -> tuple[str, dict[str, str]]:
    """:func:`render_context` in the retriever's order (the best evidence last).

    ``tz``: the zone dates are shown in (default: the context's).
    """
    return render_context(memories, tz or ctx.tz, ordered=True)


def _sized(memory: Candidate, tz: ZoneInfo, count: TokenCount) -> Candidate:
    line = render_memory("m00", memory, tz)
    return memory.model_copy(update={"tokens": count(line) + 1})  # +1: the line break


def _fill(
    ranked: Sequence[Candidate], chosen: list[Candidate], room: int, limit: int
) -> tuple[int, list[Candidate]]:
    """Take from ``ranked`` (in order) whatever fits in ``room``; return what is left."""
    taken = {m.id for m in chosen}
    for memory in ranked:
        if len(chosen) >= limit:
            break
        if memory.id in taken or memory.tokens > room:
            continue
        chosen.append(memory)
        taken.add(memory.id)
        room -= memory.tokens
    return room, chosen


def _content_words(memory: Candidate) -> frozenset[str]:
    """Title and text, stemmed, without stop words, numbers or month names.

    Dates are left out because a scene opens with its own date, which its line shows.
    """
    words = _ANALYZER(f"{memory.title or ''} {memory.text}")
    return frozenset(w for w in words if not w.isdigit() and w not in _MONTHS)


def _within(words: frozenset[str], other: frozenset[str]) -> bool:
    """Whether (nearly) all of ``words`` are among ``other``."""
    return len(words & other) >= RESTATED * len(words)


def _unrestated(ranked: Sequence[Candidate]) -> list[Candidate]:
    """``ranked`` (best first) without the memories that restate another one.

    Of two memories where one says (nearly) all the other does, the fuller one is kept,
    in the place of the better-ranked of the two. A fact with an end of validity is
    compared with none: "lives in Lisbon" until April and "lives in Lisbon" again now
    are two states.
    """
    kept: list[tuple[Candidate, frozenset[str]]] = []
    for memory in ranked:
        if memory.superseded_by or memory.valid_to:  # a past state is not a restatement
            kept.append((memory, frozenset()))
            continue
        words = _content_words(memory)
        if not words or any(_within(words, other) for _, other in kept):
            continue
        covered = [i for i, (_, other) in enumerate(kept) if other and _within(other, words)]
        if covered:
            kept[covered[0]] = (memory, words)
            kept = [k for i, k in enumerate(kept) if i not in covered[1:]]
        else:
            kept.append((memory, words))
    return [memory for memory, _ in kept]


def _adds_evidence(memory: Candidate, shown: set[str]) -> bool:
    """A derived memory adds something unless every source turn of it is shown."""
    return not memory.source_ids or not set(memory.source_ids) <= shown


def cut_to_budget(
    raw: Sequence[Candidate],
    derived: Sequence[Candidate],
    *,
    budget: int,
    derived_share: float,
    limit: int,
    tz: ZoneInfo,
    count: TokenCount,
) -> list[Candidate]:
    """The memories that fit ``budget`` tokens, each with its ``tokens`` set.

    Args:
        raw: Raw turns, best first.
        derived: Facts, episodes and scenes, best first.
        budget: Tokens the rendered context may take.
        derived_share: Share of ``budget`` derived memories may take at most.
        limit: At most this many memories.
        tz: Time zone of the rendered dates.
        count: The token counter.
    """
    raw = [_sized(m, tz, count) for m in raw]
    derived = [_sized(m, tz, count) for m in derived]
    reserve = int(budget * derived_share)
    # 1. the evidence: raw turns in the part of the budget derived memory cannot take
    room, turns = _fill(raw, [], budget - reserve, limit)
    room += reserve
    # 2. derived memories that add a source turn the context does not show
    shown = {m.id for m in turns}
    useful = _unrestated([m for m in derived if _adds_evidence(m, shown)])
    room, notes = _fill(useful, [], min(room, reserve), limit - len(turns))
    room = budget - sum(m.tokens for m in turns) - sum(m.tokens for m in notes)
    # 3. more raw turns in the room left; a note whose sources all became shown goes
    while True:
        room, turns = _fill(raw, turns, room, limit - len(notes))
        shown = {m.id for m in turns}
        kept = [m for m in notes if _adds_evidence(m, shown)]
        if len(kept) == len(notes):
            break
        room += sum(m.tokens for m in notes) - sum(m.tokens for m in kept)
        notes = kept
    return turns + notes


__all__ = [
    "NO_MEMORIES",
    "TokenCount",
    "best_last",
    "context_order",
    "cut_to_budget",
    "render_context",
    "render_memory",
    "render_turn",
]
