"""One helper for every LLM decision: a pydantic schema in, a validated object out.

It tries the model's native structured output (``json_schema`` or ``json_mode``); when the
model has none, it asks for JSON in the prompt. Replies are parsed tolerantly (code fences,
prose before or after the object), validated against the schema, and on failure the model
is asked again with the validation error, a bounded number of times. Each attempt is
recorded with its node, tokens and latency. When every attempt fails it raises
:class:`StructuredOutputError`, which carries the attempts, so a node can record the
failure and let the graph go on.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, ValidationError

from ..errors import MemstrataError
from ..prompts.structured import JSON_INSTRUCTIONS, REPAIR_REQUEST

T = TypeVar("T", bound=BaseModel)
StructuredMethod = Literal["json_schema", "json_mode", "prompt"]


@dataclass(frozen=True)
class LLMCall:
    """One attempt of one structured call, for cost accounting and debugging."""

    node: str
    schema: str
    attempt: int
    method: str
    ok: bool
    latency_s: float
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    error: str | None = None


class StructuredOutputError(MemstrataError):
    """Every attempt to get a valid ``schema`` object failed."""

    def __init__(self, schema: type[BaseModel], attempts: list[LLMCall], last_output: str | None):
        self.schema = schema
        self.attempts = attempts
        self.last_output = last_output
        errors = "; ".join(f"#{a.attempt}: {a.error}" for a in attempts)
        super().__init__(f"no valid {schema.__name__} after {len(attempts)} attempt(s): {errors}")


@dataclass
class StructuredResult(Generic[T]):
    """The validated value and the attempts it took."""

    value: T
    calls: list[LLMCall] = field(default_factory=list)


MAX_REPLY_CHARS = 1_000_000
"""Longer replies are rejected unparsed (a runaway generation, not an answer)."""
MAX_JSON_STARTS = 64
"""How many ``{``/``[`` positions the tolerant parser tries before giving up."""


def parse_json_payload(text: str) -> Any:
    """Return the first JSON object or array in ``text``.

    Accepts a bare object, one inside a code fence, or one surrounded by prose. Lone
    UTF-16 surrogates (JSON escapes in D800-DFFF) in decoded strings become U+FFFD, so
    a reply can never smuggle in text that cannot be stored as UTF-8.

    Raises:
        ValueError: if no JSON value can be decoded, the reply is longer than
            :data:`MAX_REPLY_CHARS`, or it is nested too deeply to decode.
    """
    stripped = text.strip()
    if not stripped:
        raise ValueError("the reply was empty")
    if len(stripped) > MAX_REPLY_CHARS:
        raise ValueError(f"the reply has {len(stripped)} characters (limit {MAX_REPLY_CHARS})")
    try:
        return _scrub(json.loads(stripped))
    except json.JSONDecodeError:
        pass
    except RecursionError as e:
        raise ValueError("the reply is nested too deeply to decode") from e
    decoder = json.JSONDecoder()
    starts = (i for i, char in enumerate(stripped) if char in "{[")
    for _, start in zip(range(MAX_JSON_STARTS), starts, strict=False):
        try:
            value, _ = decoder.raw_decode(stripped, start)
        except json.JSONDecodeError:
            continue
        except RecursionError as e:
            raise ValueError("the reply is nested too deeply to decode") from e
        return _scrub(value)
    raise ValueError(f"no JSON object found in the reply: {stripped[:200]!r}")


def _scrub(value: Any) -> Any:
    """Replace lone surrogates in every decoded string with U+FFFD."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        return value
    if isinstance(value, list):
        return [_scrub(v) for v in value]
    if isinstance(value, dict):
        return {_scrub(k): _scrub(v) for k, v in value.items()}
    return value


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

    def _runnable(self, schema: type[BaseModel], method: StructuredMethod) -> Any:
        if method == "prompt":
            return self.model
        return self.model.with_structured_output(schema, method=method, include_raw=True)

    def _plan(self, schema: type[BaseModel]) -> tuple[Any, StructuredMethod]:
        if self.method != "prompt":
            try:
                return self._runnable(schema, self.method), self.method
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
    def _interpret(schema: type[T], output: Any) -> tuple[T | None, Any, str | None]:
        """Return (value, raw message, error)."""
        raw = output
        if isinstance(output, dict) and "raw" in output:
            raw = output["raw"]
            parsed = output.get("parsed")
            if isinstance(parsed, schema):
                return parsed, raw, None
        try:
            return schema.model_validate(parse_json_payload(_text_of(raw))), raw, None
        except (ValueError, ValidationError) as e:
            return None, raw, str(e).strip()[:2000]

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

    def __iter__(self) -> Iterator[list[BaseMessage]]:
        for _ in range(self.max_attempts):
            self._started = time.perf_counter()
            yield self.convo

    def _record(
        self, raw: Any, error: str | None, usage: tuple[int | None, int | None] | None = None
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
            )
        )

    def failed(self, exc: BaseException) -> None:
        """Record an attempt that raised; later attempts ask for JSON in the prompt.

        A native structured call can raise where a plain one would return text (e.g. the
        reply hit the token limit), so the fallback gets the tolerant parser's chance.
        """
        self._record(None, f"{type(exc).__name__}: {exc}"[:2000], _exception_usage(exc))
        if self.method != "prompt":
            self.runnable, self.method = self._caller.model, "prompt"
            self.convo = self._caller._messages(self.schema, self._messages, "prompt")

    def received(self, output: Any) -> T | None:
        """Record a reply; return the value if valid, else queue a repair request."""
        value, raw, error = StructuredCaller._interpret(self.schema, output)
        self._record(raw, error)
        if value is None:
            self.last = _text_of(raw)
            repair = HumanMessage(REPAIR_REQUEST.format(error=error))
            self.convo = [*self.convo, AIMessage(self.last), repair]
        return value

    def exhausted(self) -> StructuredOutputError:
        """The error to raise once every attempt failed."""
        return StructuredOutputError(self.schema, self.calls, self.last)
