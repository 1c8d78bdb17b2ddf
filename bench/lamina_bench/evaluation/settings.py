"""What an evaluation run is: its settings (recorded as the journal's fingerprint) and models.

:class:`EvalSettings` holds everything that decides a run's answers; its
:meth:`~EvalSettings.fingerprint` must match for a stopped run to be resumed.
:class:`EvalModels` holds the chat model every system shares, the judge and the embedder.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel

from lamina.core.context import DEFAULT_TRIGGER_POLICY, TRIGGER_POLICIES
from lamina.errors import InvalidInputError
from lamina.graphs import MemoryContext, ResearchArms
from lamina.llm.structured import StructuredMethod

from .construction import file_sha256
from .peers import require_peers
from .records import Journal, RunHeader
from .subset import PICKS, Pick, load_subset
from .systems import FLAT, FULL_CONTEXT, LAMINA, NAIVE_RAG, SYSTEMS
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
    systems: list[str] = field(default_factory=lambda: [LAMINA, NAIVE_RAG, FULL_CONTEXT, FLAT])
    policies: list[str] = field(default_factory=lambda: [DEFAULT_TRIGGER_POLICY])
    """lamina's trigger policies (default: the library's own)."""
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
    """``MemoryContext`` and :class:`~lamina.graphs.ResearchArms` overrides for lamina's
    systems (a design under comparison; :func:`split_recall` sorts them)."""
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
        require_peers(self.systems)
        bad = [p for p in self.policies if p not in TRIGGER_POLICIES]
        if bad or not self.policies:
            raise InvalidInputError(f"unknown policies {bad}; choose from {TRIGGER_POLICIES}")
        names = ("batch_size", "top_k", "rag_k", "chunk_words", "context_window")
        for name in (*names, "long_context_window"):
            if getattr(self, name) < 1:
                raise InvalidInputError(f"{name} must be >= 1, got {getattr(self, name)}")
        try:
            _, context = split_recall(self.recall)
            MemoryContext(**context)
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
    start: Callable[[], object] | None = None
    """Makes ``chat_model`` able to answer, e.g. loads and serves a local model (the
    chat model is then a client of a server that is not started yet); None: it answers
    as it is. :meth:`ready` calls it once, then sets it to None."""

    @property
    def judge_label(self) -> str:
        """The judge as recorded."""
        return self.judge_name or f"{self.model_name} (same as the answer model)"

    def ready(self) -> None:
        """Start the chat model (see :attr:`start`) unless it runs already.

        The harness calls this just before the first step that asks a model anything
        (building memory, answering, judging), so a run with nothing left to do, such as
        a finished run resumed or an ``--interim`` report, never loads a local model.
        """
        if self.start is not None:
            self.start()
            self.start = None


ARM_FIELDS = frozenset(f.name for f in fields(ResearchArms))
"""The recall options that are research arms (the graph's), not context fields."""


def split_recall(options: dict[str, Any]) -> tuple[ResearchArms, dict[str, Any]]:
    """``--recall-option`` settings as the graph's arms and the run's context overrides.

    Raises:
        InvalidInputError: An arm's value is out of its range.
    """
    arms = {k: v for k, v in options.items() if k in ARM_FIELDS}
    for name in ("context_kinds", "aggregation_kinds"):
        if name in arms:  # JSON gives a list
            arms[name] = tuple(arms[name])
    context = {k: v for k, v in options.items() if k not in ARM_FIELDS}
    return ResearchArms(**arms), context


def parse_recall_options(pairs: Sequence[str]) -> dict[str, Any]:
    """``KEY=VALUE`` pairs as MemoryContext overrides (values parsed as JSON, else text)."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise InvalidInputError(f"--recall-option takes KEY=VALUE, got {pair!r}")
        try:
            out[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            out[key.strip()] = value
    return out


def questions_of_run(run: Path | None, data: Path) -> list[str]:
    """The question ids another run chose (from its journal's settings), sorted."""
    if run is None:
        return []
    headers = [e for e in Journal(run / JOURNAL).read() if isinstance(e, RunHeader)]
    if not headers:
        raise InvalidInputError(f"--exclude-run: {run / JOURNAL} holds no run")
    fp = headers[0].fingerprint
    subset = load_subset(
        data,
        conversations=fp.get("conversations"),
        categories=fp.get("categories", [1, 2, 3, 4, 5]),
        questions=fp.get("questions"),
        adversarial=fp.get("adversarial"),
        sessions=fp.get("sessions"),
        pick=fp.get("pick", "spread"),
        exclude=fp.get("exclude", []),
    )
    return sorted(q.qid for qs in subset.questions.values() for q in qs)
