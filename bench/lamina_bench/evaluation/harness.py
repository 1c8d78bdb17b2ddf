"""The LoCoMo evaluation runner: ingest, answer, score, judge; resumable.

:func:`run_evaluation` builds each conversation's memory once per needed stage into a
construction store keyed by what decides it (data, model, prompts, policy; see
:mod:`.construction`), reused by every later run with the same key. Then every system
answers every chosen question; the answer is scored (mem0 F1 and BLEU-1, LoCoMo F1, the
judge, category-5 refusal, evidence recall) and appended to ``journal.jsonl``, which holds
no dataset text and can be committed as it grows. Started again on the same folder with
the same settings (on this machine or another), it skips every question already in the
journal, so a run continues where it stopped. At the end it writes ``results.json``,
``report.md`` and the plots.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from lamina.errors import InvalidInputError
from lamina.llm.structured import StructuredCaller

from ..datasets.locomo_annotations import Annotations, load_annotations
from .assembly import build_systems, open_caches, peer_memories, system_id
from .building import build_memory, progress_bar
from .code_version import code_version
from .journal_merge import changed_settings, merge_answers, paired_results
from .judge import Judge
from .peers import peer_versions, peers_in
from .records import (
    Journal,
    QuestionResult,
    Redo,
    RunHeader,
    RunOutput,
    answers_of,
    ingests_of,
)
from .scoring import bleu1, evidence_recall, is_refusal, locomo_f1, mem0_f1
from .settings import JOURNAL, EvalModels, EvalSettings
from .subset import EvalQuestion, Subset, load_subset
from .systems import (
    DERIVED_ORACLE,
    EvalSystem,
    SystemAnswer,
    scored_answer,
)

__all__ = [
    "JOURNAL",
    "EvalModels",
    "EvalSettings",
    "RunOutput",
    "open_caches",
    "run_evaluation",
]

Progress = Callable[..., Any]


def score(
    system: str,
    question: EvalQuestion,
    answer: SystemAnswer,
    session_of: dict[str, str],
    judge: Judge | None,
) -> QuestionResult:
    """Every score of one answer (the judge runs on categories 1-4 only)."""
    text = scored_answer(answer)
    answerable = question.category != 5
    turn, session = evidence_recall(question.evidence, answer.used, session_of)
    cited = None
    if answer.cited is not None and question.evidence:
        cited, _ = evidence_recall(question.evidence, answer.cited, session_of)
    result = QuestionResult(
        system=system,
        conversation=question.conversation,
        qid=question.qid,
        category=question.category,
        question=question.text,
        gold=question.gold,
        adversarial_answer=question.adversarial_answer,
        evidence=list(question.evidence),
        answer=text,
        raw_answer=answer.answer,
        refused=answer.refused or is_refusal(text),
        mem0_f1=mem0_f1(text, question.gold) if answerable else None,
        bleu1=bleu1(text, question.gold) if answerable else None,
        locomo_f1=locomo_f1(text, question.gold, question.category),
        refusal_correct=None if answerable else (answer.refused or is_refusal(text)),
        used_evidence=answer.used,
        turn_recall=turn,
        session_recall=session,
        cited_turn_recall=cited,
        context_tokens=answer.context_tokens,
        answering=answer.costs,
        latency_s=answer.latency_s,
        rounds=answer.rounds,
        failures=answer.failures,
        fallbacks=answer.fallbacks,
        answer_source=answer.answer_source,
        notes=answer.notes,
    )
    if judge is not None and answerable:
        verdict = judge.judge(question.text, question.gold, text)
        result.judge_label = verdict.label
        result.judge_reason = verdict.reason
        result.judging = verdict.costs
    return result


def _open_journal(settings: EvalSettings, models: EvalModels, fresh: bool) -> Journal:
    journal = Journal(settings.out / JOURNAL)
    if fresh:  # the run's answers go; built memory stays reusable in its construction store
        journal.path.unlink(missing_ok=True)
    entries = journal.read()
    fingerprint = settings.fingerprint(models)
    headers = [e for e in entries if isinstance(e, RunHeader)]
    if not headers:
        if entries:
            raise InvalidInputError(f"{journal.path} has no run header; pass --fresh")
        journal.append(RunHeader(fingerprint=fingerprint, started=datetime.now(UTC).isoformat()))
        return journal
    changed = changed_settings(headers[0].fingerprint, fingerprint)
    if changed:
        raise InvalidInputError(
            f"{settings.out} holds a run with other settings ({', '.join(changed)} differ); "
            "use another --out folder, or --fresh to discard it"
        )
    return journal


def run_evaluation(
    settings: EvalSettings,
    models: EvalModels,
    *,
    fresh: bool = False,
    redo: Sequence[str] = (),
    redo_failed: Sequence[str] = (),
    merge_from: Sequence[Path] = (),
    interim: bool = False,
    progress: bool = True,
    plots: bool = True,
    keep_text: bool = False,
    meta: dict[str, Any] | None = None,
) -> RunOutput:
    """Run (or resume) an evaluation; write the results, the report and the plots.

    Args:
        settings: What to run.
        models: The chat model (every system), the judge and the embedder.
        fresh: Discard a previous run in ``settings.out`` instead of resuming it.
        redo: Systems whose earlier answers stop counting (a :class:`Redo` journal line),
            so this run answers their questions again; the other systems' answers stay.
        redo_failed: Systems whose answers with a failed answer step (a timeout, an HTTP
            error) stop counting, so this run asks those questions again.
        merge_from: Output folders of runs with the same settings (another process or
            machine answering other systems); their answers that this run lacks join it.
        interim: Answer nothing: write the results and the report from the journal as it
            is, scoring only the questions every system with answers has answered (a long
            run's interim report).
        progress: Show progress bars on stderr.
        plots: Draw the PNG plots (needs matplotlib).
        keep_text: Keep the dataset's text in ``results.json`` (see ``outputs.DATASET_TEXT``).
        meta: Extra header fields for the report (command line, commit, ...).
    """
    settings.validate()
    subset = load_subset(
        settings.data,
        conversations=settings.conversations,
        categories=settings.categories,
        questions=settings.questions,
        adversarial=settings.adversarial,
        sessions=settings.sessions,
        pick=settings.pick,
        exclude=settings.exclude,
    )
    annotations: dict[str, Annotations] = {}
    if DERIVED_ORACLE in settings.systems:  # refused before any run folder or model
        samples = [c.sample_id for c in subset.conversations]
        annotations = load_annotations(settings.data, samples)
    settings.out.mkdir(parents=True, exist_ok=True)
    unknown = sorted((set(redo) | set(redo_failed)) - set(settings.systems))
    if unknown:
        raise InvalidInputError(
            f"--redo names systems this run does not answer: {', '.join(unknown)}; "
            f"choose from {', '.join(settings.systems)}"
        )
    journal = _open_journal(settings, models, fresh)
    for names, failed_only in ((redo, False), (redo_failed, True)):
        if names:  # the answers' system ids (lamina@<policy> when several policies run)
            ids = {
                system_id(name, policy, settings.policies)
                for name in names
                for policy in settings.policies
            }
            at = datetime.now(UTC).isoformat()
            journal.append(Redo(systems=sorted(ids), at=at, failed_only=failed_only))
    for other in merge_from:  # after a redo: a system started over takes the other's answers
        merge_answers(journal, Journal(Path(other) / JOURNAL), settings.fingerprint(models))
    caches = open_caches(settings, models)
    systems = build_systems(settings, models, caches)
    judge = None
    if settings.judge:
        judge_caller = StructuredCaller(
            models.judge_model or models.chat_model,
            method=settings.structured_method,
            max_attempts=settings.max_attempts,
        )
        judge = Judge(judge_caller, models.counter, name=models.judge_label)
    if not interim:
        peers = peer_memories(systems)
        build_memory(settings, models, subset, caches, journal, progress, annotations, peers)
        _answer(subset, systems, journal, journal.read(), judge, progress, models.ready)
    entries = journal.read()
    header = next(e for e in entries if isinstance(e, RunHeader))
    run_meta = {
        **(meta or {}),
        "model": models.model_name,
        "judge": models.judge_label if settings.judge else None,
        "embeddings": type(models.embeddings).__name__,
        "token_counter": getattr(models.counter, "name", type(models.counter).__name__),
        "settings": header.fingerprint,
        "subset": subset.describe(),
        "systems": [s.name for s in systems],
        "stages": {s.name: s.stage for s in systems},
        "construction": {stage: cache.key for stage, cache in caches.items()},
        "prompts": prompt_texts(),
        **({"peers": peer_versions(settings.systems)} if peers_in(settings.systems) else {}),
        "started": header.started,
        "finished": datetime.now(UTC).isoformat(),
    }
    results = [with_text(r, subset) for r in answers_of(entries)]
    if interim:
        results, run_meta["interim"] = paired_results(results, [s.name for s in systems], subset)
    run_meta["code_versions"] = code_versions(results)
    built = ingests_of(entries, stores={stage: cache.key for stage, cache in caches.items()})
    output = RunOutput(results, built, run_meta, settings.out)
    from .outputs import write_outputs  # matplotlib is imported only when writing

    write_outputs(output, plots=plots, keep_text=keep_text)
    return output


def _answer(
    subset: Subset,
    systems: Sequence[EvalSystem],
    journal: Journal,
    entries: Sequence[Any],
    judge: Judge | None,
    progress: bool,
    ready: Callable[[], None],
) -> None:
    done = {r.key for r in answers_of(entries)}
    code = code_version()
    # one system at a time per conversation: a serving model reuses the cached context prefix
    plan = [
        (conv, system, q)
        for conv in subset.conversations
        for system in systems
        for q in subset.questions[conv.sample_id]
        if (system.name, q.qid) not in done
    ]
    if plan:
        ready()  # questions to answer (and judge): a local model loads now, not before
    with progress_bar(len(plan), "answer", "question", progress) as bar:
        for conv, system, question in plan:
            bar.set_postfix_str(f"{system.name} {question.qid}")
            session_of = {t.dia_id: t.session_id for t in conv.turns}
            answer = system.answer(conv, question)
            result = score(system.name, question, answer, session_of, judge)
            result.code = code
            journal.append(result)
            bar.update(1)


def code_versions(results: Sequence[QuestionResult]) -> dict[str, dict[str, int]]:
    """For each system, how many of its answers each code version made ("" unrecorded)."""
    out: dict[str, dict[str, int]] = {}
    for r in results:
        counts = out.setdefault(r.system, {})
        counts[r.code] = counts.get(r.code, 0) + 1
    return out


def with_text(result: QuestionResult, subset: Subset) -> QuestionResult:
    """The result with the dataset's text joined back in from the data file (by id)."""
    question = next(
        (q for q in subset.questions.get(result.conversation, []) if q.qid == result.qid), None
    )
    if question is None:
        return result
    return result.model_copy(
        update={
            "question": question.text,
            "gold": question.gold,
            "adversarial_answer": question.adversarial_answer,
        }
    )


def prompt_texts() -> dict[str, str]:
    """The answer prompts as the report states them (our own text, not the dataset's)."""
    from lamina.prompts.recall import JUDGE_ANSWER

    from .prompts import EVAL_ANSWER

    def text(template: Any) -> str:
        return "\n".join(
            f"[{type(m).__name__.removesuffix('MessagePromptTemplate').lower()}] "
            f"{getattr(getattr(m, 'prompt', None), 'template', m)}"
            for m in template.messages
        )

    return {
        "shared answer (lamina_bench/evaluation/prompts.py EVAL_ANSWER)": text(EVAL_ANSWER),
        "lamina Judge + answer (prompts/recall.py JUDGE_ANSWER)": text(JUDGE_ANSWER),
    }


__all__ = ["EvalModels", "EvalSettings", "RunOutput", "run_evaluation"]
