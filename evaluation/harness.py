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

import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from tqdm import tqdm

from ..core.context import TRIGGER_POLICIES, MemoryContext
from ..errors import InvalidInputError
from ..graphs.ingest import build_ingest_graph
from ..graphs.recall import build_recall_graph
from ..llm.structured import StructuredCaller, StructuredMethod
from .answering import Answerer
from .code_version import code_version
from .construction import ConstructionCache, KeyInputs, construction_key, file_sha256
from .ingest import CHUNK_STAGE, MEMSTRATA_STAGE, RAW_STAGE, Ingestor, memstrata_stage
from .judge import Judge
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
from .subset import PICKS, EvalQuestion, Pick, Subset, load_subset
from .systems import (
    FLAT,
    FULL_CONTEXT,
    FULL_CONTEXT_LONG,
    MEMSTRATA,
    MEMSTRATA_RETRIEVAL,
    NAIVE_RAG,
    ORACLE,
    SYSTEMS,
    EvalSystem,
    FullContextSystem,
    MemstrataSystem,
    OracleSystem,
    SystemAnswer,
    flat,
    naive_rag,
    scored_answer,
)
from .transcripts import TokenCounter, WordPieceCounter

JOURNAL = "journal.jsonl"
UNFINGERPRINTED = ("systems",)
"""Settings a resumed run may change: each answer is keyed by its system, so a later run
can add systems (or leave some for later) without touching the others' answers."""
CONSTRUCTION_DIR = "construction"


@dataclass(kw_only=True)
class EvalSettings:
    """Everything that decides what a run does (recorded as its fingerprint)."""

    data: Path
    out: Path
    conversations: list[str] | None = None
    categories: list[int] = field(default_factory=lambda: [1, 2, 3, 4, 5])
    questions: int | None = None
    """Category 1-4 questions per conversation (None: all)."""
    adversarial: int | None = None
    """Category-5 questions per conversation (None: all)."""
    sessions: int | None = None
    """Only the first N sessions (questions with evidence in them)."""
    pick: Pick = "spread"
    systems: list[str] = field(default_factory=lambda: [MEMSTRATA, NAIVE_RAG, FULL_CONTEXT, FLAT])
    policies: list[str] = field(default_factory=lambda: ["recurrence"])
    batch_size: int = 10
    top_k: int = 20
    """Flat retrieval: raw turns retrieved."""
    rag_k: int = 8
    """Naive RAG: chunks retrieved."""
    chunk_words: int = 128
    chunk_overlap: int = 32
    context_window: int = 32768
    """``full-context``: the model's window."""
    long_context_window: int = 32768
    """``full-context-long``: the long window (the server must be started with it)."""
    answer_budget: int = 256
    structured_method: StructuredMethod = "json_schema"
    max_attempts: int = 3
    judge: bool = True
    construction_dir: Path | None = None
    """Where built memory is kept between runs (default: ``construction/`` beside ``out``)."""
    recall: dict[str, Any] = field(default_factory=dict)
    """``MemoryContext`` overrides for memstrata's systems (a design under comparison)."""
    exclude: list[str] = field(default_factory=list)
    """Question ids never chosen (e.g. another run's, so a comparison tunes on other
    questions than the run it will be judged by)."""

    @property
    def construction_root(self) -> Path:
        """The folder of the construction stores."""
        return self.construction_dir or self.out.parent / CONSTRUCTION_DIR

    def validate(self) -> None:
        """Raise :class:`InvalidInputError` with a fix-it message for a bad setting."""
        unknown = [s for s in self.systems if s not in SYSTEMS]
        if unknown or not self.systems:
            raise InvalidInputError(f"unknown systems {unknown}; choose from {', '.join(SYSTEMS)}")
        bad = [p for p in self.policies if p not in TRIGGER_POLICIES]
        if bad or not self.policies:
            raise InvalidInputError(f"unknown policies {bad}; choose from {TRIGGER_POLICIES}")
        names = ("batch_size", "top_k", "rag_k", "chunk_words", "context_window")
        for name in (*names, "long_context_window"):
            if getattr(self, name) < 1:
                raise InvalidInputError(f"{name} must be >= 1, got {getattr(self, name)}")
        try:
            MemoryContext(**self.recall)
        except TypeError as e:
            raise InvalidInputError(f"unknown recall option: {e}") from e
        if self.pick not in PICKS:
            raise InvalidInputError(f"unknown pick {self.pick!r}; use one of {PICKS}")
        for name in ("questions", "adversarial", "sessions"):
            value = getattr(self, name)
            if value is not None and value < 0:
                raise InvalidInputError(f"{name} must be >= 0, got {value}")
        if not 0 <= self.chunk_overlap < self.chunk_words:
            raise InvalidInputError("chunk_overlap must be >= 0 and smaller than chunk_words")
        for name in ("context_window", "long_context_window"):
            if getattr(self, name) < self.answer_budget + 512:
                raise InvalidInputError(
                    f"{name} {getattr(self, name)} leaves no room for a transcript; "
                    "give the model's real window (e.g. 8192 or 32768)"
                )

    def fingerprint(self, models: EvalModels) -> dict[str, Any]:
        """What must match for a run to be resumed (the data by content, not by path)."""
        data = asdict(self)
        data["data"] = f"{self.data.name} sha256:{file_sha256(self.data)}"
        data.pop("out")
        data.pop("construction_dir")
        for key in UNFINGERPRINTED:
            data.pop(key)
        for key in ("recall", "exclude"):  # recorded only when used: older runs resume
            if not data[key]:
                data.pop(key)
        data["model"] = models.model_name
        data["judge_model"] = models.judge_name if self.judge else None
        data["embeddings"] = type(models.embeddings).__name__
        return data


