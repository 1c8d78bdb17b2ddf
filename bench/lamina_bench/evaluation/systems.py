"""The systems an evaluation run compares, all on the same chat model.

* ``lamina``: the full recall graph (pooled retrieval -> the Judge's combined call ->
  rewrite/retry or refresh -> its own answer), over memory built by the ingest graph with
  the run's trigger policy: the product end to end;
* ``lamina-retrieval``: lamina's pooled context (the recall graph in retrieval-only
  mode, no LLM call) through the shared answer prompt: the context itself, judged on the
  same terms as the baselines';
* ``full-context``: the whole dated conversation, truncated to the model's window
  (the most recent turns are kept), then the shared answer prompt;
* ``full-context-long``: the same over a long window (32k by default), which holds a
  whole LoCoMo conversation; the transcript comes first and the question last, so a
  serving model's prompt cache reuses it across a conversation's questions;
* ``naive-rag``: fixed-size word chunks of the transcript, dense top-k;
* ``flat``: hybrid (dense + BM25) search over the raw turns, top-k, no Judge loop;
* ``oracle``: the question's gold evidence turns through the shared answer prompt (an
  upper bound for retrieval, not a system);
* ``derived-oracle``: lamina-retrieval's path (pooled context, shared answer prompt) over
  lamina's raw layer with LoCoMo's hand-written observations, event and session summaries
  as the derived layers: how much good derived memory can add (a ceiling, not a system);
* ``mem0`` and ``langmem``: the peer libraries a LangGraph user would pick instead (the
  optional ``lamina-bench[peers]`` extra), each building its own memory from the same batches and
  answering through the shared answer prompt from what its own search returns (see
  :mod:`lamina_bench.evaluation.peers`).

Each returns a :class:`SystemAnswer` with the dialogue ids of what the answer was given,
so evidence recall is measured on the memories actually used.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Protocol
from zoneinfo import ZoneInfo

from lamina.agents.common.formatting import data_line, long_date
from lamina.agents.recall.context import render_for, render_turn
from lamina.core.context import TriggerPolicy
from lamina.graphs import Candidate, MemoryContext
from lamina.records import RawTurn
from lamina.stores import ChromaMemoryStore

from ..datasets.locomo import Conversation
from .answering import Answerer
from .ingest import CHUNK_STAGE, RAW_STAGE, lamina_stage, raw_id_to_dia, stage_namespace
from .prompts import NOT_MENTIONED
from .records import ANSWER_STEP_FAILED, Costs, costs_of, merge_costs
from .subset import EvalQuestion
from .transcripts import TokenCounter, Transcript, transcript

LAMINA: Final = "lamina"
LAMINA_RETRIEVAL: Final = "lamina-retrieval"
FULL_CONTEXT: Final = "full-context"
FULL_CONTEXT_LONG: Final = "full-context-long"
NAIVE_RAG: Final = "naive-rag"
FLAT: Final = "flat"
ORACLE: Final = "oracle"
DERIVED_ORACLE: Final = "derived-oracle"
MEM0: Final = "mem0"
LANGMEM: Final = "langmem"
GRAPHITI: Final = "graphiti"
PEERS: tuple[str, ...] = (MEM0, LANGMEM, GRAPHITI)
"""The peer libraries (optional: ``pip install './bench[peers]'``)."""
SYSTEMS: tuple[str, ...] = (
    LAMINA,
    LAMINA_RETRIEVAL,
    FULL_CONTEXT,
    FULL_CONTEXT_LONG,
    NAIVE_RAG,
    FLAT,
    ORACLE,
    DERIVED_ORACLE,
    *PEERS,
)
BASELINES: tuple[str, ...] = (FULL_CONTEXT, FULL_CONTEXT_LONG, NAIVE_RAG, FLAT)
"""The systems lamina must beat (the oracle is an upper bound, not a rival)."""
UTC_ZONE = ZoneInfo("UTC")


@dataclass
class SystemAnswer:
    """One system's answer and what it used and cost."""

    answer: str
    refused: bool
    used: list[str]
    """Dialogue ids of every turn the answer was given (or a used memory came from)."""
    costs: Costs
    context_tokens: int
    cited: list[str] | None = None
    rounds: int = 0
    failures: int = 0
    notes: list[str] = field(default_factory=list)
    latency_s: float = 0.0
    fallbacks: int = 0
    """lamina: plain answer calls made because the combined call's output was unusable."""
    answer_source: str | None = None


class EvalSystem(Protocol):
    """A system under evaluation."""

    @property
    def name(self) -> str:
        """The system's name in the results."""
        ...

    @property
    def stage(self) -> str | None:
        """The ingest stage it needs (None: none)."""
        ...

    def answer(self, conv: Conversation, question: EvalQuestion) -> SystemAnswer:
        """Answer one question about ``conv``."""
        ...


