"""The ``lamina`` command line: argument parsing and error reporting.

Each command group lives in its own module under :mod:`lamina.commands`. Errors
lamina raises on purpose (bad files, bad arguments) print one line to stderr and exit
with status 2, without a traceback. A chat model that cannot be reached prints what to
do about it and exits with status 1.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .commands.common import MemoryFactory


COMMAND_MODULES = (
    "demo",
    "add",
    "ingest",
    "recall",
    "chat",
    "manage",
    "namespaces",
    "local",
    "serve_postgres",
    "migrate",
    "transfer",
    "mcp",
)
"""The modules of :mod:`lamina.commands`, in the order ``--help`` lists their commands."""


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of the ``lamina`` command."""
    parser = argparse.ArgumentParser(prog="lamina", description="Long-term memory for LLM agents.")
    parser.add_argument(
        "--verbose",
        "-v",
        action="store_true",
        help="also print lamina's warnings (malformed model replies, failed steps)",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMAND_MODULES:
        import_module(f"lamina.commands.{name}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None, *, memory_factory: MemoryFactory | None = None) -> int:
    """Run the command line; return the exit status.

    Args:
        argv: The arguments (default ``sys.argv[1:]``).
        memory_factory: Builds the ``Memory`` from the resolved ``MemoryConfig``
            (default ``Memory(config=config)``); tests inject models through it.
    """
    from .commands.common import run_command

    args = build_parser().parse_args(argv)
    args.memory_factory = memory_factory
    return run_command("lamina", args)


if __name__ == "__main__":
    raise SystemExit(main())
