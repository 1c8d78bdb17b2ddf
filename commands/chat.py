"""``lamina chat``: a REPL that answers from memory and remembers each exchange.

Memory persists in the data directory, so a later run remembers what an earlier one
was told. Lines starting with ``/`` are commands (``/help`` lists them).
"""

from __future__ import annotations

import argparse
import sys
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import LaminaError, RecordNotFoundError
from .checks import check_question
from .common import add_memory_options, namespace_of, open_memory, report_failures
from .manage import inspect_report, print_forget, unknown_ids
from .recall import format_hit

if TYPE_CHECKING:
    from ..memory import Memory

HELP = """commands:
  /search QUERY        show the memories that match QUERY (no LLM)
  /inspect             count the memories per granularity
  /forget TEXT         forget every memory that mentions TEXT
  /forget --id ID...   forget these memories
  /help                this list
  /quit                leave (also Ctrl-D)"""


def register(sub: Any) -> None:
    """Add ``chat`` to the subparsers ``sub``."""
    chat = sub.add_parser(
        "chat", help="talk with your memory: answers from it and remembers each exchange"
    )
    chat.add_argument("--user", default="user", help="your speaker name in memory (default user)")
    chat.add_argument("--session", help="session id of this conversation (default: one per day)")
    chat.add_argument(
        "--window",
        type=int,
        default=6,
        help="recent lines used to make questions stand alone (default 6)",
    )
    add_memory_options(chat)
    chat.set_defaults(func=run_chat)


class ChatSession:
    """One REPL run: answers lines, stores exchanges, runs slash commands."""

    def __init__(self, memory: Memory, args: argparse.Namespace) -> None:
        self.memory = memory
        self.namespace = namespace_of(args)
        self.user = args.user
        self.session_id = args.session
        self.window: deque[str] = deque(maxlen=max(args.window, 0))
        self.commands: dict[str, Callable[[str], None]] = {
            "/search": self.search,
            "/inspect": self.inspect,
            "/forget": self.forget,
            "/help": lambda _: print(HELP),
        }

    def handle(self, line: str) -> bool:
        """Handle one input line; return False when the user wants to leave."""
        line = line.strip()
        if not line:
            return True
        name, _, rest = line.partition(" ")
        if name in ("/quit", "/exit"):
            return False
        if name.startswith("/"):
            command = self.commands.get(name)
            if command is None:
                print(f"unknown command {name}; /help lists them")
            else:
                command(rest.strip())
            return True
        self.reply(line)
        return True

    def reply(self, line: str) -> None:
        """Answer from memory, then remember the exchange."""
        check_question(line, self.memory.config)
        result = self.memory.answer(line, namespace=self.namespace, window=list(self.window))
        print(f"memory> {result.answer}")
        if result.citations:
            print(f"        (cites {', '.join(result.citations)})")
        report_failures(result.failures)
        exchange: list[dict[str, str]] = [{"role": "user", "name": self.user, "content": line}]
        if not result.refused:
            exchange.append({"role": "assistant", "content": result.answer})
        added = self.memory.add(exchange, namespace=self.namespace, session_id=self.session_id)
        report_failures(added.failures)
        self.window.append(f"{self.user}: {line}")
        self.window.append(f"assistant: {result.answer}")

    def search(self, query: str) -> None:
        """``/search QUERY``."""
        if not query:
            print("usage: /search QUERY")
            return
        hits = self.memory.search(query, namespace=self.namespace, k=5)
        for hit in hits:
            print(f"  {format_hit(hit)}")
        if not hits:
            print("  no memories match")

    def inspect(self, _: str) -> None:
        """``/inspect``."""
        report = inspect_report(self.memory, self.namespace, None, 1)
        print("  " + ", ".join(f"{gran}: {part['count']}" for gran, part in report.items()))

    def forget(self, rest: str) -> None:
        """``/forget TEXT`` or ``/forget --id ID...``."""
        words = rest.split()
        if words[:1] == ["--id"]:
            if len(words) < 2:
                print("usage: /forget --id ID...")
                return
            try:
                result = self.memory.forget(namespace=self.namespace, memory_ids=words[1:])
            except RecordNotFoundError as e:
                print(unknown_ids(e, self.namespace, in_chat=True))
                return
        elif rest:
            result = self.memory.forget(namespace=self.namespace, subject=rest)
        else:
            print("usage: /forget TEXT  or  /forget --id ID...")
            return
        print_forget(result, self.namespace)
        self.window.clear()  # the window may quote what was just forgotten


def run_chat(args: argparse.Namespace) -> int:
    """Read lines until ``/quit`` or end of input."""
    interactive = sys.stdin.isatty()
    with open_memory(args, local_model=True) as memory:
        session = ChatSession(memory, args)
        print(f"lamina chat, namespace {session.namespace!r}: /help for commands, /quit to leave")
        while True:
            try:
                line = input("you> " if interactive else "")
            except (EOFError, KeyboardInterrupt):
                print()
                break
            try:
                if not session.handle(line):
                    break
            except LaminaError as e:
                print(f"lamina: error: {e}", file=sys.stderr)
    return 0