def speakers_of(conv: Conversation) -> str:
    """``A and B``."""
    return " and ".join(conv.speakers)


def turn_entry(n: int, turn: RawTurn) -> str:
    """One retrieved turn, verbatim, in the line format lamina's context uses too."""
    return render_turn(
        f"t{n}", turn.occurred_at, turn.speaker, turn.text, turn.media_caption, UTC_ZONE
    )


def _dia_of_candidates(candidates: Sequence[Candidate], to_dia: dict[str, str]) -> list[str]:
    out: list[str] = []
    for c in candidates:
        ids = [c.id] if c.granularity == "raw" else c.source_ids
        out.extend(to_dia[i] for i in ids if i in to_dia)
    return list(dict.fromkeys(out))


@dataclass
class LaminaSystem:
    """lamina's recall graph: end to end, or its pooled context through the shared answer."""

    name: str
    graph: Any
    """The compiled recall graph (its context budget counted with ``counter``)."""
    policy: str
    counter: TokenCounter
    answerer: Answerer | None = None
    """Set for the context-only system: the shared answer step."""
    recall: dict[str, Any] = field(default_factory=dict)
    """``MemoryContext`` overrides (``--recall-option``; the research arms are the
    graph's)."""
    built_by: str | None = None
    """The ingest stage it reads (None: lamina's stage of ``policy``)."""

    @property
    def stage(self) -> str:
        """The ingest stage it reads: lamina's stage of the policy unless ``built_by``."""
        return self.built_by or lamina_stage(self.policy)

    def answer(self, conv: Conversation, question: EvalQuestion) -> SystemAnswer:
        """Run the recall graph; in retrieval-only mode, then the shared answer."""
        namespace = stage_namespace(self.stage, conv.sample_id)
        policy: TriggerPolicy = self.policy  # type: ignore[assignment]  # checked by MemoryContext
        ctx = MemoryContext(namespace=namespace, trigger_policy=policy, **self.recall)
        to_dia = raw_id_to_dia(namespace, conv)
        mode = "answer" if self.answerer is None else "retrieve"
        started = time.perf_counter()
        out = self.graph.invoke({"question": question.text, "mode": mode}, context=ctx)
        candidates: list[Candidate] = list(out.get("candidates", []))
        memories, _ = render_for(candidates, ctx, UTC_ZONE)
        costs = costs_of(out.get("llm_calls", []))
        source = out.get("answer_source")
        found = SystemAnswer(
            answer=str(out.get("answer", "")),
            refused=bool(out.get("refused", False)),
            used=_dia_of_candidates(candidates, to_dia),
            costs=costs,
            context_tokens=self.counter.count(memories) if candidates else 0,
            rounds=int(out.get("rounds", 0)),
            failures=len(out.get("failures", [])),
            fallbacks=int(source == "fallback"),
            answer_source=str(source) if source else None,
        )
        if self.answerer is None:
            by_id = {c.id: c for c in candidates}
            cited = [by_id[i] for i in out.get("citations", []) if i in by_id]
            found.cited = _dia_of_candidates(cited, to_dia)
            found.notes = ["combined call failed: plain answer call"] if found.fallbacks else []
        else:
            result = self.answerer.answer(
                speakers=speakers_of(conv),
                kind="memories",
                context=memories if candidates else "",
                question=question.text,
            )
            found.answer, found.refused = result.text, False
            found.costs = merge_costs(costs, result.costs)
            found.notes = [ANSWER_STEP_FAILED] if result.failed else []
        found.latency_s = time.perf_counter() - started
        return found


@dataclass
class FullContextSystem:
    """The whole conversation in the prompt, truncated to the context window."""

    answerer: Answerer
    counter: TokenCounter
    context_window: int
    answer_budget: int
    """Tokens reserved for the reply."""
    margin: float = 0.9
    """Share of the remaining window used, for tokenizer differences."""
    name: str = FULL_CONTEXT
    """``full-context`` (the model's usual window) or ``full-context-long``."""
    stage: str | None = None
    _cache: dict[str, Transcript] = field(default_factory=dict)

    def budget(self, conv: Conversation, question: EvalQuestion) -> int:
        """Tokens left for the transcript after the prompt, the question and the reply."""
        empty = self.answerer.messages(
            speakers=speakers_of(conv), kind="conversation sessions", context="", question=""
        )
        overhead = self.counter.count("\n".join(str(m.content) for m in empty)) + 200
        return int((self.context_window - self.answer_budget - overhead) * self.margin)

    def transcript(self, conv: Conversation, question: EvalQuestion) -> Transcript:
        """The truncated transcript (the same for every question of a conversation)."""
        if conv.sample_id not in self._cache:
            budget = max(0, self.budget(conv, question))
            self._cache[conv.sample_id] = transcript(conv, budget, self.counter)
        return self._cache[conv.sample_id]

    def answer(self, conv: Conversation, question: EvalQuestion) -> SystemAnswer:
        """Answer from the (truncated) transcript."""
        started = time.perf_counter()
        text = self.transcript(conv, question)
        result = self.answerer.answer(
            speakers=speakers_of(conv),
            kind="conversation sessions",
            context=text.text,
            question=question.text,
        )
        notes = [f"truncated: oldest {text.dropped} turns left out"] if text.dropped else []
        return SystemAnswer(
            answer=result.text,
            refused=False,
            used=text.kept,
            costs=result.costs,
            context_tokens=text.tokens,
            notes=notes + ([ANSWER_STEP_FAILED] if result.failed else []),
            latency_s=time.perf_counter() - started,
        )


