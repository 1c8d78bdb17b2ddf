"""``lamina add``: remember one turn, or the turns of JSON lines on stdin.

Turns go through :meth:`lamina.Memory.add`, exactly as a program would store them (the
parser's description says how). Every argument and line is checked before the memory
opens or a model loads.
"""

from __future__ import annotations

import argparse
import sys
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInputError, LaminaError
from .checks import json_object, require_words
from .common import (
    add_memory_options,
    checked_config,
    namespace_of,
    open_memory,
    print_json,
    report_failures,
    warn,
)

if TYPE_CHECKING:
    from ..core.state import TurnInput
    from ..memory.results import AddResult

EXAMPLE = 'lamina add "I adopted a greyhound called Biscuit" --speaker Alice -n user:alice'


def register(sub: Any) -> None:
    """Add ``add`` to the subparsers ``sub``."""
    add = sub.add_parser(
        "add",
        help="remember a turn (or JSON lines from stdin with '-')",
        description="Stores TEXT as one turn of SPEAKER through Memory.add: the raw turn "
        "first, then consolidation per the trigger policy (--no-infer: verbatim, no LLM). "
        "With '-' instead of TEXT, each stdin line is a JSON object: text, and optionally "
        "speaker, at (ISO 8601 with an offset), session_id, turn_index, metadata, or "
        "role/content; the options give what a line leaves out.",
        epilog=f"example:\n  {EXAMPLE}\n  "
        'printf \'%s\\n\' \'{"speaker": "Alice", "text": "Hi"}\' | lamina add - -n user:alice',
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add.add_argument("text", help="what was said, or - to read JSON lines from stdin")
    add.add_argument(
        "--speaker", help="who said it (needed with TEXT; with -, for lines that name no one)"
    )
    add.add_argument(
        "--at",
        metavar="TIME",
        help="when it was said: ISO 8601 with an offset, e.g. 2024-05-08T18:20:00+02:00 "
        "(default now)",
    )
    add.add_argument(
        "--session", metavar="ID", help="session id (default: one per namespace and UTC day)"
    )
    add.add_argument(
        "--no-infer",
        action="store_true",
        help="store verbatim: no LLM call now or later (never consolidated)",
    )
    add.add_argument(
        "--close-session",
        action="store_true",
        help="the conversation ended: the session policy consolidates it now",
    )
    add.add_argument("--json", action="store_true", help="print the result as JSON")
    add_memory_options(add)
    add.set_defaults(func=run_add)


def parse_time(value: str, where: str) -> datetime:
    """An ISO 8601 time with an offset; ``where`` names the option or line in the error."""
    try:
        when = datetime.fromisoformat(value.strip())
    except ValueError as e:
        raise InvalidInputError(
            f"{where} {value!r} is not an ISO 8601 time; give e.g. 2024-05-08T18:20:00+02:00"
        ) from e
    if when.tzinfo is None or when.utcoffset() is None:
        raise InvalidInputError(
            f"{where} {value!r} has no UTC offset; give one, e.g. {when.isoformat()}+00:00 "
            "(or Z for UTC)"
        )
    return when


def run_add(args: argparse.Namespace) -> int:
    """Check every argument (and stdin line), then store the turns through ``Memory.add``."""
    namespace = namespace_of(args)
    at = parse_time(args.at, "--at") if args.at is not None else None
    if args.session is not None:
        require_words("--session", args.session, "--session s1")
    if args.speaker is not None:
        require_words("--speaker", args.speaker, "--speaker Alice")
    if args.text == "-":
        groups = read_stdin_turns(args, namespace, at)
    else:
        require_words("text", args.text, EXAMPLE)
        if args.speaker is None:
            raise InvalidInputError(f"add needs --speaker NAME: who said it, e.g. {EXAMPLE}")
        groups = [to_turns(args.text, namespace, at, args)]
    config = checked_config(args)
    results: list[AddResult] = []
    with open_memory(args, config, local_model=not args.no_infer) as memory:
        try:
            for n, turns in enumerate(groups):
                closes = n < len(groups) - 1 or args.close_session
                results.append(
                    memory.add(
                        turns, namespace=namespace, session_closed=closes, infer=not args.no_infer
                    )
                )
        except (LaminaError, OSError, KeyboardInterrupt):
            stored = sum(len(r.new_raw_ids) for r in results)
            if stored:
                warn(f"stopped after storing {stored} new turn(s); running again skips them")
            raise
    report(results, namespace, args)
    return 0


def to_turns(
    item: object, namespace: str, at: datetime | None, args: argparse.Namespace
) -> list[TurnInput]:
    """``item`` as turns, validated as ``Memory.add`` will (nothing is stored here)."""
    from ..memory.inputs import to_turns

    return to_turns(item, namespace=namespace, session_id=args.session, at=at, speaker=args.speaker)


def read_stdin_turns(
    args: argparse.Namespace, namespace: str, at: datetime | None
) -> list[list[TurnInput]]:
    """Every stdin line as a turn, grouped by session in line order; all checked first."""
    turns: list[TurnInput] = []
    for number, line in enumerate(sys.stdin, start=1):
        if line.strip():
            # lines without a time of their own keep their order a microsecond apart
            when = at + timedelta(microseconds=len(turns)) if at is not None else None
            turns.append(_line_turn(line, f"stdin line {number}", args, namespace, when))
    if not turns:
        raise InvalidInputError(
            "no turns on stdin; give one JSON object per line, e.g. "
            '{"speaker": "Alice", "text": "I adopted a greyhound"}'
        )
    groups: list[list[TurnInput]] = []
    for turn in turns:
        if groups and groups[-1][-1].session_id == turn.session_id:
            groups[-1].append(turn)
        else:
            groups.append([turn])
    return groups


def _line_turn(
    line: str, where: str, args: argparse.Namespace, namespace: str, at: datetime | None
) -> TurnInput:
    item = json_object(
        line,
        where,
        hint="give one JSON object per line",
        shape="a JSON object with text (and speaker, at, ...)",
    )
    if "at" in item:
        if "occurred_at" in item:
            raise InvalidInputError(f"{where}: give at or occurred_at, not both")
        item["occurred_at"] = item.pop("at")
    if isinstance(item.get("occurred_at"), str):
        item["occurred_at"] = parse_time(item["occurred_at"], f"{where}: at")
    chat_message = "role" in item or "content" in item
    if not chat_message and "speaker" not in item and "name" not in item:
        if args.speaker is None:
            raise InvalidInputError(f"{where}: no speaker; add one to the line or pass --speaker")
        item["speaker"] = args.speaker
    try:
        (turn,) = to_turns(item, namespace, at, args)
    except InvalidInputError as e:
        message = str(e).removeprefix("message #0 ").removeprefix("message #0: ")
        raise InvalidInputError(f"{where}: {message}") from e
    return turn


def report(results: list[AddResult], namespace: str, args: argparse.Namespace) -> None:
    """Print what was stored (or the merged results as JSON) and any failed LLM step."""
    new = [i for r in results for i in r.new_raw_ids]
    duplicates = [i for r in results for i in r.duplicate_raw_ids]
    written = [w for r in results for w in r.written]
    failures = [f for r in results for f in r.failures]
    model_error = next((r.model_error for r in results if r.model_error), None)
    if args.json:
        print_json(
            {
                "namespace": namespace,
                "new_raw_ids": new,
                "duplicate_raw_ids": duplicates,
                "written": written,
                "failures": failures,
                "model_error": model_error,
            }
        )
    else:
        line = f"stored {len(new)} new turn(s) in namespace {namespace!r}"
        if duplicates:
            line += f"; {len(duplicates)} already stored, skipped"
        print(line + (f": {', '.join(new)}" if new else ""))
        if args.no_infer:
            print("verbatim (--no-infer): never consolidated")
        elif written:
            print(f"{len(written)} derived record(s) written")
    if model_error:
        warn(model_error)
    report_failures(failures)
