r"""Construction cost per episode-trigger policy on LoCoMo (issue: memory construction).

Each conversation is streamed turn by turn through the ingest graph, as a chat agent
would send it; the last turn of each session is sent with ``session_closed=True``.
LLM calls go to a counting fake model that answers every structured call with a
minimal valid object, so the figures measure how often each policy calls the model
and how large its prompts are. Tokens are counted with a fixed tokenizer (the bundled
bert-base-uncased WordPiece vocabulary) on the actual prompts and completions.

With ``--model local`` the same ingest runs against a real OpenAI-compatible model
(e.g. the local Qwen server): token figures are then the server's own usage, and the
per-turn table gives tokens/turn, s/turn and facts/turn. Date accuracy compares the
event dates stored for the hand-labelled LoCoMo expressions in
``tests/data/locomo_relative_dates.json`` (on the raw turns, and on the facts drawn from
those turns that carry an event time) with the labels.

Usage:
    python benchmarks/construction_cost.py --conversations conv-26 --json out.json
    python benchmarks/construction_cost.py --all --json out.json
    lamina serve-llm --model qwen --threads 2 --port 8085 &
    python benchmarks/construction_cost.py --model local --base-url http://127.0.0.1:8085/v1 \
        --policies recurrence --json benchmarks/construction_qwen.json

A real model on a whole conversation can take longer than one sitting. With ``--resume
DIR`` (local model only) each policy builds into a store on disk under ``DIR/<policy>``
and appends every turn's cost to ``DIR/<policy>/journal.jsonl``; a later run with the
same settings skips the journalled turns, adds their recorded cost, and goes on. A turn
cut off mid-call is asked again: its raw turn is stored under a stable id, so only that
turn's LLM work repeats.
"""

from __future__ import annotations

import argparse
import json
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

from lamina.core.context import MemoryContext
from lamina.datasets.locomo import Conversation, default_locomo_path, load_locomo
from lamina.evaluation.code_version import code_version
from lamina.evaluation.resume_journal import ResumeJournal
from lamina.graphs.ingest import build_ingest_graph
from lamina.stores import ChromaMemoryStore, MiniLMEmbeddings
from lamina.testing import SchemaChatModel

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
    graph = build_ingest_graph(
        chat_model=chat, store=store, structured_method="json_schema"
    ).compile()
    cost = PolicyCost(policy)
    for conv in conversations:
        keep = set(conv.sessions()[:sessions]) if sessions else None
        ctx = MemoryContext(namespace=conv.namespace, trigger_policy=policy, **(context or {}))  # type: ignore[arg-type]
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


LABELS = Path(__file__).resolve().parents[1] / "tests" / "data" / "locomo_relative_dates.json"


def date_accuracy(
    store: ChromaMemoryStore, conversations: Sequence[Conversation]
) -> dict[str, Any]:
    """Stored event dates of the hand-labelled expressions against their labels.

    ``raw``: the resolved dates on the raw turn that holds the expression. ``facts``:
    every fact drawn from a labelled turn that carries an event time and names that
    expression or its labelled dates; it is right when its event time is the labelled
    day or interval.
    """
    from datetime import date

    from lamina.records.model import FactRecord, RawTurn, TimeRef

    labels = json.loads(LABELS.read_text(encoding="utf-8"))["entries"]
    raw_ok = raw_n = fact_ok = fact_n = 0
    for conv in conversations:
        by_dia = {t.dia_id: t for t in conv.turns}
        mine = [e for e in labels if e["conversation"] == conv.sample_id]
        facts = [f for f in store.get("fact", conv.namespace) if isinstance(f, FactRecord)]
        for e in mine:
            turn = by_dia.get(e["dia_id"])
            if turn is None:
                continue
            rid = RawTurn.turn_id(conv.namespace, turn.session_id, turn.turn_index)
            stored = store.get("raw", conv.namespace, [rid])
            if not stored or not isinstance(stored[0], RawTurn):
                continue
            want = (e["start"], e["end"])
            refs = [
                r
                for r in stored[0].time_refs
                if e["expression"].lower() in r.expression.lower()
                or r.expression.lower() in e["expression"].lower()
            ]
            raw_n += 1
            raw_ok += bool(refs) and (str(refs[0].start), str(refs[0].end)) == want
            said = TimeRef(
                expression=e["expression"],
                offset=0,
                start=date.fromisoformat(e["start"]),
                end=date.fromisoformat(e["end"]),
                granularity=e["granularity"],
            ).label()
            for fact in facts:
                if rid not in fact.source_ids or not (fact.point_in_time or fact.start_time):
                    continue
                if e["expression"].lower() not in fact.text.lower() and said not in fact.text:
                    continue  # the fact is about another time the turn mentions
                first = fact.point_in_time or fact.start_time
                last = fact.point_in_time or fact.end_time or first
                assert first is not None and last is not None
                fact_n += 1
                fact_ok += (first.date().isoformat(), last.date().isoformat()) == want
    return {
        "raw_labelled": raw_n,
        "raw_correct": raw_ok,
        "raw_accuracy": round(raw_ok / raw_n, 4) if raw_n else None,
        "facts_with_event_time": fact_n,
        "facts_correct": fact_ok,
        "fact_accuracy": round(fact_ok / fact_n, 4) if fact_n else None,
    }