@dataclass
class SearchSystem:
    """Retrieve top-k from one stage's namespace, then the shared answer (no Judge loop)."""

    name: str
    stage: str
    store: ChromaMemoryStore
    answerer: Answerer
    counter: TokenCounter
    k: int
    mode: str
    """``dense`` (naive RAG) or ``hybrid`` (flat)."""

    def answer(self, conv: Conversation, question: EvalQuestion) -> SystemAnswer:
        """Search, format, answer."""
        started = time.perf_counter()
        namespace = stage_namespace(self.stage, conv.sample_id)
        hits = self.store.search(question.text, "raw", namespace, k=self.k, mode=self.mode)  # type: ignore[arg-type]
        records = [h.record for h in hits if isinstance(h.record, RawTurn)]
        if self.stage == CHUNK_STAGE:
            records.sort(key=lambda r: r.turn_index)
            context = "\n".join(
                f"[c{n}] ({long_date(r.occurred_at, UTC_ZONE)}) {data_line(r.text)}"
                for n, r in enumerate(records, start=1)
            )
            used = [d for r in records for d in str(r.metadata.get("dia_ids", "")).split()]
            kind = "conversation excerpts"
        else:
            records.sort(key=lambda r: (r.occurred_at, r.session_id, r.turn_index))
            context = "\n".join(turn_entry(n, r) for n, r in enumerate(records, start=1))
            used = [str(r.metadata["dia_id"]) for r in records if "dia_id" in r.metadata]
            kind = "conversation turns"
        result = self.answerer.answer(
            speakers=speakers_of(conv), kind=kind, context=context, question=question.text
        )
        return SystemAnswer(
            answer=result.text,
            refused=False,
            used=list(dict.fromkeys(used)),
            costs=result.costs,
            context_tokens=self.counter.count(context) if records else 0,
            notes=[ANSWER_STEP_FAILED] if result.failed else [],
            latency_s=time.perf_counter() - started,
        )


def naive_rag(
    store: ChromaMemoryStore, answerer: Answerer, counter: TokenCounter, k: int
) -> SearchSystem:
    """Dense top-k over fixed-size chunks."""
    return SearchSystem(NAIVE_RAG, CHUNK_STAGE, store, answerer, counter, k, "dense")


def flat(
    store: ChromaMemoryStore, answerer: Answerer, counter: TokenCounter, k: int
) -> SearchSystem:
    """Hybrid top-k over raw turns, no Judge loop."""
    return SearchSystem(FLAT, RAW_STAGE, store, answerer, counter, k, "hybrid")


@dataclass
class OracleSystem:
    """The question's gold evidence turns, verbatim, through the shared answer prompt."""

    answerer: Answerer
    counter: TokenCounter
    name: str = ORACLE
    stage: str | None = None

    def answer(self, conv: Conversation, question: EvalQuestion) -> SystemAnswer:
        """Answer from exactly the evidence turns (in conversation order)."""
        started = time.perf_counter()
        wanted = set(question.evidence)
        turns = [t for t in conv.turns if t.dia_id in wanted]
        context = "\n".join(
            render_turn(f"t{n}", t.occurred_at, t.speaker, t.text, t.caption, UTC_ZONE)
            for n, t in enumerate(turns, start=1)
        )
        result = self.answerer.answer(
            speakers=speakers_of(conv), kind="conversation turns", context=context,
            question=question.text,
        )  # fmt: skip
        return SystemAnswer(
            answer=result.text,
            refused=False,
            used=[t.dia_id for t in turns],
            costs=result.costs,
            context_tokens=self.counter.count(context) if turns else 0,
            notes=[ANSWER_STEP_FAILED] if result.failed else [],
            latency_s=time.perf_counter() - started,
        )


def scored_answer(answer: SystemAnswer) -> str:
    """The answer as scored: a refusal by the system becomes LoCoMo's refusal wording."""
    return NOT_MENTIONED if answer.refused else answer.answer
