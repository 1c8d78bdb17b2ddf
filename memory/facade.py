"""``Memory``: the library facade over the store and the memory graph.

Typical use::

    from lamina import Memory

    with Memory() as memory:  # offline: persistent Chroma, MiniLM, local Qwen
        memory.add("I adopted a greyhound called Biscuit", namespace="user:alice")
        memory.search("dog", namespace="user:alice")  # retrieval only, no LLM
        memory.answer("What is my dog called?", namespace="user:alice")
"""

from __future__ import annotations

import asyncio
import threading
import uuid
import weakref
from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from datetime import datetime, timedelta
from typing import Any, Unpack

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph.state import CompiledStateGraph

from ..agents.common.journal import SqliteReplyJournal
from ..config import MemoryConfig
from ..core.context import MemoryContext
from ..errors import InvalidInputError, InvalidTypeError
from ..graphs.memory import build_memory_graph
from ..records.model import MetadataValue
from ..stores.base import MemoryStore
from ..stores.chroma import ChromaMemoryStore
from .background import BackgroundMethods, Consolidate, require_consolidate
from .checkpointing import add_thread, choose_add_thread, configured_checkpointer, supports_async
from .editing import EditMethods
from .expiry import ExpiryMethods, default_expiry
from .filters import require_metadata
from .given import GivenFactsMethods
from .inputs import (
    AddInput,
    AddOptions,
    call_context,
    require_add_options,
    require_aware,
    require_bool,
    require_expiry,
    require_lines,
    require_namespace,
    require_query,
    to_turns,
)
from .lifecycle import CLOSED, LifecycleMethods, refuse_once_closed
from .models import ChatModelProvider, LocalServerFactory
from .opening import open_store
from .outcome import added, answered
from .portable import PortableMethods
from .reading import ReadMethods
from .results import AddResult, AnswerResult
from .spans import trace_calls
from .verbatim import store_verbatim
from .worker import pending_count