def summary(cost: PolicyCost, eager: PolicyCost | None) -> dict[str, Any]:
    """One policy's figures, with its share of eager's calls and tokens."""
    out: dict[str, Any] = {
        "policy": cost.policy,
        "turns": cost.turns,
        "llm_calls": cost.calls,
        "prompt_tokens": cost.prompt_tokens,
        "completion_tokens": cost.completion_tokens,
        "total_tokens": cost.tokens,
        "seconds": round(cost.seconds, 1),
        "calls_by_step": dict(sorted(cost.calls_by_step.items())),
        "records": dict(cost.records),
        "failures": cost.failures,
        "dropped_lines": cost.dropped_lines,
        "tokens_per_turn": round(cost.tokens / cost.turns, 1) if cost.turns else None,
        "seconds_per_turn": round(cost.seconds / cost.turns, 2) if cost.turns else None,
        "facts_per_turn": round(cost.records["fact"] / cost.turns, 3) if cost.turns else None,
        "date_accuracy": cost.dates,
    }
    if eager is not None and eager.calls and eager.tokens:
        out["calls_vs_eager"] = round(cost.calls / eager.calls, 4)
        out["tokens_vs_eager"] = round(cost.tokens / eager.tokens, 4)
    return out


def print_table(rows: list[dict[str, Any]]) -> None:
    """Print the per-policy table."""
    header = f"{'policy':<11}{'turns':>7}{'calls':>8}{'prompt tok':>12}{'compl tok':>11}"
    header += f"{'calls/eager':>13}{'tokens/eager':>14}{'episodes':>10}{'facts':>7}{'scenes':>8}"
    print(header)
    for r in rows:
        print(
            f"{r['policy']:<11}{r['turns']:>7}{r['llm_calls']:>8}{r['prompt_tokens']:>12}"
            f"{r['completion_tokens']:>11}{r.get('calls_vs_eager', float('nan')):>13.3f}"
            f"{r.get('tokens_vs_eager', float('nan')):>14.3f}{r['records'].get('episode', 0):>10}"
            f"{r['records'].get('fact', 0):>7}{r['records'].get('scene', 0):>8}"
        )


def print_per_turn(rows: list[dict[str, Any]]) -> None:
    """Print tokens, seconds and facts per turn, and date accuracy."""
    print(
        f"\n{'policy':<11}{'tokens/turn':>12}{'s/turn':>8}{'facts/turn':>11}{'raw dates':>14}"
        f"{'fact dates':>14}{'trivial':>9}"
    )
    for r in rows:
        d = r["date_accuracy"]
        raw = f"{d.get('raw_correct', 0)}/{d.get('raw_labelled', 0)}"
        facts = f"{d.get('facts_correct', 0)}/{d.get('facts_with_event_time', 0)}"
        print(
            f"{r['policy']:<11}{r['tokens_per_turn']:>12}{r['seconds_per_turn']:>8}"
            f"{r['facts_per_turn']:>11}{raw:>14}{facts:>14}{r['records'].get('trivial', 0):>9}"
        )


