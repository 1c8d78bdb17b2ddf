"""The ``lamina-bench`` command line: the evaluation harness and a data set converter.

``eval`` runs the evaluation harness; ``turns`` writes a benchmark's conversations as
JSONL turns for ``lamina ingest``.

Errors raised on purpose (bad files, bad arguments) print one line to stderr and exit with
status 2, without a traceback; a chat model that cannot be reached exits with status 1.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of the ``lamina-bench`` command."""
    from .commands import eval, turns

    parser = argparse.ArgumentParser(
        prog="lamina-bench", description="Benchmarks and the evaluation harness of lamina."
    )
    parser.add_argument("--verbose", "-v", action="store_true", help="also print lamina's warnings")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    eval.register(sub)
    turns.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    from lamina.commands.common import run_command

    return run_command("lamina-bench", build_parser().parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
