"""Streaming LoCoMo turns through the ingest graph, with each turn's cost journalled.

Shared by the construction benchmarks (:mod:`construction_cost`,
:mod:`construction_quality`): each conversation is sent turn by turn, as a chat agent
would send it, and every turn's LLM calls, tokens, seconds (in all, and inside each
step's LLM calls), failures and dropped lines are summed per policy. With ``resume`` a
real model's run is journalled turn by turn on disk, so a run cut short goes on.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from importlib import resources
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from tokenizers import BertWordPieceTokenizer

from lamina.core.context import SMALL_MODEL_PROFILE, MemoryContext
from lamina.embedders import MiniLMEmbeddings
from lamina.graphs.ingest import build_ingest_graph
from lamina.stores import ChromaMemoryStore
from lamina.testing import SchemaChatModel
from lamina_bench.datasets.locomo import Conversation
from lamina_bench.evaluation.construction import split_construction
from lamina_bench.evaluation.resume_journal import ResumeJournal

POLICIES = ("eager", "recurrence", "session", "boundary")
TURN_SPACING = timedelta(seconds=30)
"""LoCoMo only dates sessions; turns are spaced this far apart inside one."""


def fixed_tokenizer() -> BertWordPieceTokenizer:
    """The bundled WordPiece vocabulary, without truncation: a fixed, offline token count."""
    vocab = resources.files("lamina.embedders.resources").joinpath("vocab.txt")
    with resources.as_file(vocab) as path:
        return BertWordPieceTokenizer(str(path), lowercase=True)


def count_tokens(tokenizer: BertWordPieceTokenizer, text: str) -> int:
    """Tokens of ``text`` without the [CLS]/[SEP] markers."""
    return max(0, len(tokenizer.encode(text).ids) - 2)


def turn_inputs(conv: Conversation) -> list[tuple[dict[str, Any], bool]]:
    """Every turn as an ingest input, with whether it closes its session."""
    out = []
    for i, turn in enumerate(conv.turns):
        last = i + 1 == len(conv.turns) or conv.turns[i + 1].session_id != turn.session_id
        out.append(
            (
                {
                    "speaker": turn.speaker,
                    "text": turn.text,
                    "occurred_at": turn.occurred_at + turn.turn_index * TURN_SPACING,
                    "session_id": turn.session_id,
                    "turn_index": turn.turn_index,
                    "media_caption": turn.caption,
                },
                last,
            )
        )
    return out


@dataclass
class PolicyCost:
    """What one policy cost on one set of conversations."""

    policy: str
    turns: int = 0
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    calls_by_step: Counter[str] = field(default_factory=Counter)
    llm_seconds_by_step: Counter[str] = field(default_factory=Counter)
    """Wall seconds inside each step's LLM calls (journals older than this field: none)."""
    records: Counter[str] = field(default_factory=Counter)
    failures: int = 0
    dropped_lines: int = 0
    dates: dict[str, Any] = field(default_factory=dict)
    checks: Counter[str] = field(default_factory=Counter)
    """What construction's deterministic checks changed (owner corrections, drops)."""

    @property
    def tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens


class CostJournal(ResumeJournal):
    """One policy's per-turn costs on disk, so an interrupted local run resumes.

    Each row is one turn: its key, calls per step, server-reported tokens, seconds (all of
    the turn, and those spent in each step's LLM calls), failures and dropped lines.
    """

    @staticmethod
    def key(conv: Conversation, turn: dict[str, Any]) -> str:
        """A turn's key: conversation, session and position."""
        return f"{conv.sample_id}/{turn['session_id']}/{turn['turn_index']}"


def _add_turn(cost: PolicyCost, row: dict[str, Any]) -> None:
    """Add one turn's recorded cost."""
    cost.turns += 1
    cost.seconds += row["seconds"]
    cost.prompt_tokens += row["prompt_tokens"]
    cost.completion_tokens += row["completion_tokens"]
    cost.failures += row["failures"]
    cost.dropped_lines += row["dropped_lines"]
    cost.calls_by_step.update(row["calls_by_step"])
    cost.llm_seconds_by_step.update(row.get("llm_seconds_by_step", {}))
    cost.checks.update(row.get("checks", {}))