@trace_calls  # each call is an OpenTelemetry span when tracing is set up
@refuse_once_closed
class Memory(
    ReadMethods,
    EditMethods,
    PortableMethods,
    GivenFactsMethods,
    BackgroundMethods,
    ExpiryMethods,
    LifecycleMethods,
):
    """Long-term memory for one application: add, search, answer, forget, inspect.

    Args:
        config: Settings; default :class:`MemoryConfig()` (offline defaults).
        store: A store to use instead of the one ``config`` describes.
        chat_model: A chat model to use instead of the endpoint or the local model.
        embeddings: Embeddings for the store ``config`` describes (not with ``store``).
        checkpointer: Compiles the memory graph with this checkpointer; each call is its
            own thread.
        local_server_factory: Builds the local model server (tests pass a fake).

    Every method takes the ``namespace`` it reads or writes; nothing crosses namespaces.
    """

    def __init__(
        self,
        *,
        config: MemoryConfig | None = None,
        store: ChromaMemoryStore | None = None,
        chat_model: BaseChatModel | None = None,
        embeddings: Embeddings | None = None,
        checkpointer: BaseCheckpointSaver[Any] | None = None,
        local_server_factory: LocalServerFactory | None = None,
    ) -> None:
        if config is not None and not isinstance(config, MemoryConfig):
            raise InvalidTypeError(f"config must be a MemoryConfig, got {type(config).__name__}")
        if store is not None and embeddings is not None:
            raise InvalidInputError(
                "pass embeddings= to the store you built, not to Memory, when passing store="
            )
        if store is not None and not isinstance(store, MemoryStore):
            raise InvalidTypeError(
                "store must be a lamina MemoryStore such as ChromaMemoryStore.ephemeral() or "
                f"PostgresMemoryStore.connect(dsn), got {type(store).__name__}"
            )
        if checkpointer is not None and not isinstance(checkpointer, BaseCheckpointSaver):
            raise InvalidTypeError(
                "checkpointer must be a LangGraph BaseCheckpointSaver (e.g. InMemorySaver()), "
                f"got {type(checkpointer).__name__}"
            )
        if chat_model is not None and not isinstance(chat_model, BaseChatModel):
            raise InvalidTypeError(
                f"chat_model must be a langchain BaseChatModel, got {type(chat_model).__name__}"
            )
        self.config = config or MemoryConfig()
        self._own_persistent_store = store is None and self.config.store_kind == "persistent"
        self._own_postgres_store = store is None and self.config.store_kind == "postgres"
        self._own_store = store is None
        self.store = store if store is not None else open_store(self.config, embeddings)
        self.checkpointer = checkpointer
        self._models = ChatModelProvider(
            self.config, chat_model=chat_model, local_server_factory=local_server_factory
        )
        self._graph: CompiledStateGraph[Any, Any, Any, Any] | None = None
        self._lock = threading.Lock()
        self._closed = False
        self._resources = ExitStack()  # a checkpointer opened from the config
        self._resources.callback(self._models.close)
        if self._own_postgres_store:  # its connection pool closes with the Memory
            closing: Any = self.store
            self._resources.callback(closing.close)
        self._finalizer = weakref.finalize(self, self._resources.close)
        self._async_ok: bool | None = None
        self._start_sweeper()

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> Memory:
        """A Memory configured from ``LAMINA_*`` / ``OPENAI_*`` variables and a TOML file.

        ``overrides`` that are :class:`Memory` arguments (store, chat_model, embeddings,
        checkpointer, local_server_factory) go to the constructor; the rest are
        :class:`MemoryConfig` fields and beat the environment.
        """
        own = ("store", "chat_model", "embeddings", "checkpointer", "local_server_factory")
        kwargs = {k: overrides.pop(k) for k in own if k in overrides}
        config_file = overrides.pop("config_file", None)
        config = MemoryConfig.from_env(env, config_file=config_file, **overrides)
        return cls(config=config, **kwargs)

    # ----------------------------------------------------------------- wiring
    @property
    def chat_model_source(self) -> str:
        """``explicit``, ``endpoint`` or ``local``."""
        return self._models.source

    @property
    def local_server(self) -> Any:
        """The local model server this Memory started, or None."""
        return self._models.server

    def _compiled(self) -> CompiledStateGraph[Any, Any, Any, Any]:
        """The compiled memory graph, built on first use (this starts a local model)."""
        if self._closed:
            raise InvalidInputError(CLOSED)
        with self._lock:
            if self._graph is None:
                if self.checkpointer is None:
                    self.checkpointer = configured_checkpointer(
                        self.config, self._resources, own_store=self._own_store
                    )
                journal = None
                if self._own_persistent_store:
                    journal = SqliteReplyJournal(self.config.resolved_journal_path)
                    self._resources.callback(journal.close)
                graph = build_memory_graph(
                    chat_model=self._models.get(),
                    store=self.store,
                    journal=journal,
                )
                self._graph = graph.compile(checkpointer=self.checkpointer)
            return self._graph

    def _run_config(
        self, state: dict[str, Any], ctx: MemoryContext, kind: str
    ) -> RunnableConfig | None:
        """The checkpoint thread of one call, or None without a checkpointer.

        Each call gets a fresh thread, so runs never mix their state; an ``add`` gets the
        thread its input hashes to (see add_thread), so an interrupted one resumes.
        """
        if self.checkpointer is None:
            return None
        if kind == "add":
            return add_thread(ctx, state)
        return {"configurable": {"thread_id": f"{ctx.namespace}/{kind}/{uuid.uuid4().hex}"}}

    def _invoke(self, state: dict[str, Any], ctx: MemoryContext, kind: str) -> Any:
        """Run one call. An interrupted ``add`` resumes when called again (see add_thread)."""
        graph = self._compiled()
        config = self._run_config(state, ctx, kind)
        if config is None or kind != "add":
            return graph.invoke(state, config=config, context=ctx)
        config, resume = choose_add_thread(config, graph.get_state(config))
        return graph.invoke(None if resume else state, config=config, context=ctx)

    async def _ainvoke(self, state: dict[str, Any], ctx: MemoryContext, kind: str) -> Any:
        """Run the graph natively async, or in a thread when the checkpointer is sync-only."""
        graph = await asyncio.to_thread(self._compiled)
        if self._async_ok is None:
            self._async_ok = await supports_async(self.checkpointer)
        if not self._async_ok:
            return await asyncio.to_thread(self._invoke, state, ctx, kind)
        config = self._run_config(state, ctx, kind)
        if config is None or kind != "add":
            return await graph.ainvoke(state, config=config, context=ctx)
        config, resume = choose_add_thread(config, await graph.aget_state(config))
        return await graph.ainvoke(None if resume else state, config=config, context=ctx)

    # -------------------------------------------------------------------- add
    def _add_request(
        self, messages: AddInput, namespace: str, options: AddOptions
    ) -> tuple[dict[str, Any], MemoryContext]:
        require_namespace(namespace)
        require_add_options(options)
        require_consolidate(options.get("consolidate", "inline"))  # infer=False ignores it
        session_closed = require_bool("session_closed", options.get("session_closed", False))
        require_bool("infer", options.get("infer", True))
        extra = require_metadata(options.get("metadata"))
        expires = require_expiry(options.get("expires_at"), options.get("ttl"))
        turns = to_turns(
            messages,
            namespace=namespace,
            session_id=options.get("session_id"),
            at=options.get("at"),
            speaker=options.get("speaker"),
        )
        if expires is None:  # the namespace's default, if one was set (read once input is valid)
            expires = default_expiry(self.store, namespace)
        for n, turn in enumerate(turns):
            merged = {**extra, **turn.metadata}
            update = {"metadata": require_metadata(merged), "expires_at": expires}
            turns[n] = turn.model_copy(update=update)
        state = {"turns": turns, "session_closed": session_closed}
        return state, self.config.memory_context(
            namespace, small_model=self._models.small_model, **call_context(options)
        )

    def add(
        self,
        messages: AddInput,
        *,
        namespace: str,
        session_id: str | None = None,
        at: datetime | None = None,
        speaker: str | None = None,
        session_closed: bool = False,
        metadata: Mapping[str, MetadataValue] | None = None,
        infer: bool = True,
        instructions: str | None = None,
        consolidate: Consolidate = "inline",
        expires_at: datetime | None = None,
        ttl: timedelta | float | None = None,
    ) -> AddResult:
        """Remember a turn or a conversation; consolidation runs per the trigger policy.

        The raw turns are stored before any LLM call. When consolidation fails (a
        malformed reply, or a model that cannot be reached) the turns stay stored, the
        failure is logged at WARNING and listed in ``AddResult.failures``, and
        ``AddResult.model_error`` says how to reach a model.

        Args:
            messages: A str, a LangChain message, a dict with role/content (or
                TurnInput fields), a TurnInput, or a list of these.
            namespace: The scope written to, e.g. ``"user:alice"``.
            session_id: The session of turns that name none (default: one per day).
            at: When the turns happened (aware; default now).
            speaker: The speaker of plain strings (default ``"user"``).
            session_closed: The conversation ended; the session policy consolidates.
            metadata: JSON scalars (str, int, float, bool) kept on every raw turn of the
                call (a turn's own metadata wins) and usable in ``filters``.
            infer: False stores the turns verbatim, with no LLM call now or later: they
                stay raw turns, never consolidated into facts or episodes.
            instructions: What construction keeps or leaves out, for this call (default:
                ``MemoryConfig.instructions``; see ``MemoryContext.instructions``).
            consolidate: ``"inline"`` builds facts and episodes in this call;
                ``"background"`` returns once the raw turns are stored, marked pending in
                the store, and this Memory's worker builds them later (``flush`` waits
                for it; ``AddResult.pending_raw_ids`` lists them).
            expires_at: When these memories expire (aware, in the future): the turns, and
                what is built only from them, leave every read then and are forgotten by
                the sweeper (``sweep_expired``). Default: the namespace's default TTL
                (``set_default_ttl``), else never.
            ttl: ``expires_at`` as a time from now (a timedelta, or seconds).

        Raises:
            InvalidTypeError: ``messages`` (or an argument) has a type add() does not
                take; the message names the type received and the types accepted.
            InvalidInputError: An ``expires_at`` or ``ttl`` not in the future, an empty text
                or list, a naive ``at``, a bad field or a bad metadata value.
            NamespaceError: A missing or malformed namespace.
        """
        options = AddOptions(
            session_id=session_id,
            at=at,
            speaker=speaker,
            session_closed=session_closed,
            metadata=metadata,
            infer=infer,
            instructions=instructions,
            consolidate=consolidate,
            expires_at=expires_at,
            ttl=ttl,
        )
        state, ctx = self._add_request(messages, namespace, options)
        if not infer:
            return store_verbatim(self.store, ctx, state["turns"])
        if require_consolidate(consolidate) == "background":
            return self._add_background(state, ctx, instructions)
        return added(self._invoke(state, ctx, "add"), namespace, self._models.get)

    async def aadd(
        self, messages: AddInput, *, namespace: str, **options: Unpack[AddOptions]
    ) -> AddResult:
        """Async :meth:`add`, with the same arguments."""
        state, ctx = self._add_request(messages, namespace, options)
        if not options.get("infer", True):
            return await asyncio.to_thread(store_verbatim, self.store, ctx, state["turns"])
        if require_consolidate(options.get("consolidate", "inline")) == "background":
            instructions = options.get("instructions")
            return await asyncio.to_thread(self._add_background, state, ctx, instructions)
        return added(await self._ainvoke(state, ctx, "add"), namespace, self._models.get)

    # ----------------------------------------------------------------- answer
    def _answer_request(
        self, question: str, namespace: str, window: Sequence[str], as_of: datetime | None
    ) -> tuple[dict[str, Any], MemoryContext]:
        require_query("question", question)
        require_namespace(namespace)
        lines = require_lines("window", window)
        require_aware("as_of", as_of)
        state = {"question": question, "mode": "answer", "window": lines, "as_of": as_of}
        return state, self.config.memory_context(namespace, small_model=self._models.small_model)

    def answer(
        self,
        question: str,
        *,
        namespace: str,
        window: Sequence[str] = (),
        as_of: datetime | None = None,
    ) -> AnswerResult:
        """Answer from memory with citations (the full recall graph), or refuse.

        ``AnswerResult.explain()`` shows the evidence, the Judge's verdicts and the
        rounds behind the answer or the refusal.

        Raises:
            ModelUnreachableError: No LLM call reached the chat model (connection
                refused, timeout, HTTP 401/403/404/5xx); the message names the endpoint
                and the model and says how to start one.
        """
        state, ctx = self._answer_request(question, namespace, window, as_of)
        output = self._invoke(state, ctx, "answer")
        result = answered(output, question, namespace, self._models.get)
        result.pending_turns = pending_count(self.store, namespace)
        return result

    async def aanswer(
        self,
        question: str,
        *,
        namespace: str,
        window: Sequence[str] = (),
        as_of: datetime | None = None,
    ) -> AnswerResult:
        """Async :meth:`answer`."""
        state, ctx = self._answer_request(question, namespace, window, as_of)
        output = await self._ainvoke(state, ctx, "answer")
        result = answered(output, question, namespace, self._models.get)
        result.pending_turns = await asyncio.to_thread(pending_count, self.store, namespace)
        return result

    def __repr__(self) -> str:
        return f"Memory(chat_model={self.chat_model_source}, store={self.config.store_kind})"