def samples(store: ChromaMemoryStore, namespace: str, n: int = 5) -> list[str]:
    """A few stored episodes and facts, verbatim, for the closing note."""
    episodes = [f"episode: {e.text}" for e in store.get("episode", namespace)]
    facts = [
        f"fact [{getattr(f, 'subject', None)}]: {f.text}" for f in store.get("fact", namespace)
    ]
    return (episodes[:2] + facts)[:n]


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Command-line options."""
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--data", type=Path, default=default_locomo_path(), help="LoCoMo JSON file")
    p.add_argument("--conversations", nargs="*", default=["conv-26"], help="sample ids")
    p.add_argument("--all", action="store_true", help="all conversations in the file")
    p.add_argument(
        "--policies", nargs="*", default=["eager", "recurrence", "session"], choices=POLICIES
    )
    p.add_argument("--sessions", type=int, default=None, help="only the first N sessions")
    p.add_argument("--theta-sim", type=float, default=None, help="recurrence cosine threshold")
    p.add_argument("--theta-count", type=int, default=None, help="recurrence count threshold")
    p.add_argument(
        "--format",
        choices=["lines", "json"],
        default=None,
        help="construction reply format (default: the library's, lines)",
    )
    p.add_argument(
        "--model",
        choices=["fake", "local"],
        default="fake",
        help="fake: counting model with minimal outputs; local: an OpenAI-compatible server",
    )
    p.add_argument(
        "--base-url", help="with --model local: the server, e.g. http://127.0.0.1:8080/v1"
    )
    p.add_argument("--json", type=Path, help="also write the figures here")
    p.add_argument(
        "--resume",
        type=Path,
        metavar="DIR",
        help="with --model local: build on disk under DIR and journal each turn's cost, "
        "so a run cut off goes on where it stopped",
    )
    return p.parse_args(argv)


def local_model(base_url: str) -> BaseChatModel:
    """A ChatOpenAI client for a local OpenAI-compatible server."""
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(  # type: ignore[arg-type]
        base_url=base_url,
        api_key="not-needed",
        model="local",
        temperature=0,
        timeout=600,
        max_tokens=512,  # a default cap; construction calls set their own, smaller one
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; print and optionally save the figures."""
    args = parse_args(argv)
    ids = None if args.all else args.conversations
    conversations = load_locomo(args.data, sample_ids=ids)
    if not conversations:
        print(f"no conversations {ids} in {args.data}", file=sys.stderr)
        return 2
    context: dict[str, Any] = {}
    if args.theta_sim is not None:
        context["theta_sim"] = args.theta_sim
    if args.theta_count is not None:
        context["theta_count"] = args.theta_count
    if args.format is not None:
        context["construction_format"] = args.format
    model = None
    if args.model == "local":
        if not args.base_url:
            print("--model local needs --base-url", file=sys.stderr)
            return 2
        model = local_model(args.base_url)
    embeddings = MiniLMEmbeddings()
    tokenizer = fixed_tokenizer()
    costs: dict[str, PolicyCost] = {}
    produced: dict[str, list[str]] = {}
    for policy in args.policies:
        cost, store = run_policy(
            policy,
            conversations,
            embeddings,
            tokenizer,
            model=model,
            sessions=args.sessions,
            context=context,
            resume=args.resume,
            settings={
                "conversations": [c.sample_id for c in conversations],
                "sessions": args.sessions,
                "policy": policy,
                "base_url": args.base_url,
                "context": context,
                "code": code_version(),
            },
        )
        cost.dates = date_accuracy(store, conversations)
        costs[policy] = cost
        produced[policy] = samples(store, conversations[0].namespace, n=12)
        print(
            f"{policy}: {cost.calls} calls, {cost.tokens} tokens, {cost.seconds:.1f}s", flush=True
        )
    rows = [summary(c, costs.get("eager")) for c in costs.values()]
    print(
        f"\nconversations: {[c.sample_id for c in conversations]}"
        f"  sessions: {args.sessions or 'all'}  model: {args.model}"
        f"  context: {context or 'defaults'}"
    )
    print_table(rows)
    print_per_turn(rows)
    if args.model == "local":
        for policy, lines in produced.items():
            print(f"\nsamples ({policy}):")
            for line in lines:
                print(f"  {line}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        payload = {
            "conversations": [c.sample_id for c in conversations],
            "sessions": args.sessions,
            "model": args.model,
            "context": context,
            "token_counter": (
                "the server's own usage (prompt + completion)"
                if args.model == "local"
                else "bert-base-uncased WordPiece (bundled vocab), prompts + completions; "
                "the fake model's replies are minimal, so these are not real costs"
            ),
            "policies": rows,
            "samples": produced if args.model == "local" else {},
        }
        args.json.write_text(json.dumps(payload, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
