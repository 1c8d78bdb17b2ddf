"""``lamina migrate``: copy a Chroma store into Postgres, check the counts, print them.

The work is :func:`lamina.stores.migration.migrate`; this module parses the options,
opens both sides (each refused with a clear message before any copy: a folder that is
not a lamina Chroma store, a DSN nothing answers at) and prints the report. The exit
status is 0 when every namespace and kind has the same count on both sides, 1 when not.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInputError
from .choices import DEFAULT_EMBEDDER, EMBEDDERS
from .common import warn

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings

    from ..stores.migration import MigrationReport


def register(sub: Any) -> None:
    """Add ``migrate`` to the subparsers ``sub``."""
    parser = sub.add_parser(
        "migrate",
        help=(
            "copy a Chroma store (every namespace, record, profile, audit entry, default "
            "TTL) into Postgres"
        ),
        description=(
            "Copies every namespace of a lamina Chroma folder into a Postgres database: "
            "records of every granularity with their ids, times, metadata, validity, "
            "supersession links and stored vectors, the profiles, the audit logs "
            "(forget tombstones included) and each namespace's default TTL. The source "
            "is only read. Records the target already holds unchanged are skipped, so "
            "running it again copies nothing. "
            "The counts per namespace and kind are checked and printed; the exit status "
            "is 1 if they differ."
        ),
    )
    parser.add_argument(
        "--from",
        dest="source",
        type=Path,
        required=True,
        metavar="CHROMA_DIR",
        help="the Chroma folder of the store (e.g. ~/.local/share/lamina/chroma), or the "
        "lamina data folder holding it",
    )
    parser.add_argument(
        "--to",
        dest="dsn",
        metavar="DSN",
        help="the Postgres connection string (default: a postgresql:// LAMINA_STORE, or "
        "LAMINA_POSTGRES_DSN)",
    )
    parser.add_argument(
        "--schema", help="the Postgres schema to copy into (default: lamina, or LAMINA_PREFIX)"
    )
    parser.add_argument(
        "--prefix",
        help="the Chroma collection prefix of the store (default: lamina, or LAMINA_PREFIX)",
    )
    parser.add_argument(
        "--embedder",
        choices=sorted(EMBEDDERS),
        default=DEFAULT_EMBEDDER,
        help=f"the target's embedder (default {DEFAULT_EMBEDDER}); when it is not the one "
        "that wrote the source, every record is embedded again instead of copying vectors",
    )
    parser.set_defaults(func=run_migrate)


def target_embeddings(name: str) -> Embeddings:
    """The embedder the target store is opened with (tests replace it)."""
    from ..embedders.choice import make_embeddings

    return make_embeddings(name)


def run_migrate(args: argparse.Namespace) -> int:
    """Open the source, then the target, copy, print the report; 1 on a count mismatch."""
    from ..config import MemoryConfig
    from ..stores.migration import ChromaSource, migrate
    from ..stores.postgres import PostgresMemoryStore

    config = MemoryConfig.from_env()
    dsn = args.dsn or config.postgres_dsn
    if not dsn:
        raise InvalidInputError(
            "lamina migrate needs the target database: --to postgresql://user:password@host/db "
            "(or LAMINA_STORE=postgresql://..., or LAMINA_POSTGRES_DSN)"
        )
    with ChromaSource.open(args.source, prefix=args.prefix or config.prefix) as source:
        target = PostgresMemoryStore.connect(
            dsn,
            schema=args.schema or config.prefix,
            embeddings=target_embeddings(args.embedder),
        )
        try:
            print(f"copying {source.where} into {target.where} (schema {target.names.schema!r})")
            report = migrate(
                source, target, progress=lambda line: print(f"  {line}", file=sys.stderr)
            )
        finally:
            target.close()
    print_report(report)
    if not report.ok:
        bad = ", ".join(f"{c.namespace!r} {c.kind}" for c in report.mismatches()[:5])
        warn(
            f"error: the target's counts differ from the source's for {len(report.mismatches())} "
            f"namespace/kind pair(s) ({bad}); see the table above"
        )
        return 1
    return 0


def print_report(report: MigrationReport) -> None:
    """The vectors' fate, the notes, the table of counts and a one-line verdict."""
    if report.vectors == "copied":
        print("vectors: copied as stored (same embedder and index text policy)")
    else:
        print(
            f"vectors: re-embedded by the target's embedder ({report.embedded} record(s) "
            "embedded by this run)"
        )
    if report.embedded and report.vectors == "copied":
        print(f"  {report.embedded} record(s) had no readable stored vector and were embedded")
    for note in report.notes:
        print(f"note: {note}")
    for line in report.table():
        print(line)
    kinds = len(report.counts)
    if report.ok:
        print(
            f"ok: the target holds what the source holds ({kinds} namespace/kind pair(s)); "
            f"{report.copied} written by this run"
        )
