"""What the evaluation harness records: LLM cost per node, per-question results, ingest steps.

Every finished ingest batch and every answered question is one JSON line in the run's
journal (:class:`Journal`), so a crashed run continues where it stopped. The journal
holds no text of the dataset (:data:`DATASET_TEXT`: LoCoMo is CC BY-NC), so it can be
committed as it grows and a run can continue on another machine; the harness joins the
text back in from the data file by question id.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from lamina.errors import InvalidInputError
from lamina.graphs import LLMCall


class NodeCost(BaseModel):
    """LLM calls, tokens and latency of one node (summed)."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    estimated_calls: int = 0
    """Calls whose token counts were estimated from text (the model reported no usage)."""
    unknown_calls: int = 0
    """Calls with no usage and no text to estimate from (counted as 0 tokens)."""

    @property
    def tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens

    def add(self, other: NodeCost) -> NodeCost:
        """The sum of both."""
        return NodeCost(
            calls=self.calls + other.calls,
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            latency_s=self.latency_s + other.latency_s,
            estimated_calls=self.estimated_calls + other.estimated_calls,
            unknown_calls=self.unknown_calls + other.unknown_calls,
        )


Costs = dict[str, NodeCost]
"""Cost per node name."""


def costs_of(calls: Iterable[LLMCall], *, estimate: tuple[int, int] | None = None) -> Costs:
    """Sum call records per node.

    Args:
        calls: The records.
        estimate: (prompt, completion) token estimates used for calls without usage; the
            calls are then counted as estimated, otherwise as unknown.
    """
    out: Costs = {}
    for call in calls:
        cost = NodeCost(calls=1, latency_s=call.latency_s)
        if call.prompt_tokens is not None or call.completion_tokens is not None:
            cost.prompt_tokens = call.prompt_tokens or 0
            cost.completion_tokens = call.completion_tokens or 0
        elif estimate is not None:
            cost.prompt_tokens, cost.completion_tokens = estimate
            cost.estimated_calls = 1
        else:
            cost.unknown_calls = 1
        out[call.node] = out.get(call.node, NodeCost()).add(cost)
    return out


def merge_costs(*parts: Mapping[str, NodeCost]) -> Costs:
    """Add cost tables node by node."""
    out: Costs = {}
    for part in parts:
        for node, cost in part.items():
            out[node] = out.get(node, NodeCost()).add(cost)
    return dict(sorted(out.items()))


def total(costs: Mapping[str, NodeCost]) -> NodeCost:
    """All nodes together."""
    out = NodeCost()
    for cost in costs.values():
        out = out.add(cost)
    return out


DATASET_TEXT = ("question", "gold", "adversarial_answer", "judge_reason")
"""Per-question fields that hold (or, for the judge's reason, often quote) the dataset's
own text. The journal never stores them; ``results.json`` only when asked."""


ANSWER_STEP_FAILED = "answer step failed"
"""The note of an answer whose answer step failed (see ``QuestionResult.step_failed``)."""


class QuestionResult(BaseModel):
    """One system's answer to one question, with every score."""

    kind: Literal["answer"] = "answer"
    system: str
    conversation: str
    qid: str
    category: int
    question: str = ""
    gold: str = ""
    """The gold answer; for category 5, LoCoMo's refusal wording."""
    adversarial_answer: str | None = None
    """Category 5: the plausible but unsupported answer the question baits."""
    evidence: list[str] = Field(default_factory=list)
    answer: str
    """The answer as scored (a system's refusal becomes the refusal wording)."""
    raw_answer: str
    refused: bool
    mem0_f1: float | None = None
    bleu1: float | None = None
    locomo_f1: float
    judge_label: str | None = None
    """CORRECT / WRONG from the judge; ERROR if it gave no valid label; None (category 5,
    or no judge) when not judged."""
    judge_reason: str = ""
    refusal_correct: bool | None = None
    """Category 5 only: whether the system refused."""
    used_evidence: list[str] = Field(default_factory=list)
    """Dialogue ids of every turn the answer was given (or that a used memory came from)."""
    turn_recall: float | None = None
    session_recall: float | None = None
    cited_turn_recall: float | None = None
    """lamina's full graph: turn-recall of the memories the answer cited."""
    context_tokens: int = 0
    """Tokens of the context the answer model was shown (fixed tokenizer)."""
    answering: Costs = Field(default_factory=dict)
    judging: Costs = Field(default_factory=dict)
    latency_s: float = 0.0
    rounds: int = 0
    failures: int = 0
    fallbacks: int = 0
    """lamina: plain answer calls made because the combined call's output was unusable."""
    answer_source: str | None = None
    """lamina: draft, fallback, after_refresh or no_memories."""
    notes: list[str] = Field(default_factory=list)
    code: str = ""
    """A hash of lamina's source (``evaluation.code_version``) when the answer was made,
    so a report can say which answers came from which version of the code."""

    @property
    def step_failed(self) -> bool:
        """The answer step itself failed (a timeout, an HTTP error): no answer was made."""
        return ANSWER_STEP_FAILED in self.notes

    @property
    def key(self) -> tuple[str, str]:
        """(system, question id): what resume skips."""
        return self.system, self.qid


