"""The one fake chat model of lamina's tests, and the scripted models built on it.

:class:`FakeChatModel` holds the only ``_generate``: it asks :meth:`~FakeChatModel.next_reply`
for the call's reply (by default the next one in its queue, after recording the prompt),
raises it if it is an exception, calls it if it is a function of the prompt, and returns
text as an ``AIMessage`` with whitespace-word token counts as usage. The scripted models
below, the fault-injecting model in :mod:`lamina.testing.faults` and the raw-only
ingest's stand-in only choose the reply, so they cannot drift apart in how they answer.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Sequence
from typing import Any, Self

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from pydantic import Field

from .schemas import MINIMAL_LINE_REPLIES, minimal_instance, requested_line_format, requested_schema

Reply = AIMessage | str | BaseException | Callable[[list[BaseMessage]], AIMessage | str]
"""A queued reply: a message, its text, an exception to raise, or a function of the prompt."""
Responder = str | BaseException | Callable[[list[BaseMessage]], str]
"""A reply :class:`SchemaChatModel` gives for one schema."""
AgentReply = Reply
"""A reply :class:`ToolCallingChatModel` gives (e.g. a :func:`tool_call` message)."""


def text_message(prompt: Sequence[BaseMessage], text: str) -> AIMessage:
    """``text`` as an AI message, with whitespace-word token counts as usage metadata."""
    prompt_tokens = sum(len(str(m.content).split()) for m in prompt)
    completion_tokens = len(text.split())
    usage = {
        "input_tokens": prompt_tokens,
        "output_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
    return AIMessage(text, usage_metadata=usage)


class FakeChatModel(BaseChatModel):
    """A chat model that replies from a queue and records every call.

    Subclasses override :meth:`next_reply` to choose a reply another way; everything
    else (exceptions, functions of the prompt, usage metadata) happens here once.
    """

    replies: list[Reply] = Field(default_factory=list)
    """The reply queue, oldest first."""
    calls: list[Any] = Field(default_factory=list)
    """One record per call: by default the prompt's messages."""
    when_empty: str = ""
    """The message of the AssertionError a call raises when the queue is empty (default:
    ``"<class> ran out of replies"``)."""

    def enqueue(self, *replies: Reply) -> Self:
        """Append replies to the queue; return self for chaining."""
        self.replies.extend(replies)
        return self

    def next_reply(self, prompt: list[BaseMessage], **kwargs: Any) -> Reply:
        """Record the call and take the next queued reply.

        Args:
            prompt: The call's messages.
            **kwargs: What the caller passed to the model (``stop`` and call options).

        Raises:
            AssertionError: the queue is empty.
        """
        self.calls.append(prompt)
        if not self.replies:
            raise AssertionError(self.when_empty or f"{type(self).__name__} ran out of replies")
        return self.replies.pop(0)

    @property
    def _llm_type(self) -> str:
        return "fake"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        prompt = list(messages)
        reply = self.next_reply(prompt, stop=stop, **kwargs)
        if isinstance(reply, BaseException):
            raise reply
        if callable(reply):
            reply = reply(prompt)
        message = (
            reply.model_copy() if isinstance(reply, AIMessage) else text_message(prompt, reply)
        )
        return ChatResult(generations=[ChatGeneration(message=message)])


class ScriptedChatModel(FakeChatModel):
    """Replies from a queue: strings (the reply text) or exceptions (raised by that call).

    It has no native structured output, so lamina's structured-output helper asks for
    JSON in the prompt and parses the reply, the same path a weak local model takes.
    """

    @property
    def _llm_type(self) -> str:
        return "scripted"


