"""``lamina namespaces`` (what the store holds, per namespace) and the empty-namespace hint."""

from __future__ import annotations

import argparse
import difflib
import sys
from typing import TYPE_CHECKING, Any

from .common import add_memory_options, open_memory, print_json

if TYPE_CHECKING:
    from ..memory import Memory

COLUMNS = ("raw", "fact", "episode", "scene")
NEAREST = 3
"""How many known namespaces the hint names."""


def register(sub: Any) -> None:
    """Add ``namespaces`` to the subparsers ``sub``."""
    namespaces = sub.add_parser(
        "namespaces", help="list the namespaces memory holds, with counts per granularity"
    )
    namespaces.add_argument("--json", action="store_true", help="print the counts as JSON")
    add_memory_options(namespaces, namespace_help="not used: every namespace is listed")
    namespaces.set_defaults(func=run_namespaces)


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


def empty_namespace_hint(memory: Memory, namespace: str) -> str | None:
    """A note when ``namespace`` holds nothing: it is empty, and the nearest known ones.

    None when the namespace holds a memory, or the store cannot list its namespaces.
    """
    if memory.store.count("raw", namespace) or memory.store.count("fact", namespace):
        return None
    try:
        known = [ns for ns, by in memory.namespaces().items() if any(by.values())]
    except Exception:  # noqa: BLE001 - a store that cannot list: no hint, the answer stands
        return None
    note = f"namespace {namespace!r} holds no memories"
    if not known:
        return f"{note}, and neither does any other: add some first (lamina add, lamina ingest)"
    nearest = difflib.get_close_matches(namespace, known, n=NEAREST, cutoff=0.5)
    others = nearest or sorted(known)[:NEAREST]
    label = "did you mean" if nearest else "known namespaces"
    listed = ", ".join(repr(ns) for ns in others)
    return f"{note}; {label}: {listed} (lamina namespaces lists them all)"


def hint_if_empty(memory: Memory, namespace: str) -> None:
    """Print :func:`empty_namespace_hint` to stderr, if there is one."""
    hint = empty_namespace_hint(memory, namespace)
    if hint is not None:
        print(f"lamina: note: {hint}", file=sys.stderr)
