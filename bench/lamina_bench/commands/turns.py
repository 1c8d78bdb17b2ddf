"""``lamina-bench turns``: a LoCoMo-format file as JSONL files of turns for ``lamina ingest``.

lamina reads turns as JSONL, one object per line, and names no data set. This writes one
``<sample_id>.jsonl`` per conversation (the dialogue id kept in each turn's metadata), so
``lamina ingest OUT/conv-26.jsonl -n conv-26`` stores a conversation of the benchmark.
The whole file is read and checked before anything is written.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from lamina.errors import InvalidInputError


def register(sub: Any) -> None:
    """Add ``turns`` to the subparsers ``sub``."""
    p = sub.add_parser(
        "turns",
        help="write a LoCoMo-format file as JSONL files of turns, one per conversation",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("file", type=Path, help="a LoCoMo-format JSON file (a list of samples)")
    p.add_argument("--out", type=Path, required=True, help="the folder to write into")
    p.add_argument("--conversations", nargs="+", metavar="SAMPLE_ID", help="default: all of them")
    p.set_defaults(func=run_turns)


def write_turns(path: Path, out: Path, conversations: list[str] | None = None) -> dict[str, Path]:
    """Write each chosen conversation of ``path`` to ``out/<sample_id>.jsonl``.

    Raises:
        InvalidInputError: the file is not a LoCoMo-format JSON list, a sample is
            malformed, or a chosen conversation is not in it.
    """
    from ..datasets.locomo import load_locomo

    try:
        convs = load_locomo(path, categories=())
    except (KeyError, TypeError, ValueError) as e:
        raise InvalidInputError(f"{path}: not a LoCoMo-format JSON file ({e!r})") from e
    ids = [c.sample_id for c in convs]
    missing = [c for c in conversations or () if c not in ids]
    if missing:
        raise InvalidInputError(f"{path}: no conversation {', '.join(missing)}; it has {ids}")
    chosen = [c for c in convs if not conversations or c.sample_id in conversations]
    lines = {c.sample_id: [t.as_turn_input().model_dump_json() for t in c.turns] for c in chosen}
    out.mkdir(parents=True, exist_ok=True)
    written = {}
    for sample_id, turns in lines.items():
        target = out / f"{sample_id}.jsonl"
        target.write_text("".join(f"{line}\n" for line in turns), encoding="utf-8")
        written[sample_id] = target
    return written


def run_turns(args: argparse.Namespace) -> int:
    """Write the files; print each with its turn count."""
    from lamina.commands.checks import input_file, writable_folder

    input_file(args.file, "a LoCoMo-format JSON file")
    writable_folder(args.out, f"--out {args.out}", "the output folder")
    for sample_id, target in write_turns(args.file, args.out, args.conversations).items():
        count = len(target.read_text(encoding="utf-8").splitlines())
        print(f"{target}: {count} turns (lamina ingest {target} -n {sample_id})")
    return 0


__all__ = ["register", "run_turns", "write_turns"]
