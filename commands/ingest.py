"""``lamina ingest FILE``: store a JSONL file of turns, one per line.

The file is validated as a whole first, so a malformed line stores nothing. With
``--raw-only`` the turns are written to the raw collection only (embedding, no LLM);
otherwise each batch runs the ingest graph and consolidates per the trigger policy.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInputError, LaminaError
from .common import add_memory_options, open_memory, report_failures, warn

if TYPE_CHECKING:
    from ..core.state import TurnInput
    from ..memory import Memory
    from .turn_files import NamespaceTurns


def register(sub: Any) -> None:
    """Add ``ingest`` to the subparsers ``sub``."""
    ingest = sub.add_parser(
        "ingest",
        help="store a conversation file: JSONL with one turn per line",
        description="JSONL lines need speaker, text, occurred_at (ISO-8601 with an offset) "
        "and session_id; turn_index, media_caption and metadata are optional.",
    )
    ingest.add_argument("file", type=Path, help="the .jsonl file")
    ingest.add_argument(
        "--raw-only",
        action="store_true",
        help="store raw turns only: no consolidation, no LLM (fast)",
    )
    ingest.add_argument(
        "--batch-size",
        type=int,
        default=None,
        help="turns per write (default 100 with --raw-only, else 10)",
    )
    ingest.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    add_memory_options(
        ingest,
        namespace_help="target namespace (default 'default')",
    )
    ingest.set_defaults(func=run_ingest)


def run_ingest(args: argparse.Namespace) -> int:
    """Validate the whole file, then store it batch by batch with a progress bar."""
    from tqdm import tqdm

    from .turn_files import load_turn_file

    if args.batch_size is not None and args.batch_size < 1:
        raise InvalidInputError(f"--batch-size must be >= 1, got {args.batch_size}")
    target = load_turn_file(args.file, namespace=args.namespace)
    namespace, total = target.namespace, len(target.turns)
    batch_size = args.batch_size or (100 if args.raw_only else 10)
    started = time.perf_counter()
    written, failures = 0, []
    with (
        open_memory(args, local_model=not args.raw_only) as memory,
        tqdm(
            total=total,
            unit="turn",
            desc="ingest",
            file=sys.stderr,
            disable=True if args.no_progress else None,
        ) as bar,
    ):
        writer = RawOnlyWriter(memory) if args.raw_only else None
        lines = LineProgress(total, quiet=args.no_progress or bar.disable is not True)
        # the store decides the counts, so an interrupted run (or the rerun that resumes
        # it) reports what is stored
        held_before = memory.store.count("raw", namespace)
        bar.set_postfix_str(namespace)
        try:
            for batch, closes_session in batches(target, batch_size):
                if writer is not None:
                    writer.write(namespace, batch)
                else:
                    result = memory.add(batch, namespace=namespace, session_closed=closes_session)
                    written += len(result.written)
                    failures += result.failures
                bar.update(len(batch))
                lines.update(len(batch), namespace)
        except (LaminaError, OSError, KeyboardInterrupt):
            stored = memory.store.count("raw", namespace) - held_before
            warn(f"stopped after storing {stored} new turn(s); running again skips them")
            raise
        new = memory.store.count("raw", namespace) - held_before
    elapsed = time.perf_counter() - started
    mode = "raw only" if args.raw_only else "with consolidation"
    print(f"{args.file}: jsonl, {total} turns, 1 namespace(s), {mode}")
    line = f"  {namespace}: {new} turns stored, {total - new} duplicates skipped"
    if not args.raw_only:
        line += f", {written} derived records written"
    print(line)
    print(f"done in {elapsed:.1f}s")
    report_failures(failures)
    return 0


def batches(target: NamespaceTurns, size: int) -> Iterator[tuple[list[TurnInput], bool]]:
    """Batches of at most ``size`` turns within one session; True on a session's last."""
    for turns in target.sessions():
        for start in range(0, len(turns), size):
            yield turns[start : start + size], start + size >= len(turns)


PROGRESS_EVERY = 100
"""Turns between two progress lines when stderr is no terminal (a log, a CI job)."""


class LineProgress:
    """Progress as plain lines on stderr, for when the bar cannot show (not a terminal)."""

    def __init__(self, total: int, *, quiet: bool) -> None:
        self.total, self.quiet, self.done, self._shown = total, quiet, 0, 0

    def update(self, turns: int, namespace: str) -> None:
        """Count ``turns`` more; print a line each :data:`PROGRESS_EVERY` turns and at the end."""
        self.done += turns
        if self.quiet or (self.done - self._shown < PROGRESS_EVERY and self.done < self.total):
            return
        self._shown = self.done
        print(f"ingest: {self.done}/{self.total} turns ({namespace})", file=sys.stderr, flush=True)


class RawOnlyWriter:
    """Runs the ingest graph's raw-write node alone: same ids, dedup and context, no LLM."""

    def __init__(self, memory: Memory) -> None:
        from ..agents.common.deps import NodeDeps
        from ..agents.ingest.nodes.raw_writer import make_raw_write

        self._memory = memory
        no_model: Any = None  # the raw-write node reads only the store and the clock
        self._node = make_raw_write(NodeDeps(store=memory.store, caller=no_model))

    def write(self, namespace: str, turns: Sequence[TurnInput]) -> None:
        """Store ``turns`` (the command counts what the store then holds)."""
        from langgraph.runtime import Runtime

        runtime = Runtime(context=self._memory.config.memory_context(namespace))
        self._node({"turns": list(turns)}, runtime)