@dataclass
class EvalModels:
    """The models of a run: one chat model for every system, the judge, the embedder."""

    chat_model: BaseChatModel
    embeddings: Embeddings
    model_name: str
    judge_model: BaseChatModel | None = None
    """None: the chat model judges too."""
    judge_name: str | None = None
    counter: TokenCounter = field(default_factory=WordPieceCounter)

    @property
    def judge_label(self) -> str:
        """The judge as recorded."""
        return self.judge_name or f"{self.model_name} (same as the answer model)"


Progress = Callable[..., Any]


def system_id(name: str, policy: str, policies: Sequence[str]) -> str:
    """``memstrata`` or, with several policies, ``memstrata@<policy>``."""
    if name in (MEMSTRATA, MEMSTRATA_RETRIEVAL) and len(policies) > 1:
        return f"{name}@{policy}"
    return name


def needed_stages(settings: EvalSettings) -> list[str]:
    """The ingest stages the settings' systems read, in order."""
    stages: list[str] = []
    for name in settings.systems:
        if name in (MEMSTRATA, MEMSTRATA_RETRIEVAL):
            stages += [memstrata_stage(p) for p in settings.policies]
        elif name == NAIVE_RAG:
            stages.append(CHUNK_STAGE)
        elif name == FLAT:
            stages.append(RAW_STAGE)
    return list(dict.fromkeys(stages))


def open_caches(settings: EvalSettings, models: EvalModels) -> dict[str, ConstructionCache]:
    """The construction store of every needed stage (created when missing)."""
    inputs = KeyInputs(
        data_sha256=file_sha256(settings.data),
        embeddings=type(models.embeddings).__name__,
        model=re.sub(r",? n_ctx \d+", "", models.model_name),  # the window builds nothing
        batch_size=settings.batch_size,
        chunk_words=settings.chunk_words,
        chunk_overlap=settings.chunk_overlap,
        sessions=settings.sessions,
    )
    root = settings.construction_root
    return {
        stage: ConstructionCache.open(root, construction_key(stage, inputs), models.embeddings)
        for stage in needed_stages(settings)
    }


