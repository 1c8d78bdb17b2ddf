"""An agent middleware for ``langchain.agents.create_agent`` that gives the agent memory.

Before the first model call of a user turn it recalls memories for the latest user message
and appends them to the system message as a delimited ``<memories>`` block (data, never
instructions). After the agent finishes it stores the user message and the final reply.
Memory failures are logged and listed in the ``memory_errors`` state key; they never stop
the agent.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Annotated, Any, Literal, NotRequired, TypedDict, cast

from langchain.agents.middleware import (
    AgentMiddleware,
    AgentState,
    ModelRequest,
    ModelResponse,
)
from langchain.agents.middleware.types import OmitFromInput, PrivateStateAttr
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, SystemMessage
from langgraph.runtime import Runtime

from ..errors import InvalidInputError, InvalidTypeError
from ..memory.background import Consolidate, require_consolidate
from .formatting import memory_block
from .namespace import (
    DEFAULT_NAMESPACE_KEY,
    NamespaceSource,
    check_source,
    context_value,
    resolve_namespace,
)

if TYPE_CHECKING:
    from langchain.agents.middleware.types import ModelCallResult

    from ..core.state import Failure
    from ..memory import Memory
    from ..memory.results import AnswerResult, MemoryHit

logger = logging.getLogger(__name__)

RecallMode = Literal["search", "answer"]
_MODES: tuple[RecallMode, ...] = ("search", "answer")
_WINDOW = 4


class Recall(TypedDict):
    """What was recalled for one user message (``key`` identifies the message)."""

    key: str
    block: str | None


class MemoryState(AgentState[Any]):
    """Agent state with the middleware's recall and the memory errors of the last turn."""

    memory_recall: NotRequired[Annotated[Recall | None, PrivateStateAttr]]
    memory_errors: NotRequired[Annotated[list[str], OmitFromInput]]


def _latest_human(messages: Sequence[AnyMessage]) -> tuple[int, HumanMessage] | None:
    """The index and the message of the last user message."""
    for index in range(len(messages) - 1, -1, -1):
        if isinstance(message := messages[index], HumanMessage):
            return index, message
    return None


def _final_reply(messages: Sequence[AnyMessage], after: int) -> AIMessage | None:
    """The last AI message after index ``after`` that has text and calls no tool."""
    for message in reversed(messages[after + 1 :]):
        if isinstance(message, AIMessage) and not message.tool_calls and message.text.strip():
            return message
    return None


def _with_block(system: SystemMessage | None, block: str) -> SystemMessage:
    if system is None:
        return SystemMessage(content=block)
    if isinstance(system.content, str):
        content: str | list[str | dict[Any, Any]] = f"{system.content}\n\n{block}".lstrip()
    else:
        content = [*system.content, {"type": "text", "text": block}]
    return system.model_copy(update={"content": content})


def _notes(failures: Sequence[Failure]) -> list[str]:
    return [f"{f.node}/{f.step}: {f.error}" for f in failures]


def _describe(error: Exception) -> str:
    return f"{type(error).__name__}: {error}"


