"""The Judge node on the read path: is the context enough, and what does it answer?

One structured call returns the sufficiency of the context (EverMemOS's check), what is
missing, the memories that contradict each other (AMA's Refresh) and a draft answer;
when the context suffices, the answer node returns that draft without a second call. A
draft that rests on someone else's words, or on a premise the memories do not hold, is
not sufficient (:mod:`..common.attribution`, :mod:`.premise`), and neither is one whose
content the memories it cites do not hold (:mod:`.grounding`).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from langgraph.runtime import Runtime

from ...core.context import MemoryContext, context_of
from ...core.nodes import JUDGE
from ...core.state import Candidate, RecallState, RecallVerdict
from ...prompts.recall import ANSWER_HINTS, JUDGE_ANSWER
from ..common.attribution import ungrounded_person, unsupported_person
from ..common.deps import NodeDeps
from ..common.formatting import as_data
from ..common.query_analysis import QueryAnalysis
from ..common.token_caps import capped_log
from .context import render_for
from .grounding import ground_shown
from .premise import foreign_answer, foreign_topic, premise_found
from .premise_search import premise_anywhere
from .schemas import DraftFirst, is_refusal_text

JUDGE_MAX_TOKENS = 192
"""Output cap of the Judge's combined call: its verdict and a short draft answer."""


def verdict_of(judged: DraftFirst, labels: dict[str, str], round_: int) -> RecallVerdict:
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


def grounded_verdict(
    verdict: RecallVerdict, question: str, candidates: list[Candidate], ctx: MemoryContext
) -> RecallVerdict:
    """The verdict, not sufficient when what it cites does not hold its draft.

    Its citations become the shown memories that hold the draft when its own do not
    (see :func:`.grounding.ground`). An ungrounded draft sends the question to another
    round with what is missing said; at the last round it is refused.
    """
    checked = ground_shown(verdict.answer, question, verdict.cited_ids, candidates, ctx.tz)
    if checked.grounded:
        return verdict.model_copy(
            update={"cited_ids": checked.cited_ids, "recited": checked.recited}
        )
    return verdict.model_copy(
        update={
            "sufficient": False,
            "ungrounded": True,
            "missing": f"a memory that says {verdict.answer[:80]!r}",
        }
    )


def _attributed(
    verdict: RecallVerdict,
    analysis: QueryAnalysis,
    question: str,
    candidates: list[Candidate],
    doubted: bool,
    search: Callable[[], bool] | None = None,
) -> RecallVerdict:
    """The verdict, no longer sufficient when the draft rests on someone else's words.

    Its citations are all other people's turns, or the memories that best match its
    answer are (see :mod:`.attribution`), or the turns best matching the question's
    topic are about someone else and so are those best matching the answer, or
    ``search`` (the premise search of the whole namespace) finds no turn tying the person
    to the topic either (see :mod:`.premise`, :mod:`.premise_search`). ``doubted``: an
    earlier round's premise failed; then only a turn tying the person to the topic lifts
    it.
    """
    by_id = {c.id: c for c in candidates}
    person = unsupported_person(
        analysis, [by_id[i] for i in verdict.cited_ids if i in by_id]
    ) or ungrounded_person(analysis, verdict.answer, candidates)
    premise_failed = searched = False
    if person is None:
        if doubted:
            premise_failed = not premise_found(analysis, question, candidates)
            person = analysis.persons[0] if premise_failed else None
        else:
            person, searched = _unfounded(analysis, question, verdict.answer, candidates, search)
            premise_failed = person is not None
    if person is None:
        return verdict
    return _doubted(verdict, person, premise_failed=premise_failed, searched=searched)


def _doubted(
    verdict: RecallVerdict, person: str, *, premise_failed: bool, searched: bool
) -> RecallVerdict:
    """The verdict, not sufficient: what ``person`` said is missing."""
    return verdict.model_copy(
        update={
            "sufficient": False,
            "missing": f"what {person} said about it",
            "unsupported_person": person,
            "premise_failed": premise_failed,
            "premise_searched": searched,
        }
    )


def _unfounded(
    analysis: QueryAnalysis,
    question: str,
    answer: str,
    candidates: list[Candidate],
    search: Callable[[], bool] | None,
) -> tuple[str | None, bool]:
    """The person whose premise fails (or None), and whether the search settled it.

    It fails when the topic test fires and so does the answer test, or the premise
    search finds the person on the topic nowhere in the namespace (then True: no other
    round is needed).
    """
    foreign = foreign_topic(analysis, question, candidates)
    if foreign is None:
        return None, False
    if foreign_answer(foreign, answer):
        return foreign.person, False
    if search is not None and not search():
        return foreign.person, True
    return None, False


def _searched_refusal(
    verdict: RecallVerdict,
    analysis: QueryAnalysis,
    question: str,
    candidates: list[Candidate],
    search: Callable[[], bool],
) -> RecallVerdict:
    """An insufficient verdict, refused at once when the namespace does not hold its premise.

    A round whose draft is not taken would be retried with rewritten queries; when the
    topic test fires on its context and the premise search finds the person on the topic
    nowhere, the next round would find nothing more (see :mod:`.premise_search`).
    """
    foreign = foreign_topic(analysis, question, candidates)
    if foreign is None or search():
        return verdict
    return _doubted(verdict, foreign.person, premise_failed=True, searched=True)


def make_recall_judge(deps: NodeDeps, *, attribution: bool = True) -> Callable[..., dict[str, Any]]:
    """Build the recall ``judge`` node: sufficiency and a draft answer in one call.

    With ``attribution`` (always, in a graph) a draft resting on the words of people other
    than the one the question names is not sufficient (retry, then refuse): its cited turns
    are all theirs, or the memories best matching its answer are, or the turns best
    matching both the question's topic and the answer are about someone else (see
    ``agents.attribution`` and ``agents.premise``): a question that puts one person's words
    in another's mouth is not answered from them. False lets a test of the other checks
    run without it.
    """

    def judge(state: RecallState, runtime: Runtime[MemoryContext]) -> dict[str, Any]:
        """Judge the context and draft the answer (one capped structured call).

        With no memories at all there is nothing to judge: the verdict is insufficient
        without a call, so the graph retries with rewritten queries before refusing.
        """
        ctx = context_of(runtime)
        log = capped_log(JUDGE, deps, JUDGE_MAX_TOKENS)
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
            judged = log.ask(DraftFirst, messages, "judge_answer")
            if judged is None:  # malformed or failed: the answer node asks plainly
                verdict.status = "failed"
            else:
                verdict = verdict_of(judged, labels, verdict.round)
                question = state.get("question", "")
                search = (
                    partial(premise_anywhere, deps.store, ctx.namespace, analysis, question)
                    if deps.arms.premise_search and attribution
                    else None
                )
                if attribution and verdict.sufficient:
                    doubted = any(v.get("premise_failed") for v in state.get("verdicts", []))
                    verdict = _attributed(verdict, analysis, question, candidates, doubted, search)
                elif search is not None:
                    verdict = _searched_refusal(verdict, analysis, question, candidates, search)
                if verdict.sufficient:
                    verdict = grounded_verdict(verdict, question, candidates, ctx)
        decided = verdict.model_dump()
        return {"verdict": decided, "verdicts": [decided], **log.update()}

    return judge