def build_systems(
    settings: EvalSettings, models: EvalModels, caches: dict[str, ConstructionCache]
) -> list[EvalSystem]:
    """The systems the settings name, in order (memstrata ones once per policy)."""
    caller = StructuredCaller(
        models.chat_model, method=settings.structured_method, max_attempts=settings.max_attempts
    )
    answerer = Answerer(caller, models.counter)
    out: list[EvalSystem] = []
    for name in settings.systems:
        if name in (MEMSTRATA, MEMSTRATA_RETRIEVAL):
            for policy in settings.policies:
                store = caches[memstrata_stage(policy)].store
                graph = build_recall_graph(
                    chat_model=models.chat_model,
                    store=store,
                    structured_method=settings.structured_method,
                    max_attempts=settings.max_attempts,
                    count_tokens=models.counter.count,  # the budget the report measures
                ).compile()
                out.append(
                    MemstrataSystem(
                        name=system_id(name, policy, settings.policies),
                        graph=graph,
                        policy=policy,
                        counter=models.counter,
                        answerer=answerer if name == MEMSTRATA_RETRIEVAL else None,
                        recall=dict(settings.recall),
                    )
                )
        elif name in (FULL_CONTEXT, FULL_CONTEXT_LONG):
            long = name == FULL_CONTEXT_LONG
            out.append(
                FullContextSystem(
                    answerer=answerer,
                    counter=models.counter,
                    context_window=settings.long_context_window
                    if long
                    else settings.context_window,
                    answer_budget=settings.answer_budget,
                    name=name,
                )
            )
        elif name == NAIVE_RAG:
            out.append(
                naive_rag(caches[CHUNK_STAGE].store, answerer, models.counter, settings.rag_k)
            )
        elif name == FLAT:
            out.append(flat(caches[RAW_STAGE].store, answerer, models.counter, settings.top_k))
        elif name == ORACLE:
            out.append(OracleSystem(answerer=answerer, counter=models.counter))
    return out


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
    recorded = headers[0].fingerprint
    keys = (set(recorded) | set(fingerprint)) - set(UNFINGERPRINTED)
    changed = sorted(k for k in keys if recorded.get(k) != fingerprint.get(k))
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
    settings.out.mkdir(parents=True, exist_ok=True)
    unknown = sorted(set(redo) - set(settings.systems))
    if unknown:
        raise InvalidInputError(
            f"--redo names systems this run does not answer: {', '.join(unknown)}; "
            f"choose from {', '.join(settings.systems)}"
        )
    journal = _open_journal(settings, models, fresh)
    if redo:
        journal.append(Redo(systems=sorted(set(redo)), at=datetime.now(UTC).isoformat()))
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
    _ingest(settings, models, subset, caches, journal, progress)
    _answer(subset, systems, journal, journal.read(), judge, progress)
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
        "started": header.started,
        "finished": datetime.now(UTC).isoformat(),
    }
    results = [with_text(r, subset) for r in answers_of(entries)]
    run_meta["code_versions"] = code_versions(results)
    output = RunOutput(results, ingests_of(entries), run_meta, settings.out)
    from .outputs import write_outputs  # matplotlib is imported only when writing

    write_outputs(output, plots=plots, keep_text=keep_text)
    return output


def _bar(total: int, desc: str, unit: str, progress: bool) -> Any:
    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, disable=not progress or None)


def _ingest(
    settings: EvalSettings,
    models: EvalModels,
    subset: Subset,
    caches: dict[str, ConstructionCache],
    journal: Journal,
    progress: bool,
) -> None:
    """Build what the stages' stores still lack; copy the batches into the run's journal."""
    ingestors: dict[str, Ingestor] = {}
    for stage, cache in caches.items():
        graph = None
        if stage.startswith(MEMSTRATA_STAGE):  # only memstrata's stages call the model
            graph = build_ingest_graph(
                chat_model=models.chat_model,
                store=cache.store,
                structured_method=settings.structured_method,
                max_attempts=settings.max_attempts,
            ).compile()
        ingestors[stage] = Ingestor(
            store=cache.store,
            graph=graph,
            batch_size=settings.batch_size,
            chunk_words=settings.chunk_words,
            chunk_overlap=settings.chunk_overlap,
            done={s.key for s in cache.steps()},
            record=cache.record,
        )
    plan = [(stage, conv) for conv in subset.conversations for stage in caches]
    total = sum(ingestors[stage].planned_turns(stage, conv) for stage, conv in plan)
    with _bar(total, "ingest", "turn", progress) as bar:
        for stage, conv in plan:
            bar.set_postfix_str(f"{stage} {conv.sample_id}")
            ingestors[stage].advance = bar.update
            ingestors[stage].run(stage, conv)
    recorded = {(i.stage, i.conversation, i.batch) for i in ingests_of(journal.read())}
    wanted = {conv.sample_id for conv in subset.conversations}
    for cache in caches.values():
        for step in cache.steps():
            if step.conversation in wanted and step.key not in recorded:
                journal.append(step)
                recorded.add(step.key)


def _answer(
    subset: Subset,
    systems: Sequence[EvalSystem],
    journal: Journal,
    entries: Sequence[Any],
    judge: Judge | None,
    progress: bool,
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
    with _bar(len(plan), "answer", "question", progress) as bar:
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
    from ..prompts.eval import EVAL_ANSWER
    from ..prompts.recall import JUDGE_ANSWER

    def text(template: Any) -> str:
        return "\n".join(
            f"[{type(m).__name__.removesuffix('MessagePromptTemplate').lower()}] "
            f"{getattr(getattr(m, 'prompt', None), 'template', m)}"
            for m in template.messages
        )

    return {
        "shared answer (prompts/eval.py EVAL_ANSWER)": text(EVAL_ANSWER),
        "memstrata Judge + answer (prompts/recall.py JUDGE_ANSWER)": text(JUDGE_ANSWER),
    }


__all__ = ["EvalModels", "EvalSettings", "RunOutput", "run_evaluation"]
