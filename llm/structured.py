"""One helper for every LLM decision: a pydantic schema in, a validated object out.

It tries the model's native structured output (``json_schema``, grammar-constrained on
llama.cpp, or ``json_mode``); when the model has none, it asks for JSON in the prompt. A
reply that still fails to parse is read tolerantly (code fences, prose around the
object) and, if its syntax is broken, repaired by ``json-repair`` before anything else
(single quotes, unquoted keys, trailing commas); a reply cut off before its JSON closed
is never repaired into a shorter object. Only then is the model asked again, with the
validation error, a bounded number of times. Each attempt is recorded with its node, the
server-reported tokens, latency, and whether it was repaired. A model that cannot be
reached (refused, timed out, HTTP 401/403/404/5xx) is not asked again. When every
attempt fails it raises :class:`StructuredOutputError`, which carries the attempts, so a
node can record the failure and let the graph go on; the failure is logged at WARNING.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, ValidationError

from ..core.calls import LLMCall
from ..errors import LaminaError
from ..prompts.structured import JSON_INSTRUCTIONS, REPAIR_REQUEST, SHORTER_REQUEST
from .reachability import unreachable_reason
from .replies import ParsedReply, TruncatedReplyError, parse_json_payload, read_reply

T = TypeVar("T", bound=BaseModel)
StructuredMethod = Literal["json_schema", "json_mode", "prompt"]

logger = logging.getLogger(__name__)

__all__ = [
    "LLMCall",
    "StructuredCaller",
    "StructuredMethod",
    "StructuredOutputError",
    "StructuredResult",
    "parse_json_payload",
]


class StructuredOutputError(LaminaError):
    """Every attempt to get a valid ``schema`` object failed."""

    def __init__(self, schema: type[BaseModel], attempts: list[LLMCall], last_output: str | None):
        self.schema = schema
        self.attempts = attempts
        self.last_output = last_output
        errors = "; ".join(f"#{a.attempt}: {a.error}" for a in attempts)
        super().__init__(f"no valid {schema.__name__} after {len(attempts)} attempt(s): {errors}")

    @property
    def unreachable(self) -> bool:
        """Whether the model could not be reached at all (no attempt got a reply)."""
        return bool(self.attempts) and all(a.unreachable for a in self.attempts)


@dataclass
class StructuredResult(Generic[T]):
    """The validated value and the attempts it took."""

    value: T
    calls: list[LLMCall] = field(default_factory=list)

    @property
    def repairs(self) -> int:
        """Replies whose JSON syntax json-repair fixed."""
        return sum(1 for c in self.calls if c.repaired)

    @property
    def reasks(self) -> int:
        """Times the model was asked again after a failed attempt."""
        return sum(1 for c in self.calls if c.reask)


def _text_of(message: Any) -> str:
    if isinstance(message, BaseMessage):
        content = message.content
        if isinstance(content, str):
            return content
        return "".join(
            part.get("text", "") if isinstance(part, dict) else str(part) for part in content
        )
    return "" if message is None else str(message)


def _usage(message: Any) -> tuple[int | None, int | None]:
    usage = getattr(message, "usage_metadata", None)
    if not usage:
        return None, None
    return usage.get("input_tokens"), usage.get("output_tokens")


def _exception_usage(exc: BaseException) -> tuple[int | None, int | None]:
    """Token counts an OpenAI client error carries (e.g. a reply cut at the length limit)."""
    usage = getattr(getattr(exc, "completion", None), "usage", None)
    if usage is None:
        return None, None
    return getattr(usage, "prompt_tokens", None), getattr(usage, "completion_tokens", None)


class StructuredCaller:
    """Calls a chat model for one pydantic schema, with tolerant parsing and retries."""

    def __init__(
        self,
        model: BaseChatModel,
        *,
        method: StructuredMethod = "json_schema",
        max_attempts: int = 3,
    ) -> None:
        if max_attempts < 1:
            raise ValueError(f"max_attempts must be >= 1, got {max_attempts}")
        self.model = model
        self.method = method
        self.max_attempts = max_attempts

    def _plan(self, schema: type[BaseModel]) -> tuple[Any, StructuredMethod]:
        if self.method != "prompt":
            try:
                native = self.model.with_structured_output(
                    schema, method=self.method, include_raw=True
                )
                return native, self.method
            except (NotImplementedError, ValueError, TypeError):
                pass  # the model has no native structured output: ask in the prompt
        return self.model, "prompt"

    @staticmethod
    def _messages(
        schema: type[BaseModel], messages: Sequence[BaseMessage], method: StructuredMethod
    ) -> list[BaseMessage]:
        out = list(messages)
        if method == "prompt":
            schema_text = json.dumps(schema.model_json_schema())
            out.append(SystemMessage(JSON_INSTRUCTIONS.format(schema=schema_text)))
        return out

    @staticmethod
    def _interpret(schema: type[T], output: Any) -> _Reading[T]:
        """Read one reply: the native parse, else the text parsed or repaired, validated."""
        raw = output
        if isinstance(output, dict) and "raw" in output:
            raw = output["raw"]
            parsed = output.get("parsed")
            if isinstance(parsed, schema):
                return _Reading(raw, parsed)
        text = _text_of(raw)
        reply: ParsedReply | None = None
        try:
            reply = read_reply(text)
            return _Reading(raw, schema.model_validate(reply.value), repaired=reply.repaired)
        except TruncatedReplyError as e:
            why = str(e)
            cut = _finish_reason(raw) == "length"
            if cut:
                why = f"the reply hit the token limit before its JSON closed; {why}"
            return _Reading(raw, error=why[:2000], cut_off=cut)
        except (ValueError, ValidationError) as e:
            repaired = reply is not None and reply.repaired
            note = "after json-repair: " if repaired else ""
            return _Reading(raw, error=(note + str(e).strip())[:2000], repaired=repaired)

    def invoke(
        self, schema: type[T], messages: Sequence[BaseMessage], *, node: str
    ) -> StructuredResult[T]:
        """Return a validated ``schema`` object, or raise :class:`StructuredOutputError`."""
        run = _Attempts(self, schema, messages, node)
        for convo in run:
            try:
                output = run.runnable.invoke(convo)
            except Exception as e:  # HTTP errors, timeouts, parser errors: retry
                run.failed(e)
                continue
            if (value := run.received(output)) is not None:
                return StructuredResult(value, run.calls)
        raise run.exhausted()

    async def ainvoke(
        self, schema: type[T], messages: Sequence[BaseMessage], *, node: str
    ) -> StructuredResult[T]:
        """Async twin of :meth:`invoke`."""
        run = _Attempts(self, schema, messages, node)
        for convo in run:
            try:
                output = await run.runnable.ainvoke(convo)
            except Exception as e:  # HTTP errors, timeouts, parser errors: retry
                run.failed(e)
                continue
            if (value := run.received(output)) is not None:
                return StructuredResult(value, run.calls)
        raise run.exhausted()


def _finish_reason(message: Any) -> str | None:
    metadata = getattr(message, "response_metadata", None) or {}
    reason = metadata.get("finish_reason") if isinstance(metadata, dict) else None
    return str(reason) if reason else None


@dataclass
class _Reading(Generic[T]):
    """What one reply gave: the raw message, and a value or the error."""

    raw: Any
    value: T | None = None
    error: str | None = None
    repaired: bool = False
    cut_off: bool = False
    """The reply stopped at the token limit with its JSON still open."""


class _Attempts(Generic[T]):
    """The bookkeeping of one structured call: conversation, attempts, records."""

    def __init__(
        self,
        caller: StructuredCaller,
        schema: type[T],
        messages: Sequence[BaseMessage],
        node: str,
    ) -> None:
        self.schema, self.node, self.max_attempts = schema, node, caller.max_attempts
        self._caller, self._messages = caller, list(messages)
        self.runnable, self.method = caller._plan(schema)
        self.convo = caller._messages(schema, messages, self.method)
        self.calls: list[LLMCall] = []
        self.last: str | None = None
        self._started = 0.0
        self._stop = False

    def __iter__(self) -> Iterator[list[BaseMessage]]:
        for _ in range(self.max_attempts):
            if self._stop:
                return
            self._started = time.perf_counter()
            yield self.convo

    def _record(
        self,
        raw: Any,
        error: str | None,
        usage: tuple[int | None, int | None] | None = None,
        *,
        repaired: bool = False,
        unreachable: bool = False,
    ) -> None:
        prompt_tokens, completion_tokens = usage or _usage(raw)
        self.calls.append(
            LLMCall(
                node=self.node,
                schema=self.schema.__name__,
                attempt=len(self.calls) + 1,
                method=self.method,
                ok=error is None,
                latency_s=time.perf_counter() - self._started,
                prompt_tokens=prompt_tokens,
                completion_tokens=completion_tokens,
                error=error,
                repaired=repaired,
                unreachable=unreachable,
            )
        )

    def failed(self, exc: BaseException) -> None:
        """Record an attempt that raised; later attempts ask for JSON in the prompt.

        A native structured call can raise where a plain one would return text (e.g. the
        reply hit the token limit), so the fallback gets the tolerant parser's chance. A
        model that cannot be reached is not asked again.
        """
        reason = unreachable_reason(exc)
        error = f"{type(exc).__name__}: {exc}"[:2000]
        self._record(None, error, _exception_usage(exc), unreachable=reason is not None)
        if reason is not None:
            self._stop = True
            logger.info(  # the caller decides: Memory.answer raises, Memory.add warns
                "%s/%s: the chat model could not be reached (%s): %s",
                self.node,
                self.schema.__name__,
                reason,
                error,
            )
            return
        if self.method != "prompt":
            self.runnable, self.method = self._caller.model, "prompt"
            self.convo = self._caller._messages(self.schema, self._messages, "prompt")

    def received(self, output: Any) -> T | None:
        """Record a reply; return the value if valid, else queue a re-ask with the error."""
        reading = StructuredCaller._interpret(self.schema, output)
        self._record(reading.raw, reading.error, repaired=reading.repaired)
        if reading.value is None:
            self.last = _text_of(reading.raw)
            logger.info(
                "%s/%s attempt %d: malformed reply (%s)",
                self.node,
                self.schema.__name__,
                len(self.calls),
                (reading.error or "")[:300],
            )
            request = SHORTER_REQUEST if reading.cut_off else REPAIR_REQUEST
            repair = HumanMessage(request.format(error=reading.error))
            self.convo = [*self.convo, AIMessage(self.last), repair]
        elif reading.repaired:
            logger.info("%s/%s: json-repair fixed the reply", self.node, self.schema.__name__)
        return reading.value

    def exhausted(self) -> StructuredOutputError:
        """The error to raise once every attempt failed (logged at WARNING)."""
        error = StructuredOutputError(self.schema, self.calls, self.last)
        if not error.unreachable:
            logger.warning("%s: malformed output, the step is skipped: %s", self.node, error)
        return error
