"""``lamina demo``: build a memory from a bundled conversation, then use it.

The quick tour (the parser's description says what it does) is sized to finish in a few
minutes on a 2-core machine with the offline model. Everything is offline by default: a
persistent Chroma in a temporary folder, the bundled MiniLM embedder and the local Qwen
model served in-process.
"""

from __future__ import annotations

import argparse
import functools
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .checks import writable_folder
from .common import MemoryFactory, add_memory_options, open_memory
from .demo_progress import Progress

if TYPE_CHECKING:
    from ..config import MemoryConfig
    from ..memory import Memory

DEMO_NAMESPACE = "demo:maya"
QUICK_QUESTIONS = 1
FULL_QUESTIONS = 3
STEPS = 5


def register(sub: Any) -> None:
    """Add ``demo`` to the subparsers ``sub``."""
    demo = sub.add_parser(
        "demo",
        help="a quick tour: build memory from a short conversation, answer, update, forget",
        description=(
            "The quick tour (default): stores a seven-turn sample conversation turn by "
            "turn, lets the model consolidate each session into an episode and facts, "
            "answers a question citing the turns it used, supersedes a fact and forgets a "
            "subject, printing the elapsed time on every line. --full runs the same tour "
            "on the whole 20-turn sample with three questions (about two minutes with the "
            "offline model). --search-only needs no LLM. With no endpoint configured the "
            "local Qwen model runs in-process."
        ),
    )
    add_memory_options(demo, namespace_help=f"namespace to use (default {DEMO_NAMESPACE!r})")
    demo.add_argument(
        "--full",
        action="store_true",
        help="the whole three-session sample and three questions (slower)",
    )
    demo.add_argument(
        "--question",
        action="append",
        help="a question to ask (repeatable; default: the sample's first questions)",
    )
    demo.add_argument(
        "--questions",
        type=int,
        help=f"how many of the sample's questions to ask "
        f"(default {QUICK_QUESTIONS}, or {FULL_QUESTIONS} with --full)",
    )
    demo.add_argument(
        "--search-only",
        action="store_true",
        help="no LLM: store the raw turns and show hybrid search results for the questions",
    )
    demo.add_argument("-k", type=int, default=3, help="search results per question (default 3)")
    demo.add_argument(
        "--local-threads",
        type=int,
        help="CPU threads of the offline model (default: every core this process may use)",
    )
    demo.set_defaults(func=run_demo)


def local_memory_factory(threads: int) -> MemoryFactory:
    """Builds each ``Memory`` with its offline model on ``threads`` CPU threads."""

    def factory(config: MemoryConfig) -> Memory:
        from ..memory import Memory
        from ..memory.models import default_local_server

        server = functools.partial(default_local_server, threads=threads)
        return Memory(config=config, local_server_factory=server)

    return factory


def _positive(name: str, value: int | None) -> None:
    from ..errors import InvalidInputError

    if value is not None and value < 1:
        raise InvalidInputError(f"{name} must be a positive integer, got {value}")


def run_demo(args: argparse.Namespace) -> int:
    """Run the tour (or the search-only variant) on the chosen sample."""
    from ..samples import FULL_SAMPLE, QUICK_SAMPLE, load_sample

    _positive("--questions", args.questions)
    _positive("-k", args.k)
    _positive("--local-threads", args.local_threads)
    data = load_sample(FULL_SAMPLE if args.full else QUICK_SAMPLE)
    count = args.questions or (FULL_QUESTIONS if args.full else QUICK_QUESTIONS)
    questions = args.question or data["queries"][:count]
    args.namespace = args.namespace or DEMO_NAMESPACE
    args.trigger_policy = args.trigger_policy or "session"
    if getattr(args, "memory_factory", None) is None:
        from ..llm.local import usable_cpus

        # nothing else runs while the demo waits on the model: give it every core
        args.memory_factory = local_memory_factory(args.local_threads or usable_cpus())
    if args.data_dir is not None:
        writable_folder(args.data_dir, f"--data-dir {args.data_dir}", "the data folder")
    with tempfile.TemporaryDirectory(prefix="lamina-demo-") as tmp:
        if args.data_dir is None:
            args.data_dir = Path(tmp)
        if args.search_only:
            return _search_only(args, data, questions)
        return _tour(args, data, questions)


def _tour(args: argparse.Namespace, data: dict[str, Any], questions: list[str]) -> int:
    from ..errors import InvalidInputError, LocalModelError
    from ..samples import sample_tour
    from . import demo_tour

    tour, progress = sample_tour(data), Progress()
    ns = args.namespace
    turns = sum(len(s["turns"]) for s in data["sessions"])
    which = "full" if args.full else "quick"
    progress.line(
        f"lamina demo ({which} tour): {len(data['sessions'])} sessions, {turns} turns, "
        f"{len(questions)} question(s)"
    )
    progress.step(1, STEPS, "Open the memory")
    with open_memory(args, local_model=True) as memory:
        if memory.get_all(namespace=ns, limit=1):
            raise InvalidInputError(
                f"namespace {ns!r} in {args.data_dir} already holds memories; the demo "
                "needs an empty one: pass another --namespace or --data-dir"
            )
        progress.line(f"  store: {memory.config.store_kind} Chroma in {args.data_dir}")
        progress.line(f"  namespace {ns!r}; chat model: {_model_source(memory)}")
        progress.step(2, STEPS, "Build the memory: raw turns → facts → episodes")
        progress.detail(
            "each turn is stored verbatim first, its relative times resolved (no LLM); when a "
            "session closes, the model writes its episode and facts"
        )
        try:
            superseded = demo_tour.build_memory(memory, ns, data, progress)
        except LocalModelError as e:
            raise LocalModelError(
                f"{e}. Install the offline model with `make model` (or `lamina "
                "install-model qwen`), pass --base-url for an OpenAI-compatible endpoint, or "
                "run `lamina demo --search-only`, which needs no LLM"
            ) from e
        progress.step(3, STEPS, "Answer from memory, citing the turns used")
        for question in questions:
            demo_tour.ask(memory, ns, question, progress)
        progress.step(4, STEPS, "Update: a newer fact supersedes an older one")
        demo_tour.update(memory, ns, tour.update, superseded, progress)
        progress.step(5, STEPS, "Forget")
        demo_tour.forget(memory, ns, tour.forget, progress)
    print()
    progress.line(f"done in {progress.elapsed:.0f} s.")
    if not args.full:
        progress.detail(
            "The whole sample (3 sessions, 20 turns, 3 questions): `lamina demo --full` "
            "(`make demo-full`); it took 104 s with the offline model on 2 cores."
        )
    return 0


def _model_source(memory: Any) -> str:
    source = memory.chat_model_source
    if source == "local":
        return f"the offline model ({memory.config.local_model}), loaded at the first turn"
    if source == "endpoint":
        where = memory.config.openai_base_url or "OpenAI"
        return f"{memory.config.model or 'default model'} at {where}"
    return "the one given by the caller"


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
