"""Progress lines for ``lamina demo``: every line says how long the demo has run.

A newcomer watching a small CPU work for a minute needs to see that something is
happening. :class:`Progress` stamps each line with the seconds since the demo started,
and :meth:`Progress.waiting` prints a heartbeat line while a long step (loading the
model, an LLM call) runs.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

HEARTBEAT_SECONDS = 10.0
"""How often a long step reports that it is still running."""

INDENT = " " * 10
"""Detail lines sit under the text of the stamped lines."""


class Progress:
    """Prints stamped progress lines; safe to use from a heartbeat thread.

    Args:
        out: Where to print (default ``sys.stdout``, read at each line).
        clock: Seconds, monotonic (tests pass a fake).
        heartbeat: Seconds between the heartbeat lines of :meth:`waiting`.
    """

    def __init__(
        self,
        out: TextIO | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        heartbeat: float = HEARTBEAT_SECONDS,
    ) -> None:
        if heartbeat <= 0:
            raise ValueError(f"heartbeat must be a positive number of seconds, got {heartbeat}")
        self._out = out
        self._clock = clock
        self._started = clock()
        self.heartbeat = heartbeat
        self._lock = threading.Lock()

    @property
    def elapsed(self) -> float:
        """Seconds since the demo started."""
        return self._clock() - self._started

    def _print(self, text: str) -> None:
        with self._lock:
            print(text, file=self._out or sys.stdout, flush=True)

    def line(self, text: str) -> None:
        """A line stamped with the elapsed time, e.g. ``[  12.3s] text``."""
        self._print(f"[{self.elapsed:6.1f}s] {text}")

    def step(self, number: int, total: int, title: str) -> None:
        """The stamped heading of one step of the demo."""
        self._print("")
        self.line(f"{number}/{total} {title}")

    def detail(self, text: str) -> None:
        """An indented line under the last stamped one (no stamp)."""
        self._print(f"{INDENT}{text}")

    @contextmanager
    def waiting(self, what: str, *, short: str | None = None) -> Iterator[None]:
        """Announce a long step, then print a heartbeat until it ends.

        Prints ``what...`` at once, and ``... <short>: 20 s`` every :attr:`heartbeat`
        seconds while the block runs (``short`` defaults to ``what``).
        """
        self.line(f"  {what}...")
        began = self._clock()
        done = threading.Event()

        def beat() -> None:
            while not done.wait(self.heartbeat):
                self.line(f"  ... {short or what}: {self._clock() - began:.0f} s")

        thread = threading.Thread(target=beat, name="lamina-demo-heartbeat", daemon=True)
        thread.start()
        try:
            yield
        finally:
            done.set()
            thread.join()


__all__ = ["HEARTBEAT_SECONDS", "Progress"]