def run_policy(
    policy: str,
    conversations: Sequence[Conversation],
    embeddings: MiniLMEmbeddings,
    tokenizer: BertWordPieceTokenizer,
    *,
    model: BaseChatModel | None = None,
    sessions: int | None = None,
    context: dict[str, Any] | None = None,
    resume: Path | None = None,
    settings: dict[str, Any] | None = None,
) -> tuple[PolicyCost, ChromaMemoryStore]:
    """Stream the conversations through the ingest graph under ``policy``.

    With ``resume`` (a real model only), the store lives on disk under
    ``resume/<policy>`` and each turn's cost is journalled there; turns already in the
    journal are skipped and their recorded cost counted.
    """
    counting = model is None
    if counting and resume is not None:
        raise SystemExit("--resume needs --model local (the fake model's counts are not kept)")
    chat = model if model is not None else SchemaChatModel()
    journal = None
    if resume is not None:
        store = ChromaMemoryStore.persistent(resume / policy / "chroma", embeddings=embeddings)
        journal = CostJournal(resume / policy / "journal.jsonl", settings or {})
        built = sum(store.count("raw", c.namespace) for c in conversations)
        if len(journal.done) > built:
            raise SystemExit(
                f"{journal.path} records {len(journal.done)} turns but the store under "
                f"{resume / policy} holds {built}: the store was lost (another machine?); "
                "start over in a fresh --resume folder"
            )
    else:
        store = ChromaMemoryStore.ephemeral(embeddings=embeddings)
    # the offline model's profile, as the facade gives it; --set overrides it
    arms, values = split_construction({**SMALL_MODEL_PROFILE, **(context or {})})
    graph = build_ingest_graph(
        chat_model=chat, store=store, structured_method="json_schema", arms=arms
    ).compile()
    cost = PolicyCost(policy)
    for conv in conversations:
        keep = set(conv.sessions()[:sessions]) if sessions else None
        ctx = MemoryContext(namespace=conv.namespace, trigger_policy=policy, **values)  # type: ignore[arg-type]
        for turn, closes in turn_inputs(conv):
            if keep is not None and turn["session_id"] not in keep:
                continue
            key = CostJournal.key(conv, turn)
            if journal is not None and key in journal.done:
                _add_turn(cost, journal.done[key])
                continue
            started = time.perf_counter()
            out = graph.invoke({"turns": [turn], "session_closed": closes}, context=ctx)
            failures = out.get("failures", [])
            calls = out.get("llm_calls", [])
            steps: Counter[str] = Counter()
            waited: Counter[str] = Counter()
            for call in calls:
                step = f"{call.node}:{call.schema}"
                steps[step] += 1
                waited[step] += call.latency_s or 0.0
            row = {
                "key": key,
                "seconds": time.perf_counter() - started,
                "calls_by_step": dict(steps),
                "llm_seconds_by_step": dict(waited),
                "prompt_tokens": sum(c.prompt_tokens or 0 for c in calls),
                "completion_tokens": sum(c.completion_tokens or 0 for c in calls),
                "failures": len(failures),
                "dropped_lines": sum(
                    int(f.error.split()[1]) for f in failures if f.step.endswith("_line")
                ),
                "checks": dict(Counter(out.get("checks", []))),
            }
            _add_turn(cost, row)
            if journal is not None:
                journal.append(row)
            if not counting and cost.turns % 50 == 0:
                print(
                    f"  {policy}: {cost.turns} turns, {cost.seconds:.0f}s",
                    file=sys.stderr,
                    flush=True,
                )
        for gran in ("raw", "fact", "episode", "scene"):
            cost.records[gran] += store.count(gran, conv.namespace)
        cost.records["trivial"] += sum(
            1 for t in store.get("raw", conv.namespace) if getattr(t, "trivial", False)
        )
    if isinstance(chat, SchemaChatModel):
        cost.calls = len(chat.calls)
        cost.prompt_tokens = sum(
            count_tokens(tokenizer, str(m.content)) for _, msgs in chat.calls for m in msgs
        )
        cost.completion_tokens = sum(count_tokens(tokenizer, c) for c in chat.completions)
    else:
        cost.calls = sum(cost.calls_by_step.values())
    return cost, store


def local_model(base_url: str, *, prompt_cache: bool = True) -> BaseChatModel:
    """A ChatOpenAI client for a local OpenAI-compatible server.

    ``prompt_cache=False`` asks a llama.cpp server to compute every prompt afresh
    (``cache_prompt: false``): a prompt whose prefix it reuses from an earlier request
    comes out with slightly different logits, so at temperature 0 the same request can
    get another reply. Without the cache the same request gets the same reply.
    """
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(  # type: ignore[arg-type]
        base_url=base_url,
        api_key="not-needed",
        model="local",
        temperature=0,
        timeout=600,
        max_tokens=512,  # a default cap; construction calls set their own, smaller one
        extra_body=None if prompt_cache else {"cache_prompt": False},
    )
