"""The ``lamina`` command line: argument parsing and error reporting.

Each command group lives in its own module under :mod:`lamina.commands`. Errors
lamina raises on purpose (bad files, bad arguments) print one line to stderr and exit
with status 2, without a traceback. A chat model that cannot be reached prints what to
do about it and exits with status 1.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .errors import LaminaError, ModelUnreachableError

if TYPE_CHECKING:
    from .commands.common import MemoryFactory


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of the ``lamina`` command."""
    from .commands import (
        add,
        chat,
        demo,
        ingest,
        local,
        manage,
        mcp,
        migrate,
        namespaces,
        recall,
        serve_postgres,
        transfer,
    )

    parser = argparse.ArgumentParser(prog="lamina", description="Long-term memory for LLM agents.")
    parser.add_argument(
        "--verbose",
        "-v",
        action="store_true",
        help="also print lamina's warnings (malformed model replies, failed steps)",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in (
        demo,
        add,
        ingest,
        recall,
        chat,
        manage,
        namespaces,
        local,
        serve_postgres,
        migrate,
        transfer,
        mcp,
    ):
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None, *, memory_factory: MemoryFactory | None = None) -> int:
    """Run the command line; return the exit status.

    Args:
        argv: The arguments (default ``sys.argv[1:]``).
        memory_factory: Builds the ``Memory`` from the resolved ``MemoryConfig``
            (default ``Memory(config=config)``); tests inject models through it.
    """
    args = build_parser().parse_args(argv)
    args.memory_factory = memory_factory
    logger = logging.getLogger("lamina")
    level = logger.level
    # the commands print their own notes; the log repeats them, so it is opt-in
    logger.setLevel(logging.WARNING if args.verbose else logging.ERROR)
    try:
        return int(args.func(args))
    except ModelUnreachableError as e:
        print(f"lamina: error: {e}", file=sys.stderr)
        return 1
    except LaminaError as e:
        print(f"lamina: error: {e}", file=sys.stderr)
        return 2
    except OSError as e:  # e.g. a data dir that cannot be created
        where = f" ({e.filename})" if e.filename else ""
        print(f"lamina: error: {e.strerror or e}{where}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("lamina: interrupted", file=sys.stderr)
        return 130
    finally:
        logger.setLevel(level)


if __name__ == "__main__":
    raise SystemExit(main())
