"""Counting a peer's LLM calls: every call, its tokens and latency, and unusable outputs.

Peers make their LLM calls inside their own code, so the count is taken where the calls
leave it: a LangChain callback handler passed in the run config (LangMem calls the run's
chat model object) or a wrapper around the OpenAI client's ``chat.completions`` (mem0
calls the endpoint through its own client, Graphiti through its own async one). Token
counts are the usage the server reported; a call without usage is counted as a call with
unknown tokens. Outputs the peer could not use without raising are counted as unusable:
the errors mem0 and Graphiti log and go on past, and a reply in plain text to a call that
offered tools and nothing else (LangMem writes memories only through tool calls; a small
model may print the call as text, which LangMem then reads as "nothing to remember").
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.outputs import LLMResult

from lamina.graphs import LLMCall


@dataclass(frozen=True)
class Taken:
    """What a peer did since the last :meth:`CallLog.take`."""

    calls: list[LLMCall]
    invalid: int
    """Outputs the peer reported as unusable (and went on without)."""
    kept: int = 0
    """Calls answered from kept replies instead of the model (their seconds are not its)."""


class CallLog:
    """A peer's LLM calls and unusable outputs, taken batch by batch (thread-safe)."""

    def __init__(self, node: str, method: str) -> None:
        self.node = node
        """The cost node the calls are reported under (the peer's name)."""
        self.method = method
        """How the peer reaches the model (``openai`` client or ``langchain`` model)."""
        self._calls: list[LLMCall] = []
        self._invalid = 0
        self._kept = 0
        self._lock = threading.Lock()

    def call(
        self,
        latency_s: float,
        prompt_tokens: int | None,
        completion_tokens: int | None,
        error: str | None = None,
    ) -> None:
        """Record one call (``error``: it raised)."""
        record = LLMCall(
            node=self.node,
            schema=self.node,
            attempt=1,
            method=self.method,
            ok=error is None,
            latency_s=latency_s,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            error=error,
        )
        with self._lock:
            self._calls.append(record)

    def invalid(self) -> None:
        """Record one output the peer could not use."""
        with self._lock:
            self._invalid += 1

    def kept(self) -> None:
        """Record one call answered from kept replies (it is also recorded as a call)."""
        with self._lock:
            self._kept += 1

    def take(self) -> Taken:
        """Everything recorded since the last take (and forget it)."""
        with self._lock:
            taken = Taken(self._calls, self._invalid, self._kept)
            self._calls, self._invalid, self._kept = [], 0, 0
        return taken


def _usage(response: LLMResult) -> tuple[int | None, int | None]:
    for generations in response.generations:
        for generation in generations:
            usage = getattr(getattr(generation, "message", None), "usage_metadata", None)
            if usage:
                return int(usage.get("input_tokens", 0)), int(usage.get("output_tokens", 0))
    token_usage = (response.llm_output or {}).get("token_usage") or {}
    if token_usage:
        return token_usage.get("prompt_tokens"), token_usage.get("completion_tokens")
    return None, None


def _text_instead_of_tool_call(response: LLMResult) -> bool:
    """The reply has text and no tool call (valid or not)."""
    for generations in response.generations:
        for generation in generations:
            message = getattr(generation, "message", None)
            if message is None:
                continue
            calls = getattr(message, "tool_calls", None) or getattr(
                message, "invalid_tool_calls", None
            )
            if calls:
                return False
            if str(message.content).strip():
                return True
    return False


