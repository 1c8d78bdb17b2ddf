"""Fault injection for reliability tests: a chat model and a store that fail on cue.

Both wrappers count the calls made from each LangGraph node (read from the running
node's config) and fail the calls a :class:`FaultSchedule` names, so a test can break
"the 2nd store write of the constructor" or "every LLM call of the judge" and then
check what a resumed run leaves behind.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from pydantic import ConfigDict, Field

from ..errors import LaminaError
from .doubles import FakeChatModel, Reply

LLMFault = Literal["exception", "timeout", "malformed"]
WRITE_METHODS = frozenset(
    {
        "add",
        "update",
        "mark_superseded",
        "delete",
        "delete_namespace",
        "put_profile",
        "append_audit",
    }
)
"""The store methods that change data."""


class InjectedFault(LaminaError):
    """The failure a fault-injecting wrapper raised on purpose."""


def current_node() -> str:
    """Name of the LangGraph node running now, or ``""`` outside a graph."""
    try:
        from langgraph.config import get_config

        return str(get_config().get("metadata", {}).get("langgraph_node", ""))
    except RuntimeError:
        return ""


@dataclass
class FaultSchedule:
    """Which calls fail: the ``on``-th calls (1-based) made from ``node`` (any if None).

    ``armed`` switches the schedule off without losing its counters, so a test can
    break a run and then resume it with a healthy dependency.
    """

    node: str | None = None
    on: frozenset[int] = frozenset({1})
    armed: bool = True
    seen: Counter[str] = field(default_factory=Counter)
    fired: int = 0
    log: list[tuple[str, str]] = field(default_factory=list)
    """``(node, what)`` of every call counted, in order."""
    _lock: Any = field(default_factory=threading.Lock, repr=False)

    def hit(self, what: str) -> bool:
        """Count one call; return True if it must fail."""
        node = current_node()
        with self._lock:
            self.log.append((node, what))
            if self.node is not None and node != self.node:
                return False
            self.seen[node] += 1
            fire = self.armed and self.seen[node] in self.on
            self.fired += int(fire)
            return fire


class FaultyChatModel(FakeChatModel):
    """Wraps a chat model; the scheduled calls raise, time out or return garbage.

    ``timeout`` sleeps ``delay_s`` and raises :class:`TimeoutError`, as an HTTP client
    does when its read timeout passes. ``malformed`` returns ``malformed_reply``. Every
    other call is answered by ``inner``.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    inner: BaseChatModel
    schedule: FaultSchedule = Field(default_factory=FaultSchedule)
    fault: LLMFault = "exception"
    delay_s: float = 0.002
    malformed_reply: str = '{"title": "cut off'

    def next_reply(self, prompt: list[BaseMessage], **kwargs: Any) -> Reply:
        """The scheduled fault, or the inner model's reply."""
        self.calls.append(prompt)
        if self.schedule.hit("llm"):
            if self.fault == "exception":
                return InjectedFault("injected model failure")
            if self.fault == "timeout":
                time.sleep(self.delay_s)
                return TimeoutError(f"no reply within {self.delay_s}s (injected)")
            return self.malformed_reply
        message = self.inner._generate(prompt, **kwargs).generations[0].message
        if not isinstance(message, AIMessage):
            raise TypeError(f"the inner model replied with a {type(message).__name__}")
        return message

    @property
    def _llm_type(self) -> str:
        return "faulty"


class FaultyStore:
    """Proxies a memory store; the scheduled calls of ``methods`` raise.

    With ``after_write=True`` a faulted write is carried out first and then reported as
    failed (a lost acknowledgement), which is what makes retries create duplicates in
    code that is not idempotent.
    """

    def __init__(
        self,
        inner: Any,
        schedule: FaultSchedule,
        *,
        methods: frozenset[str] = WRITE_METHODS,
        after_write: bool = False,
    ) -> None:
        self._inner = inner
        self.schedule = schedule
        self.methods = methods
        self.after_write = after_write

    def __getattr__(self, name: str) -> Any:
        target = getattr(self._inner, name)
        if name not in self.methods or not callable(target):
            return target

        def call(*args: Any, **kwargs: Any) -> Any:
            if not self.schedule.hit(name):
                return target(*args, **kwargs)
            if self.after_write:
                target(*args, **kwargs)
            raise InjectedFault(f"injected store failure in {name}()")

        return call


__all__ = [
    "WRITE_METHODS",
    "FaultSchedule",
    "FaultyChatModel",
    "FaultyStore",
    "InjectedFault",
    "LLMFault",
    "current_node",
]
