"""Which conversations, sessions and questions an evaluation run uses.

Questions get stable ids (``<sample_id>:q<n>``, ``n`` = position among the sample's
loadable questions of all five categories), so a subset is reproducible and a resumed
run recognises what it already answered.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from lamina.errors import InvalidInputError

from ..datasets.locomo import Conversation, load_locomo
from .prompts import NOT_MENTIONED

ALL_CATEGORIES = (1, 2, 3, 4, 5)
Pick = Literal["spread", "first", "balanced"]
PICKS: tuple[Pick, ...] = ("spread", "first", "balanced")


@dataclass(frozen=True)
class EvalQuestion:
    """One question as the harness asks and scores it."""

    qid: str
    conversation: str
    category: int
    text: str
    gold: str
    """The gold answer; for category 5 the refusal wording."""
    evidence: tuple[str, ...]
    adversarial_answer: str | None = None


@dataclass
class Subset:
    """The conversations (possibly cut to their first sessions) and their questions."""

    conversations: list[Conversation]
    questions: dict[str, list[EvalQuestion]] = field(default_factory=dict)

    def describe(self) -> dict[str, object]:
        """Counts per conversation and category, for the report header."""
        out: dict[str, object] = {}
        for conv in self.conversations:
            by_cat: dict[str, int] = {}
            for q in self.questions[conv.sample_id]:
                by_cat[str(q.category)] = by_cat.get(str(q.category), 0) + 1
            out[conv.sample_id] = {
                "sessions": len(conv.sessions()),
                "turns": len(conv.turns),
                "questions": dict(sorted(by_cat.items())),
            }
        return out

    @property
    def question_count(self) -> int:
        """All questions of all conversations."""
        return sum(len(qs) for qs in self.questions.values())


def spread(items: Sequence[EvalQuestion], n: int | None, pick: Pick) -> list[EvalQuestion]:
    """``n`` items: the first ones, evenly spaced, or balanced over the categories.

    ``balanced`` lets the categories share ``n`` as equally as they can, each spread
    evenly; the order of the list is kept in every case.
    """
    if n is None or n >= len(items):
        return list(items)
    if pick == "first":
        return list(items[:n])
    if pick == "balanced":
        return balanced(items, n)
    return [items[i * len(items) // n] for i in range(n)]


def balanced(items: Sequence[EvalQuestion], n: int) -> list[EvalQuestion]:
    """``n`` items shared equally by the categories, each spread evenly (order kept).

    A category with fewer items than its share gives the rest to the others.
    """
    by_category: dict[int, list[EvalQuestion]] = {}
    for item in items:
        by_category.setdefault(item.category, []).append(item)
    quota: dict[int, int] = dict.fromkeys(by_category, 0)
    left = min(n, len(items))
    while left:
        open_ = sorted(c for c in by_category if quota[c] < len(by_category[c]))
        share, extra = divmod(left, len(open_))
        for rank, category in enumerate(open_):
            room = len(by_category[category]) - quota[category]
            take = min(room, share + (rank < extra))
            quota[category] += take
            left -= take
    chosen = {id(q) for c, qs in by_category.items() for q in spread(qs, quota[c], "spread")}
    return [q for q in items if id(q) in chosen]


def first_sessions(conv: Conversation, sessions: int | None) -> Conversation:
    """``conv`` with only its first ``sessions`` sessions (all of them when None)."""
    if sessions is None:
        return conv
    keep = set(conv.sessions()[:sessions])
    return replace(conv, turns=[t for t in conv.turns if t.session_id in keep])


def select(
    conversations: Sequence[Conversation],
    *,
    categories: Sequence[int] = ALL_CATEGORIES,
    questions: int | None = None,
    adversarial: int | None = None,
    sessions: int | None = None,
    pick: Pick = "spread",
    exclude: Collection[str] = (),
) -> Subset:
    """Choose the questions of each conversation.

    Args:
        conversations: Loaded with all five categories (for stable question ids).
        categories: Categories to keep.
        questions: At most this many category 1-4 questions per conversation.
        adversarial: At most this many category-5 questions per conversation.
        sessions: Only the first N sessions are ingested; a question is kept only when all
            its evidence lies in them.
        pick: ``spread`` (evenly over the conversation), ``first``, or ``balanced``
            (the categories share the questions equally, each spread evenly).
        exclude: Question ids that are never chosen (another run's questions).
    """
    excluded = set(exclude)
    wanted = set(categories)
    if not wanted <= set(ALL_CATEGORIES):
        raise InvalidInputError(f"categories are 1-5, got {sorted(wanted)}")
    subset = Subset([])
    for original in conversations:
        conv = first_sessions(original, sessions)
        kept_sessions = set(conv.sessions())
        answerable: list[EvalQuestion] = []
        baiting: list[EvalQuestion] = []
        for n, q in enumerate(original.questions):
            if q.category not in wanted or not q.sessions <= kept_sessions:
                continue
            if f"{conv.sample_id}:q{n}" in excluded:
                continue
            item = EvalQuestion(
                qid=f"{conv.sample_id}:q{n}",
                conversation=conv.sample_id,
                category=q.category,
                text=q.text,
                gold=NOT_MENTIONED if q.category == 5 else q.answer,
                evidence=tuple(sorted(q.evidence)),
                adversarial_answer=q.answer if q.category == 5 else None,
            )
            (baiting if q.category == 5 else answerable).append(item)
        chosen = spread(answerable, questions, pick) + spread(baiting, adversarial, pick)
        chosen.sort(key=lambda q: int(q.qid.rsplit(":q", 1)[1]))  # file order
        subset.conversations.append(conv)
        subset.questions[conv.sample_id] = chosen
    return subset


def load_subset(
    path: Path,
    *,
    conversations: Sequence[str] | None,
    categories: Sequence[int] = ALL_CATEGORIES,
    questions: int | None = None,
    adversarial: int | None = None,
    sessions: int | None = None,
    pick: Pick = "spread",
    exclude: Collection[str] = (),
) -> Subset:
    """Load a LoCoMo-format file and choose the subset (``exclude``: question ids never chosen).

    Raises:
        InvalidInputError: the file is unreadable, or a named conversation is not in it.
    """
    loaded = load_locomo(path, sample_ids=conversations, categories=ALL_CATEGORIES)
    if conversations:
        found = {c.sample_id for c in loaded}
        missing = [c for c in conversations if c not in found]
        if missing:
            every = [c.sample_id for c in load_locomo(path, categories=())]
            raise InvalidInputError(
                f"{path}: no conversation {', '.join(missing)}; it has {', '.join(every)}"
            )
        order = {c: i for i, c in enumerate(conversations)}
        loaded.sort(key=lambda c: order[c.sample_id])
    if not loaded:
        raise InvalidInputError(f"{path}: no conversations to evaluate")
    return select(
        loaded,
        categories=categories,
        questions=questions,
        adversarial=adversarial,
        sessions=sessions,
        pick=pick,
        exclude=exclude,
    )