class CountingCallbacks(BaseCallbackHandler):
    """A LangChain callback handler that records every chat model call in a :class:`CallLog`.

    Pass it in the run config (``{"callbacks": [handler]}``): LangChain hands it down to
    every model call made inside the run, however deep.
    """

    def __init__(self, log: CallLog) -> None:
        self.log = log
        self._started: dict[UUID, tuple[float, bool]] = {}
        """run id -> when the call began, and whether it offered tools."""
        self._lock = threading.Lock()

    def _start(self, run_id: UUID, *, tools: bool = False) -> None:
        with self._lock:
            self._started[run_id] = (time.perf_counter(), tools)

    def _finish(self, run_id: UUID) -> tuple[float, bool]:
        """The call's latency, and whether it offered tools."""
        with self._lock:
            started = self._started.pop(run_id, None)
        if started is None:
            return 0.0, False
        return time.perf_counter() - started[0], started[1]

    def on_chat_model_start(
        self, serialized: dict[str, Any], messages: Any, *, run_id: UUID, **kwargs: Any
    ) -> None:
        """Note when a chat model call began, and whether it offered tools."""
        params = kwargs.get("invocation_params") or {}
        self._start(run_id, tools=bool(params.get("tools")))

    def on_llm_start(
        self, serialized: dict[str, Any], prompts: list[str], *, run_id: UUID, **kwargs: Any
    ) -> None:
        """Note when a completion model call began."""
        self._start(run_id)

    def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        """Record a finished call with the usage the model reported.

        A call that offered tools and got text but no tool call is also counted unusable.
        """
        prompt, completion = _usage(response)
        latency, offered = self._finish(run_id)
        self.log.call(latency, prompt, completion)
        if offered and _text_instead_of_tool_call(response):
            self.log.invalid()

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        """Record a call that raised."""
        latency, _ = self._finish(run_id)
        self.log.call(latency, None, None, error=f"{type(error).__name__}: {error}")


def _answered(log: CallLog, started: float, response: Any) -> Any:
    """Record a call that returned, with the usage the server reported."""
    usage = getattr(response, "usage", None)
    log.call(
        time.perf_counter() - started,
        getattr(usage, "prompt_tokens", None),
        getattr(usage, "completion_tokens", None),
    )
    return response


def _raised(log: CallLog, started: float, error: Exception) -> None:
    log.call(time.perf_counter() - started, None, None, error=f"{type(error).__name__}: {error}")


class _CountingCompletions:
    def __init__(self, completions: Any, log: CallLog) -> None:
        self._completions = completions
        self._log = log

    def create(self, **params: Any) -> Any:
        started = time.perf_counter()
        try:
            response = self._completions.create(**params)
        except Exception as e:
            _raised(self._log, started, e)
            raise
        return _answered(self._log, started, response)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._completions, name)


class CountingAsyncCompletions:
    """An async OpenAI client's ``chat.completions`` whose ``create`` calls are logged.

    Graphiti's client is given one in place of its own.
    """

    def __init__(self, completions: Any, log: CallLog) -> None:
        self._completions = completions
        self._log = log

    async def create(self, **params: Any) -> Any:
        """The wrapped ``create``, recorded (a call that raises too)."""
        started = time.perf_counter()
        try:
            response = await self._completions.create(**params)
        except Exception as e:
            _raised(self._log, started, e)
            raise
        return _answered(self._log, started, response)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._completions, name)


class _CountingChat:
    def __init__(self, chat: Any, log: CallLog) -> None:
        self.completions = _CountingCompletions(chat.completions, log)
        self._chat = chat

    def __getattr__(self, name: str) -> Any:
        return getattr(self._chat, name)


class CountingOpenAI:
    """An OpenAI client whose ``chat.completions.create`` calls are recorded in a log.

    Everything else is the wrapped client's.
    """

    def __init__(self, client: Any, log: CallLog) -> None:
        self.chat = _CountingChat(client.chat, log)
        self._client = client

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


class _ErrorCounter(logging.Handler):
    def __init__(self, log: CallLog) -> None:
        super().__init__(level=logging.ERROR)
        self._log = log

    def emit(self, record: logging.LogRecord) -> None:
        self._log.invalid()


@contextmanager
def logged_errors(logger_name: str, log: CallLog) -> Iterator[None]:
    """Count the errors ``logger_name`` (and its children) logs meanwhile as unusable outputs."""
    logger = logging.getLogger(logger_name)
    handler = _ErrorCounter(log)
    logger.addHandler(handler)
    try:
        yield
    finally:
        logger.removeHandler(handler)


__all__ = [
    "CallLog",
    "CountingAsyncCompletions",
    "CountingCallbacks",
    "CountingOpenAI",
    "Taken",
    "logged_errors",
]