class IngestStep(BaseModel):
    """One finished ingest batch of one stage for one conversation."""

    kind: Literal["ingest"] = "ingest"
    stage: str
    conversation: str
    batch: int
    batches: int
    turns: int
    new_raw: int = 0
    written: int = 0
    failures: int = 0
    construction: Costs = Field(default_factory=dict)
    seconds: float = 0.0
    cache_key: str = ""
    """The construction store the batch was built into (see ``evaluation.construction``)."""
    kept_replies: int = 0
    """LLM calls of the batch answered from kept replies (``evaluation.reply_cache``): a
    batch built again from another build's replies; its seconds are not the model's."""
    error: str | None = None
    """A peer's batch that raised on both tries (see ``evaluation.peers.ingest``): the last
    error; the batch counts as failed and is not sent again."""

    @property
    def key(self) -> tuple[str, str, int]:
        """(stage, conversation, batch): what resume skips."""
        return self.stage, self.conversation, self.batch


@dataclass
class RunOutput:
    """What a run produced: the answers, the ingest steps, the run's metadata and folder."""

    results: list[QuestionResult]
    ingests: list[IngestStep]
    meta: dict[str, Any]
    out: Path


class RunHeader(BaseModel):
    """The first journal line: what the run is, so a resume cannot mix two runs."""

    kind: Literal["run"] = "run"
    fingerprint: dict[str, Any]
    started: str
    """Everything that changes the results: data, subset, systems, models, options."""


class Redo(BaseModel):
    """A journal line that starts some systems' answers over (``--redo``).

    The journal stays append-only: answers of these systems written before this line no
    longer count, and the next run answers their questions again.
    """

    kind: Literal["redo"] = "redo"
    systems: list[str]
    at: str
    """When it was asked for (ISO 8601, UTC)."""
    failed_only: bool = False
    """Only their answers whose answer step failed (``--redo-failed``) stop counting."""


JournalLine = RunHeader | IngestStep | QuestionResult | Redo


class Journal:
    """An append-only JSONL file of finished steps; each line is flushed to disk."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def read(self) -> list[JournalLine]:
        """Every complete line; a torn last line (a crash while writing) is removed.

        Raises:
            InvalidInputError: a line in the middle of the file is not a journal entry.
        """
        if not self.path.exists():
            return []
        lines = self.path.read_text(encoding="utf-8").splitlines()
        out: list[JournalLine] = []
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                out.append(_parse(json.loads(line)))
            except (json.JSONDecodeError, ValidationError, KeyError) as e:
                if number == len(lines):  # torn write of the last line: drop it, redo the step
                    kept = "".join(f"{x}\n" for x in lines[: number - 1])
                    self.path.write_text(kept, encoding="utf-8")
                    break
                raise InvalidInputError(
                    f"{self.path}:{number} is not a journal entry ({e}); "
                    "remove the output folder or pass --fresh to start over"
                ) from e
        return out

    def append(self, entry: JournalLine) -> None:
        """Write one line (without the dataset's text) and push it to disk."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        exclude = set(DATASET_TEXT) if isinstance(entry, QuestionResult) else None
        text = entry.model_dump_json(exclude=exclude)
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(text + "\n")
            handle.flush()
            os.fsync(handle.fileno())


def _parse(data: dict[str, Any]) -> JournalLine:
    kind = data["kind"]
    if kind == "run":
        return RunHeader.model_validate(data)
    if kind == "ingest":
        return IngestStep.model_validate(data)
    if kind == "answer":
        return QuestionResult.model_validate(data)
    if kind == "redo":
        return Redo.model_validate(data)
    raise KeyError(f"unknown kind {kind!r}")


def answers_of(entries: Sequence[JournalLine]) -> list[QuestionResult]:
    """The question results that count, in journal order.

    A :class:`Redo` line drops the answers written before it by the systems it names
    (with ``failed_only``, only those whose answer step failed).
    """
    kept: list[QuestionResult] = []
    for entry in entries:
        if isinstance(entry, QuestionResult):
            kept.append(entry)
        elif isinstance(entry, Redo):
            redone = set(entry.systems)
            kept = [
                r
                for r in kept
                if r.system not in redone or (entry.failed_only and not r.step_failed)
            ]
    return kept


def ingests_of(
    entries: Sequence[JournalLine], stores: Mapping[str, str] | None = None
) -> list[IngestStep]:
    """The ingest steps, in journal order.

    ``stores``: stage -> the construction store (its key) the run builds that stage into.
    A stage's batches of another store no longer count (its memory was rebuilt under a new
    key; the old build's lines stay in the append-only journal). Batches journaled before
    a batch named its store, and stages the run does not build, are kept.
    """
    steps = [e for e in entries if isinstance(e, IngestStep)]
    if stores is None:
        return steps
    return [s for s in steps if not s.cache_key or stores.get(s.stage, s.cache_key) == s.cache_key]
