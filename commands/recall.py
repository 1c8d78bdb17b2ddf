"""``lamina search`` (retrieval only, no LLM) and ``lamina ask`` (answer with citations)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from .checks import check_question, require_words
from .choices import GRANULARITIES
from .common import (
    add_memory_options,
    checked_config,
    namespace_of,
    one_line,
    open_memory,
    print_json,
    report_failures,
)
from .namespaces import hint_if_empty

if TYPE_CHECKING:
    from ..memory.results import MemoryHit


def register(sub: Any) -> None:
    """Add ``search`` and ``ask`` to the subparsers ``sub``."""
    search = sub.add_parser("search", help="find memories for a query (no LLM)")
    search.add_argument("query", help="what to look for")
    search.add_argument("-k", type=_positive, default=10, help="how many results (default 10)")
    search.add_argument(
        "--granularity",
        "-g",
        action="append",
        choices=GRANULARITIES,
        help="search only this granularity (repeatable; default all)",
    )
    search.add_argument("--json", action="store_true", help="print the hits as JSON")
    add_memory_options(search)
    search.set_defaults(func=run_search)

    ask = sub.add_parser("ask", help="answer a question from memory, citing the memories used")
    ask.add_argument("question", help="the question")
    ask.add_argument("--json", action="store_true", help="print the full result as JSON")
    ask.add_argument(
        "--explain",
        action="store_true",
        help="also show what was retrieved (granularity, scores), the Judge's verdict and "
        "reason per round, and the queries tried",
    )
    add_memory_options(ask)
    ask.set_defaults(func=run_ask)


def run_search(args: argparse.Namespace) -> int:
    """Print the hybrid search hits of the query."""
    require_words("query", args.query, 'lamina search "dog\'s name"')
    namespace = namespace_of(args)
    with open_memory(args) as memory:
        hits = memory.search(
            args.query, namespace=namespace, k=args.k, granularities=args.granularity
        )
        if not hits:
            hint_if_empty(memory, namespace)
    if args.json:
        print_json(hits)
    elif not hits:
        print(f"no memories match in namespace {namespace!r}")
    else:
        for rank, hit in enumerate(hits, start=1):
            print(f"{rank:>3}. {format_hit(hit)}")
    return 0


def run_ask(args: argparse.Namespace) -> int:
    """Answer the question and list the memories it cites.

    The question is checked before the memory opens or the model loads: an empty one,
    or one longer than the local model's window, is refused at once.
    """
    require_words("question", args.question, 'lamina ask "What is my dog called?"')
    config = checked_config(args)
    check_question(args.question, config)
    namespace = namespace_of(args)
    with open_memory(args, config, local_model=True) as memory:
        hint_if_empty(memory, namespace)  # before the model runs: it answers nothing
        result = memory.answer(args.question, namespace=namespace)
    if args.json:
        print_json(result)
    else:
        print(result.answer)
        by_id = {m.id: m for m in result.memories}
        if result.citations:
            print("citations:")
        for memory_id in result.citations:
            hit = by_id.get(memory_id)
            print(f"  - {format_hit(hit) if hit else f'[{memory_id}]'}")
        if args.explain:
            print("\n" + result.explain())
    report_failures(result.failures)
    return 0


def format_hit(hit: MemoryHit) -> str:
    """One line: granularity, id, date, speaker and text."""
    when = hit.occurred_at.date().isoformat()
    who = f"{hit.speaker}: " if hit.speaker else ""
    return f"[{hit.granularity} {hit.id}] {when} {who}{one_line(hit.text)}".rstrip()


def _positive(value: str) -> int:
    number = int(value)
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {number}")
    return number
