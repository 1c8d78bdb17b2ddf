"""``lamina export`` (one namespace to a JSON Lines file) and ``lamina import`` (back in).

The file format is :mod:`lamina.memory.portable`'s: every record with its history,
validity, sources and tombstones, no vectors.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..errors import InvalidInputError
from .common import add_memory_options, namespace_of, open_memory, print_json


def register(sub: Any) -> None:
    """Add ``export`` and ``import`` to the subparsers ``sub``."""
    export = sub.add_parser(
        "export", help="write one namespace's memory, with its history, as JSON Lines"
    )
    export.add_argument(
        "--output", "-o", type=Path, help="the file to write (default: standard output)"
    )
    add_memory_options(export)
    export.set_defaults(func=run_export)

    load = sub.add_parser("import", help="store what a `lamina export` file holds")
    load.add_argument("file", type=Path, help="the export file ('-' for standard input)")
    load.add_argument("--json", action="store_true", help="print the result as JSON")
    add_memory_options(
        load, namespace_help="import into this namespace (default: the one exported)"
    )
    load.set_defaults(func=run_import)


def run_export(args: argparse.Namespace) -> int:
    """Write the namespace's export to ``--output`` or standard output; counts to stderr."""
    namespace = namespace_of(args)
    with open_memory(args) as memory:
        counts = memory.export(args.output or sys.stdout, namespace=namespace)
    shown = ", ".join(f"{n} {kind}" for kind, n in counts.items())
    print(f"exported {namespace!r}: {shown}", file=sys.stderr)
    return 0


def run_import(args: argparse.Namespace) -> int:
    """Import the file (checked whole first) into its namespace or ``--namespace``."""
    file = args.file
    if str(file) != "-" and not file.is_file():
        raise InvalidInputError(f"no export file at {str(file)!r}")
    with open_memory(args) as memory:
        source = sys.stdin if str(file) == "-" else file
        result = memory.import_(source, namespace=args.namespace)
    if args.json:
        print_json(result)
        return 0
    kept = sum(result.kept.values())
    note = f"; {kept} already held, kept as they were" if kept else ""
    print(f"imported into {result.namespace!r}: {result.count} written{note}")
    return 0
