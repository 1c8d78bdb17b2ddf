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
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from construction_dates import date_accuracy
from construction_run import POLICIES, PolicyCost, fixed_tokenizer, local_model, run_policy

from lamina.embedders import MiniLMEmbeddings
from lamina.stores import ChromaMemoryStore
from lamina_bench.datasets.locomo import default_locomo_path, load_locomo
from lamina_bench.evaluation.code_version import code_version


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


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; print and optionally save the figures."""
    args = parse_args(argv)
    ids = None if args.all else args.conversations
    conversations = load_locomo(args.data, sample_ids=ids)
    if not conversations:
        print(f"no conversations {ids} in {args.data}", file=sys.stderr)
        return 2
    context: dict[str, Any] = {}
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