class MemoryMiddleware(AgentMiddleware[MemoryState, Any, Any]):
    """Recall before the model call, remember the exchange after the agent turn.

    Example:
        ```python
        agent = create_agent(
            model,
            tools=memory_tools(memory),
            middleware=[MemoryMiddleware(memory)],
            context_schema=UserContext,  # has a user_id field
        )
        agent.invoke({"messages": [...]}, context=UserContext(user_id="user:alice"))
        ```
    """

    state_schema = MemoryState

    def __init__(
        self,
        memory: Memory,
        *,
        namespace_from: NamespaceSource = DEFAULT_NAMESPACE_KEY,
        k: int = 5,
        mode: RecallMode = "search",
        session_from: NamespaceSource | None = None,
        recall: bool = True,
        remember: bool = True,
        consolidate: Consolidate = "background",
    ) -> None:
        """Configure the middleware.

        Args:
            memory: The memory to recall from and write to.
            namespace_from: Where the namespace is found in the agent's runtime context: a
                field name (default ``"user_id"``) or a function ``context -> namespace``.
            k: How many memories are injected before the model call.
            mode: ``"search"`` (retrieval only, no LLM call) or ``"answer"`` (the full
                recall graph; its answer is added to the block as a draft).
            session_from: Where the session id is found in the context (field name or
                function). Default: the run's ``thread_id``, else the facade's per-day session.
            recall: Inject memories before the model call.
            remember: Store the user message and the final reply after the turn.
            consolidate: ``"background"`` (default) stores the exchange and leaves its
                construction to the memory's worker, so the reply never waits for the
                model's consolidation calls; ``"inline"`` builds it before the agent
                returns.

        Raises:
            InvalidInputError: for an unknown ``mode`` or a ``k`` below 1.
            InvalidTypeError: if ``k`` is not an int, or ``namespace_from`` or
                ``session_from`` has the wrong type.
        """
        super().__init__()
        if mode not in _MODES:
            raise InvalidInputError(f"mode must be one of {_MODES}, got {mode!r}")
        if isinstance(k, bool) or not isinstance(k, int):
            raise InvalidTypeError(f"k must be an int, got {type(k).__name__}")
        if k < 1:
            raise InvalidInputError(f"k must be a positive number of memories, got {k}")
        self.memory = memory
        self.namespace_from = check_source(namespace_from)
        self.session_from = (
            None if session_from is None else check_source(session_from, argument="session_from")
        )
        self.k = k
        self.mode: RecallMode = mode
        self.recall = recall
        self.remember = remember
        self.consolidate = require_consolidate(consolidate)

    # -- helpers -------------------------------------------------------------------------

    def _pending_recall(self, state: MemoryState) -> tuple[str, str, list[str]] | None:
        """(message key, query, window) when the latest user message was not recalled yet."""
        if not self.recall:
            return None
        messages = state["messages"]
        if (turn := _latest_human(messages)) is None:
            return None
        index, human = turn
        key = human.id or hashlib.sha256(human.text.encode("utf-8")).hexdigest()[:32]
        done = state.get("memory_recall")
        query = human.text.strip()
        if (done is not None and done["key"] == key) or not query:
            return None
        earlier = messages[max(0, index - _WINDOW) : index]
        window = [
            f"{'user' if isinstance(m, HumanMessage) else 'assistant'}: {m.text}"
            for m in earlier
            if isinstance(m, HumanMessage | AIMessage) and m.text.strip()
        ]
        return key, query, window

    def _recalled(self, key: str, found: list[MemoryHit] | AnswerResult) -> dict[str, Any]:
        """The state update after a recall; answer-mode LLM failures become memory errors."""
        if isinstance(found, list):
            hits, answer, errors = found, None, []
        else:
            hits, answer, errors = found.best_memories(self.k), found, _notes(found.failures)
        drafted = answer is not None and not answer.refused and bool(answer.answer.strip())
        block = memory_block(hits[: self.k], answer) if hits or drafted else None
        return {"memory_recall": {"key": key, "block": block}, "memory_errors": errors}

    def _recall_failed(self, key: str, error: Exception) -> dict[str, Any]:
        logger.warning("lamina recall failed; the model runs without memories", exc_info=error)
        return {"memory_recall": {"key": key, "block": None}, "memory_errors": [_describe(error)]}

    def _add_options(self, runtime: Runtime[Any]) -> dict[str, Any]:
        """The namespace, session and consolidation of the exchange's ``add``."""
        namespace = resolve_namespace(runtime.context, self.namespace_from)
        session: object = None
        if isinstance(self.session_from, str):
            session = context_value(runtime.context, self.session_from)
        elif self.session_from is not None:
            session = self.session_from(runtime.context)
        elif (info := runtime.execution_info) is not None:
            session = info.thread_id
        return {
            "namespace": namespace,
            "session_id": str(session) if session else None,
            "consolidate": self.consolidate,
        }

    def _exchange(self, state: MemoryState) -> list[AnyMessage] | None:
        if not self.remember:
            return None
        messages = state["messages"]
        if (turn := _latest_human(messages)) is None or not turn[1].text.strip():
            return None
        index, human = turn
        exchange: list[AnyMessage] = [HumanMessage(content=human.text, name=human.name)]
        reply = _final_reply(messages, index)
        if reply is not None:
            exchange.append(AIMessage(content=reply.text, name=reply.name))
        return exchange

    def _remember_failed(self, state: MemoryState, error: Exception) -> dict[str, Any]:
        logger.warning("lamina could not store the exchange", exc_info=error)
        return {"memory_errors": [*state.get("memory_errors", []), _describe(error)]}

    @staticmethod
    def _degraded(state: MemoryState, failures: Sequence[Failure]) -> dict[str, Any] | None:
        """List consolidation steps that failed (the raw turns were stored regardless)."""
        if not failures:
            return None
        return {"memory_errors": [*state.get("memory_errors", []), *_notes(failures)]}

    # -- hooks ---------------------------------------------------------------------------

    def before_model(self, state: MemoryState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Recall memories for a user message not recalled yet."""
        if (pending := self._pending_recall(state)) is None:
            return None
        key, query, window = pending
        found: list[MemoryHit] | AnswerResult
        try:
            namespace = resolve_namespace(runtime.context, self.namespace_from)
            if self.mode == "answer":
                found = self.memory.answer(query, namespace=namespace, window=window)
            else:
                found = self.memory.search(query, namespace=namespace, k=self.k)
        except Exception as e:
            return self._recall_failed(key, e)
        return self._recalled(key, found)

    async def abefore_model(
        self, state: MemoryState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        """Async twin of :meth:`before_model`."""
        if (pending := self._pending_recall(state)) is None:
            return None
        key, query, window = pending
        found: list[MemoryHit] | AnswerResult
        try:
            namespace = resolve_namespace(runtime.context, self.namespace_from)
            if self.mode == "answer":
                found = await self.memory.aanswer(query, namespace=namespace, window=window)
            else:
                found = await self.memory.asearch(query, namespace=namespace, k=self.k)
        except Exception as e:
            return self._recall_failed(key, e)
        return self._recalled(key, found)

    def _inject(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        state = cast(MemoryState, request.state)
        recall = state.get("memory_recall")
        block = recall["block"] if recall else None
        if not block:
            return request
        return request.override(system_message=_with_block(request.system_message, block))

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelCallResult[Any]:
        """Append the recalled ``<memories>`` block to the system message."""
        return handler(self._inject(request))

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelCallResult[Any]:
        """Async twin of :meth:`wrap_model_call`."""
        return await handler(self._inject(request))

    def after_agent(self, state: MemoryState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Store the latest user message and the final reply in one session."""
        if (exchange := self._exchange(state)) is None:
            return None
        try:
            result = self.memory.add(exchange, **self._add_options(runtime))
        except Exception as e:
            return self._remember_failed(state, e)
        return self._degraded(state, result.failures)

    async def aafter_agent(
        self, state: MemoryState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        """Async twin of :meth:`after_agent`."""
        if (exchange := self._exchange(state)) is None:
            return None
        try:
            result = await self.memory.aadd(exchange, **self._add_options(runtime))
        except Exception as e:
            return self._remember_failed(state, e)
        return self._degraded(state, result.failures)
