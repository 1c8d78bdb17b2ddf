"""Test doubles for code that uses memstrata: fakes, scripted models, a store pool.

Fake embeddings, scripted chat models, and a pool of throwaway stores for property-based
tests.

They need no model and no network, so unit tests stay fast and exact.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import uuid
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from pydantic import Field

if TYPE_CHECKING:
    from .stores.chroma import ChromaMemoryStore

_WORD = re.compile(r"[a-z0-9]+")


class StorePool:
    """Hands one in-memory store (on :class:`FakeEmbeddings`) to many test examples.

    Each example should use fresh namespaces. Reusing a store keeps a property-based test
    fast; renewing it every ``renew_every`` uses keeps a long run from searching a store
    that grows with every example.
    """

    def __init__(self, renew_every: int = 25) -> None:
        if renew_every < 1:
            raise ValueError(f"renew_every must be >= 1, got {renew_every}")
        self.renew_every = renew_every
        self._uses = 0
        self._store = self._fresh()

    @staticmethod
    def _fresh() -> ChromaMemoryStore:
        from .stores.chroma import ChromaMemoryStore  # chromadb only when a pool is made

        return ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())

    def next(self) -> ChromaMemoryStore:
        """The store for the next example (a new one every ``renew_every`` calls)."""
        self._uses += 1
        if self._uses % self.renew_every == 0:
            self._store = self._fresh()
        return self._store


class FakeEmbeddings(Embeddings):
    """Deterministic bag-of-words embeddings with controllable similarity.

    Each lowercase word is hashed to a fixed random unit direction; a text's vector is
    the normalised sum of its words' directions. Texts that share words are similar,
    texts that share none are near-orthogonal. ``calls`` records every embedded batch.
    """

    def __init__(self, dim: int = 64, *, model: str = "fake-bow") -> None:
        if dim < 2:
            raise ValueError(f"dim must be >= 2, got {dim}")
        self.dim = dim
        self.model = model
        self.calls: list[list[str]] = []

    def _direction(self, word: str) -> list[float]:
        seed = hashlib.sha256(word.encode("utf-8")).digest()
        values: list[float] = []
        counter = 0
        while len(values) < self.dim:
            block = hashlib.sha256(seed + counter.to_bytes(4, "big")).digest()
            values.extend((b - 127.5) / 127.5 for b in block)
            counter += 1
        return values[: self.dim]

    def _embed(self, text: str) -> list[float]:
        vector = [0.0] * self.dim
        for word in _WORD.findall(text.lower()) or ["<empty>"]:
            for i, v in enumerate(self._direction(word)):
                vector[i] += v
        norm = math.sqrt(sum(v * v for v in vector)) or 1.0
        return [v / norm for v in vector]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed documents."""
        self.calls.append(list(texts))
        return [self._embed(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        """Embed one query."""
        self.calls.append([text])
        return self._embed(text)


def _result(messages: list[BaseMessage], text: str) -> ChatResult:
    """Wrap a reply with whitespace-word token counts as usage metadata."""
    prompt_tokens = sum(len(str(m.content).split()) for m in messages)
    completion_tokens = len(text.split())
    usage = {
        "input_tokens": prompt_tokens,
        "output_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
    message = AIMessage(text, usage_metadata=usage)
    return ChatResult(generations=[ChatGeneration(message=message)])


class ScriptedChatModel(BaseChatModel):
    """A chat model that replies from a queue and records every call.

    Queue strings (the reply text) or exceptions (raised by that call). It has no native
    structured output, so memstrata's structured-output helper asks for JSON in the
    prompt and parses the reply, the same path a weak local model takes.
    """

    replies: list[str | BaseException] = Field(default_factory=list)
    calls: list[list[BaseMessage]] = Field(default_factory=list)

    def enqueue(self, *replies: str | BaseException) -> ScriptedChatModel:
        """Append replies to the queue; return self for chaining."""
        self.replies.extend(replies)
        return self

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.calls.append(list(messages))
        if not self.replies:
            raise AssertionError("ScriptedChatModel ran out of replies")
        reply = self.replies.pop(0)
        if isinstance(reply, BaseException):
            raise reply
        return _result(messages, reply)


Responder = str | BaseException | Callable[[list[BaseMessage]], str]


def requested_schema(messages: list[BaseMessage]) -> dict[str, Any] | None:
    """The JSON schema memstrata's structured helper put in the prompt, if any."""
    for message in reversed(messages):
        text = str(message.content)
        start = text.find("{")
        if "JSON schema" in text and start >= 0:
            try:
                schema = json.loads(text[start:])
            except json.JSONDecodeError:
                continue
            if isinstance(schema, dict):
                return schema
    return None


_LINE_FORMAT = re.compile(r"Example notes \((\w+)\):")
MINIMAL_LINE_REPLIES = {"ConstructionLines": "T|x\nS|x"}
"""The shortest valid reply of each line format memstrata asks for."""


def requested_line_format(messages: list[BaseMessage]) -> str | None:
    """The name of the line format a prompt asks for (``Example notes (<name>):``), if any."""
    for message in messages:
        match = _LINE_FORMAT.search(str(message.content))
        if match:
            return match.group(1)
    return None


def minimal_instance(schema: dict[str, Any], root: dict[str, Any] | None = None) -> Any:
    """A minimal value valid for a JSON schema: required fields only, shortest values."""
    root = root or schema
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return minimal_instance(root["$defs"][name], root)
    if "enum" in schema:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    if "anyOf" in schema:
        options = [o for o in schema["anyOf"] if o.get("type") != "null"] or schema["anyOf"]
        return minimal_instance(options[0], root)
    kind = schema.get("type")
    if kind == "object":
        props = schema.get("properties", {})
        return {k: minimal_instance(props[k], root) for k in schema.get("required", [])}
    if kind == "array":
        item = schema.get("items", {})
        return [minimal_instance(item, root) for _ in range(schema.get("minItems", 0))]
    if kind == "string":
        return "x" * max(1, schema.get("minLength", 1))
    if kind in ("integer", "number"):
        return schema.get("minimum", 0)
    if kind == "boolean":
        return False
    return None


class SchemaChatModel(BaseChatModel):
    """Replies according to the schema each call asks for.

    ``scripts`` maps a schema title (e.g. ``"ConflictReport"``) or a line format's name
    (``"ConstructionLines"``, the Constructor's one-line-per-item replies) to queued
    replies: strings, exceptions to raise, or functions of the messages. A schema with
    nothing queued gets a minimal valid object (required fields only), a line format its
    shortest valid reply. ``calls`` records (schema title,
    messages) for every call, so tests and cost benchmarks can count and inspect them.
    """

    scripts: dict[str, list[Responder]] = Field(default_factory=dict)
    calls: list[tuple[str, list[BaseMessage]]] = Field(default_factory=list)
    completions: list[str] = Field(default_factory=list)

    def script(self, title: str, *replies: Responder) -> SchemaChatModel:
        """Queue replies for one schema; return self for chaining."""
        self.scripts.setdefault(title, []).extend(replies)
        return self

    def count(self, title: str) -> int:
        """How many calls asked for ``title``."""
        return sum(1 for t, _ in self.calls if t == title)

    @property
    def _llm_type(self) -> str:
        return "schema-scripted"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        schema = requested_schema(messages) or {}
        line_format = None if schema else requested_line_format(messages)
        title = line_format or str(schema.get("title", ""))
        self.calls.append((title, list(messages)))
        queue = self.scripts.get(title) or []
        default = (
            MINIMAL_LINE_REPLIES.get(line_format, "")
            if line_format
            else json.dumps(minimal_instance(schema))
        )
        reply: Responder = queue.pop(0) if queue else default
        if isinstance(reply, BaseException):
            raise reply
        text = reply(messages) if callable(reply) else reply
        self.completions.append(text)
        return _result(messages, text)


AgentReply = AIMessage | str | BaseException | Callable[[list[BaseMessage]], AIMessage | str]


def tool_call(name: str, args: dict[str, Any] | None = None, *, text: str = "") -> AIMessage:
    """An AI message that calls one tool, for :class:`ToolCallingChatModel` scripts."""
    call_id = f"call_{uuid.uuid4().hex[:12]}"
    return AIMessage(text, tool_calls=[{"name": name, "args": args or {}, "id": call_id}])


class ToolCallingChatModel(BaseChatModel):
    """A chat model for agent tests: scripted replies, tool calls included.

    Queue AI messages (e.g. from :func:`tool_call`), plain reply strings, exceptions to
    raise, or functions of the prompt messages. ``bind_tools`` records the tool names and
    returns the model itself, so ``create_agent`` accepts it. ``calls`` records every
    prompt, so a test can inspect what the agent sent to the model.
    """

    replies: list[AgentReply] = Field(default_factory=list)
    calls: list[list[BaseMessage]] = Field(default_factory=list)
    bound_tools: list[str] = Field(default_factory=list)

    def enqueue(self, *replies: AgentReply) -> ToolCallingChatModel:
        """Append replies to the queue; return self for chaining."""
        self.replies.extend(replies)
        return self

    @property
    def _llm_type(self) -> str:
        return "tool-calling-scripted"

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Record the bound tool names; the scripted replies decide which are called."""
        self.bound_tools = [
            t.name if isinstance(t, BaseTool) else str(getattr(t, "__name__", t)) for t in tools
        ]
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.calls.append(list(messages))
        if not self.replies:
            raise AssertionError("ToolCallingChatModel ran out of replies")
        reply = self.replies.pop(0)
        if isinstance(reply, BaseException):
            raise reply
        if callable(reply):
            reply = reply(list(messages))
        message = reply.model_copy() if isinstance(reply, AIMessage) else AIMessage(reply)
        return ChatResult(generations=[ChatGeneration(message=message)])
