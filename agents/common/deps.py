"""What every node needs, passed in once when the graph is built."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

from langchain_core.messages import BaseMessage
from pydantic import BaseModel

from ...core.arms import ResearchArms
from ...core.state import Failure
from ...llm.structured import LLMCall, StructuredCaller, StructuredOutputError
from ...records.model import utc_now
from ...stores.base import MemoryStore
from .journal import ReplyJournal

T = TypeVar("T", bound=BaseModel)


@dataclass(frozen=True)
class NodeDeps:
    """The store, the structured LLM caller and a clock shared by the nodes."""

    store: MemoryStore
    """Any :class:`~lamina.stores.base.MemoryStore` (Chroma in production, a fake or a
    fault-injecting proxy in tests)."""
    caller: StructuredCaller
    clock: Callable[[], datetime] = field(default=utc_now)
    model_name: str = "unknown"
    """Recorded in audit entries."""
    journal: ReplyJournal | None = None
    """Construction replies kept between runs; None rebuilds everything."""
    arms: ResearchArms = field(default_factory=ResearchArms)
    """The designs a benchmark compares (default: lamina's own)."""
    memo: dict[str, Any] = field(default_factory=dict)
    """Answers of small repeated checks, kept for the graph's lifetime (e.g. the rule
    check's, since an excerpt shows earlier turns again)."""


@dataclass
class StepLog:
    """Runs a node's LLM steps, collecting call records and failures for the state.

    A step whose structured call fails is recorded and returns None: the node goes on
    without it, and the raw data it was working from stays untouched.
    """

    node: str
    deps: NodeDeps
    calls: list[LLMCall] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    checks: list[str] = field(default_factory=list)
    """What a deterministic check changed, one entry each (e.g. ``owner_corrected``)."""

    def ask(self, schema: type[T], messages: Sequence[BaseMessage], step: str) -> T | None:
        """Return a validated ``schema`` object, or None after recording the failure."""
        try:
            result = self.deps.caller.invoke(schema, messages, node=self.node)
        except StructuredOutputError as e:
            self.calls.extend(e.attempts)
            self.fail(step, e)
            return None
        self.calls.extend(result.calls)
        return result.value

    def fail(self, step: str, error: BaseException | str) -> None:
        """Record a failed step."""
        text = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
        self.failures.append(
            Failure(node=self.node, step=step, error=text[:2000], at=self.deps.clock())
        )

    def count(self, check: str, times: int = 1) -> None:
        """Count ``times`` changes a deterministic check made (reported in ``checks``)."""
        self.checks.extend([check] * times)

    def update(self) -> dict[str, Any]:
        """The state update carrying this node's call records, failures and checks."""
        out: dict[str, Any] = {"llm_calls": list(self.calls), "failures": list(self.failures)}
        if self.checks:  # only construction counts checks; the recall state has no such key
            out["checks"] = list(self.checks)
        return out
