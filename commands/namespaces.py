"""``lamina namespaces``, ``lamina default-ttl`` and the empty-namespace hint.

``namespaces`` lists what the store holds, per namespace; ``default-ttl`` shows or sets
how long memories added to one namespace live.
"""

from __future__ import annotations

import argparse
import difflib
import re
import sys
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInputError
from .common import add_memory_options, namespace_of, open_memory, print_json

if TYPE_CHECKING:
    from ..memory import Memory

COLUMNS = ("raw", "fact", "episode", "scene")
NEAREST = 3
"""How many known namespaces the hint names."""
UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}
"""The units a ``lamina default-ttl`` duration may end with (none: seconds)."""
DURATION = re.compile(r"(?P<n>\d+(?:\.\d+)?)(?P<unit>[smhd]?)")


def register(sub: Any) -> None:
    """Add ``namespaces`` to the subparsers ``sub``."""
    namespaces = sub.add_parser(
        "namespaces", help="list the namespaces memory holds, with counts per granularity"
    )
    namespaces.add_argument("--json", action="store_true", help="print the counts as JSON")
    add_memory_options(namespaces, namespace_help="not used: every namespace is listed")
    namespaces.set_defaults(func=run_namespaces)

    ttl = sub.add_parser(
        "default-ttl",
        help="show or set how long memories added to a namespace live (kept in the store)",
    )
    ttl.add_argument(
        "duration",
        nargs="?",
        help="the new default, e.g. 3600, 90m, 12h or 30d (leave out to show the current one)",
    )
    ttl.add_argument("--clear", action="store_true", help="remove the default: never expire")
    add_memory_options(ttl)
    ttl.set_defaults(func=run_default_ttl)


def run_namespaces(args: argparse.Namespace) -> int:
    """Print one line per namespace: its records per granularity, and pending turns."""
    with open_memory(args) as memory:
        counts = memory.namespaces()
    if args.json:
        print_json(counts)
        return 0
    if not counts:
        print("memory holds no namespace yet (lamina add or lamina ingest writes one)")
        return 0
    width = max(len("NAMESPACE"), *(len(ns) for ns in counts))
    print(f"{'NAMESPACE':<{width}}  " + "  ".join(f"{c.upper():>7}" for c in COLUMNS))
    for ns, by in counts.items():
        cells = "  ".join(f"{by.get(c, 0):>7}" for c in COLUMNS)
        pending = f"  ({by['pending']} pending)" if by.get("pending") else ""
        print(f"{ns:<{width}}  {cells}{pending}")
    return 0


def parse_duration(text: str) -> timedelta:
    """``3600``, ``90m``, ``12h`` or ``30d`` as a timedelta (checked again by the Memory)."""
    found = DURATION.fullmatch(text.strip().lower())
    if found is None:
        raise InvalidInputError(
            f"cannot read the duration {text!r}: give seconds or a number with s, m, h or d, "
            "e.g. 3600, 90m, 12h or 30d"
        )
    from ..memory.inputs import MAX_TTL

    seconds = float(found["n"]) * UNITS[found["unit"]]
    if not seconds <= MAX_TTL.total_seconds():  # timedelta could not hold some of them
        raise InvalidInputError(
            f"the duration {text!r} is longer than {MAX_TTL.days} days; use --clear for "
            "memories that never expire"
        )
    return timedelta(seconds=seconds)


def describe_ttl(ttl: timedelta | None) -> str:
    """``2592000 s (30 days)``, or the note that memories never expire."""
    if ttl is None:
        return "none: memories added without expires_at or ttl never expire"
    seconds = ttl.total_seconds()
    whole = f"{seconds:.0f}" if seconds.is_integer() else f"{seconds:g}"
    return f"{whole} s ({seconds / 86400:.4g} days)"


def run_default_ttl(args: argparse.Namespace) -> int:
    """Print the namespace's default TTL, after setting or clearing it when asked."""
    if args.clear and args.duration is not None:
        raise InvalidInputError("give a duration or --clear, not both")
    namespace = namespace_of(args)
    ttl = None if args.duration is None else parse_duration(args.duration)
    with open_memory(args) as memory:
        if args.clear or ttl is not None:
            memory.set_default_ttl(namespace, ttl)
        current = memory.default_ttl(namespace)
    print(f"{namespace}: default TTL {describe_ttl(current)}")
    return 0


def hint_if_empty(memory: Memory, namespace: str) -> None:
    """Note on stderr that ``namespace`` holds nothing, naming the nearest known ones.

    Nothing is printed when it holds a memory, or the store cannot list its namespaces.
    """
    if memory.store.count("raw", namespace) or memory.store.count("fact", namespace):
        return
    try:
        known = [ns for ns, by in memory.namespaces().items() if any(by.values())]
    except Exception:  # noqa: BLE001 - a store that cannot list: no hint, the answer stands
        return
    note = f"namespace {namespace!r} holds no memories"
    if not known:
        hint = f"{note}, and neither does any other: add some first (lamina add, lamina ingest)"
    else:
        nearest = difflib.get_close_matches(namespace, known, n=NEAREST, cutoff=0.5)
        others = nearest or sorted(known)[:NEAREST]
        label = "did you mean" if nearest else "known namespaces"
        listed = ", ".join(repr(ns) for ns in others)
        hint = f"{note}; {label}: {listed} (lamina namespaces lists them all)"
    print(f"lamina: note: {hint}", file=sys.stderr)