class SchemaChatModel(FakeChatModel):
    """Replies according to the schema each call asks for.

    ``scripts`` maps a schema title (e.g. ``"ConflictReport"``) or a line format's name
    (``"ConstructionLines"``, the Constructor's one-line-per-item replies) to queued
    replies: strings, exceptions to raise, or functions of the messages. A schema with
    nothing queued gets a minimal valid object (required fields only), a line format its
    shortest valid reply. ``calls`` records (schema title, messages) for every call, so
    tests and cost benchmarks can count and inspect them.
    """

    scripts: dict[str, list[Responder]] = Field(default_factory=dict)
    completions: list[str] = Field(default_factory=list)
    """The text of every reply given."""

    def script(self, title: str, *replies: Responder) -> Self:
        """Queue replies for one schema; return self for chaining."""
        self.scripts.setdefault(title, []).extend(replies)
        return self

    def count(self, title: str) -> int:
        """How many calls asked for ``title``."""
        return sum(1 for t, _ in self.calls if t == title)

    def next_reply(self, prompt: list[BaseMessage], **kwargs: Any) -> Reply:
        """The next reply queued for the prompt's schema, else a minimal valid one."""
        schema = requested_schema(prompt) or {}
        line_format = None if schema else requested_line_format(prompt)
        title = line_format or str(schema.get("title", ""))
        self.calls.append((title, prompt))
        queue = self.scripts.get(title)
        if queue:
            reply = queue.pop(0)
        elif line_format:
            reply = MINIMAL_LINE_REPLIES.get(line_format, "")
        else:
            reply = json.dumps(minimal_instance(schema))
        if isinstance(reply, BaseException):
            return reply
        text = reply(prompt) if callable(reply) else reply
        self.completions.append(text)
        return text

    @property
    def _llm_type(self) -> str:
        return "schema-scripted"


def tool_call(name: str, args: dict[str, Any] | None = None, *, text: str = "") -> AIMessage:
    """An AI message that calls one tool, for :class:`ToolCallingChatModel` scripts."""
    call_id = f"call_{uuid.uuid4().hex[:12]}"
    return AIMessage(text, tool_calls=[{"name": name, "args": args or {}, "id": call_id}])


class ToolCallingChatModel(FakeChatModel):
    """A chat model for agent tests: scripted replies, tool calls included.

    Queue AI messages (e.g. from :func:`tool_call`), plain reply strings, exceptions to
    raise, or functions of the prompt messages. ``bind_tools`` records the tool names and
    returns the model bound with them, so ``create_agent`` accepts it. ``calls`` records every
    prompt, so a test can inspect what the agent sent to the model.
    """

    bound_tools: list[str] = Field(default_factory=list)

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Record the bound tool names; the scripted replies decide which are called.

        The tools are bound as call options (as a real chat model binds them), so callback
        handlers see them in the call's ``invocation_params``.
        """
        self.bound_tools = [
            t.name if isinstance(t, BaseTool) else str(getattr(t, "__name__", t)) for t in tools
        ]
        offered = [{"type": "function", "function": {"name": n}} for n in self.bound_tools]
        return self.bind(tools=offered)

    @property
    def _llm_type(self) -> str:
        return "tool-calling-scripted"


__all__ = [
    "AgentReply",
    "FakeChatModel",
    "Reply",
    "Responder",
    "SchemaChatModel",
    "ScriptedChatModel",
    "ToolCallingChatModel",
    "text_message",
    "tool_call",
]


class FakeLocalServer:
    """Stands in for the local llama.cpp server a ``local_server_factory`` builds.

    Counts starts and stops, keeps the configuration it was built for and the options of
    the last ``chat_model`` call, and hands out ``model`` (a :class:`SchemaChatModel` by
    default), so no model is ever loaded.
    """

    def __init__(self, model: BaseChatModel | None = None, config: Any = None) -> None:
        self.model = model if model is not None else SchemaChatModel()
        self.config = config
        self.starts = 0
        self.stops = 0
        self.options: dict[str, Any] = {}

    def start(self) -> Self:
        self.starts += 1
        return self

    def stop(self) -> None:
        self.stops += 1

    def chat_model(self, **kwargs: Any) -> BaseChatModel:
        self.options = kwargs
        return self.model
