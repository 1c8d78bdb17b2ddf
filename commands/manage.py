"""``lamina inspect`` (what memory holds) and ``lamina forget`` (delete with cascade)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInputError, RecordNotFoundError
from .checks import require_words
from .choices import GRANULARITIES
from .common import add_memory_options, namespace_of, one_line, open_memory, print_json

if TYPE_CHECKING:
    from ..memory import Memory
    from ..memory.results import ForgetResult
    from ..records.model import MemoryRecord


def register(sub: Any) -> None:
    """Add ``inspect`` and ``forget`` to the subparsers ``sub``."""
    inspect = sub.add_parser(
        "inspect", help="count memories per granularity and show the latest ones"
    )
    inspect.add_argument("--granularity", "-g", choices=GRANULARITIES, help="only this granularity")
    inspect.add_argument(
        "--limit",
        "-l",
        type=int,
        default=5,
        help="latest records shown per granularity (default 5)",
    )
    inspect.add_argument("--audit", action="store_true", help="also print the audit log")
    inspect.add_argument("--profile", action="store_true", help="also print the profile")
    inspect.add_argument("--json", action="store_true", help="print everything as JSON")
    add_memory_options(inspect)
    inspect.set_defaults(func=run_inspect)

    forget = sub.add_parser(
        "forget", help="delete memories and whatever was derived only from them"
    )
    which = forget.add_mutually_exclusive_group(required=True)
    which.add_argument("--id", nargs="+", dest="ids", metavar="ID", help="memory ids to forget")
    which.add_argument("--subject", help="forget every memory that mentions this text")
    which.add_argument(
        "--all", action="store_true", help="forget the whole namespace (needs --yes)"
    )
    forget.add_argument("--yes", action="store_true", help="confirm --all")
    forget.add_argument("--json", action="store_true", help="print the result as JSON")
    add_memory_options(forget)
    forget.set_defaults(func=run_forget)


def run_inspect(args: argparse.Namespace) -> int:
    """Print per-granularity counts and latest records, optionally audit log and profile."""
    if args.limit < 1:
        raise InvalidInputError(f"--limit must be >= 1, got {args.limit}")
    namespace = namespace_of(args)
    with open_memory(args) as memory:
        report = inspect_report(memory, namespace, args.granularity, args.limit)
        audit = memory.store.list_audit(namespace) if args.audit else None
        profile = memory.profile(namespace=namespace) if args.profile else None
    if args.json:
        data: dict[str, Any] = {"namespace": namespace, "granularities": report}
        if args.audit:
            data["audit"] = audit
        if args.profile:
            data["profile"] = profile
        print_json(data)
        return 0
    print(f"namespace {namespace!r}")
    for gran, part in report.items():
        print(f"{gran}: {part['count']}")
        for record in part["latest"]:
            print(f"  {format_record(record)}")
    if audit is not None:
        print(f"audit log: {len(audit)} entries")
        for entry in audit:
            reason = f" ({one_line(entry.reason, 60)})" if entry.reason else ""
            print(
                f"  {entry.at.isoformat(timespec='seconds')} {entry.actor} {entry.action} "
                f"{entry.granularity} {entry.target_id}{reason}"
            )
    if args.profile:
        print("profile:" if profile else "profile: none yet")
        if profile:
            for line in profile.render().splitlines():
                print(f"  {line}")
    return 0


def inspect_report(
    memory: Memory, namespace: str, granularity: str | None, limit: int
) -> dict[str, dict[str, Any]]:
    """Per granularity: its record count and its latest ``limit`` records."""
    latest = memory.inspect(namespace=namespace, granularity=granularity, limit=limit)
    return {
        gran: {"count": memory.store.count(gran, namespace), "latest": records}
        for gran, records in latest.items()
    }


def format_record(record: MemoryRecord) -> str:
    """One line: id, date, speaker or title, text."""
    label = getattr(record, "speaker", None) or getattr(record, "title", None)
    head = f"{label}: " if label else ""
    when = record.occurred_at.date().isoformat()
    return f"[{record.id}] {when} {head}{one_line(record.text)}"


def run_forget(args: argparse.Namespace) -> int:
    """Forget by ids, by subject, or everything (with ``--yes``)."""
    namespace = namespace_of(args)
    if args.all and not args.yes:
        raise InvalidInputError(
            f"--all deletes every memory in namespace {namespace!r}; add --yes to confirm"
        )
    if args.subject is not None:
        require_words("subject", args.subject, "lamina forget --subject Biscuit")
    with open_memory(args) as memory:
        try:
            result = memory.forget(
                namespace=namespace,
                memory_ids=args.ids or (),
                subject=args.subject,
                all=args.all,
            )
        except RecordNotFoundError as e:
            raise RecordNotFoundError(unknown_ids(e, namespace), ids=e.ids) from e
    if args.json:
        print_json(result)
    else:
        print_forget(result, namespace)
    return 0


def unknown_ids(error: RecordNotFoundError, namespace: str, *, in_chat: bool = False) -> str:
    """The command line's words for ids that name no memory: where ids come from."""
    listed = ", ".join(repr(i) for i in error.ids) or "with that id"
    if in_chat:
        where = "/search TEXT shows the ids of the memories that match"
    else:
        n = "" if namespace == "default" else f" -n {namespace}"
        where = (
            f"ids come from `lamina search QUERY{n}`, `lamina inspect{n}` or the citations "
            f"of `lamina ask`, in the same namespace"
        )
    return f"no memory {listed} in namespace {namespace!r}; {where}"


def print_forget(result: ForgetResult, namespace: str) -> None:
    """Summarise what a forget deleted."""
    parts = [f"{len(ids)} {gran}" for gran, ids in result.deleted.items() if ids]
    print(
        f"forgot {result.count} record(s) in {namespace!r}"
        + (f": {', '.join(parts)}" if parts else "")
    )
    cleaned = sum(len(ids) for ids in result.updated.values())
    if cleaned:
        print(f"{cleaned} record(s) kept with the forgotten sources removed")
