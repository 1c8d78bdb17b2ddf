"""``Memory``: the library facade over the store and the memory graph.

Typical use::

    from memstrata import Memory

    with Memory() as memory:  # offline: persistent Chroma, MiniLM, local Qwen
        memory.add("I adopted a greyhound called Biscuit", namespace="user:alice")
        memory.search("dog", namespace="user:alice")  # retrieval only, no LLM
        memory.answer("What is my dog called?", namespace="user:alice")
"""

from __future__ import annotations

import asyncio
import logging
import threading
import uuid
import weakref
from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from datetime import datetime
from types import TracebackType
from typing import Any

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph.state import CompiledStateGraph

from .agents.journal import SqliteReplyJournal
from .agents.structured import LLMCall
from .config import MemoryConfig
from .errors import InvalidInputError, InvalidTypeError, ModelUnreachableError, RecordNotFoundError
from .graphs.context import MemoryContext
from .graphs.memory import build_memory_graph
from .llm.reachability import unreachable_error
from .memory_inputs import (
    AddInput,
    optional_text,
    require_aware,
    require_bool,
    require_ids,
    require_lines,
    require_namespace,
    require_positive_int,
    require_text,
    require_window,
    to_turns,
    type_name,
)
from .memory_models import (
    ChatModelProvider,
    LocalServerFactory,
    add_thread,
    choose_add_thread,
    configured_checkpointer,
    supports_async,
)
from .memory_results import ALL_GRANULARITIES, add_result, answer_result, merge_hits, visible_at
from .results import AddResult, AnswerResult, ForgetResult, MemoryHit
from .stores.audit import AuditEntry
from .stores.base import ScoredRecord
from .stores.chroma import ChromaMemoryStore
from .stores.filters import TimeWindow
from .stores.forgetting import forget as forget_records
from .stores.forgetting import history_of
from .stores.records import MemoryRecord, ProfileRecord, parse_granularity

logger = logging.getLogger(__name__)


def open_store(config: MemoryConfig, embeddings: Embeddings | None) -> ChromaMemoryStore:
    """The Chroma store ``config`` describes (the offline MiniLM embedder by default)."""
    options: dict[str, Any] = {"embeddings": embeddings}
    if config.chroma_mode == "ephemeral":
        return ChromaMemoryStore.ephemeral(**options)
    options["collection_prefix"] = config.collection_prefix
    if config.chroma_mode == "http":
        return ChromaMemoryStore.http(
            config.chroma_host, config.chroma_port, ssl=config.chroma_ssl, **options
        )
    path = config.resolved_chroma_path.expanduser()
    path.mkdir(parents=True, exist_ok=True)
    return ChromaMemoryStore.persistent(path, **options)


class Memory:
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
        if chat_model is not None and not isinstance(chat_model, BaseChatModel):
            raise InvalidTypeError(
                f"chat_model must be a langchain BaseChatModel, got {type(chat_model).__name__}"
            )
        self.config = config or MemoryConfig()
        self._own_persistent_store = store is None and self.config.chroma_mode == "persistent"
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
        self._finalizer = weakref.finalize(self, self._resources.close)
        self._async_ok: bool | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> Memory:
        """A Memory configured from ``MEMSTRATA_*`` / ``OPENAI_*`` variables and a TOML file.

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
            raise InvalidInputError("this Memory is closed; create a new one")
        with self._lock:
            if self._graph is None:
                if self.checkpointer is None:
                    self.checkpointer = configured_checkpointer(
                        self.config,
                        self._resources,
                        own_persistent_store=self._own_persistent_store,
                    )
                journal = None
                if self.config.construction_journal and self._own_persistent_store:
                    journal = SqliteReplyJournal(self.config.resolved_journal_path)
                    self._resources.callback(journal.close)
                graph = build_memory_graph(
                    chat_model=self._models.get(),
                    store=self.store,
                    structured_method=self.config.structured_method,
                    max_attempts=self.config.max_llm_attempts,
                    journal=journal,
                )
                self._graph = graph.compile(checkpointer=self.checkpointer)
            return self._graph

    def _thread(self, ctx: MemoryContext, kind: str) -> RunnableConfig:
        """A fresh checkpoint thread for one call, so runs never mix their state."""
        return {"configurable": {"thread_id": f"{ctx.namespace}/{kind}/{uuid.uuid4().hex}"}}

    def _invoke(self, state: dict[str, Any], ctx: MemoryContext, kind: str) -> Any:
        """Run one call. An interrupted ``add`` resumes when called again (see add_thread)."""
        graph = self._compiled()
        if self.checkpointer is None:
            return graph.invoke(state, context=ctx)
        if kind != "add":
            return graph.invoke(state, config=self._thread(ctx, kind), context=ctx)
        config = add_thread(ctx, state)
        found = graph.get_state(config)
        config, resume = choose_add_thread(
            config, pending=bool(found.next), started=found.created_at is not None
        )
        return graph.invoke(None if resume else state, config=config, context=ctx)

    async def _ainvoke(self, state: dict[str, Any], ctx: MemoryContext, kind: str) -> Any:
        """Run the graph natively async, or in a thread when the checkpointer is sync-only."""
        graph = await asyncio.to_thread(self._compiled)
        if self._async_ok is None:
            self._async_ok = await supports_async(self.checkpointer)
        if not self._async_ok:
            return await asyncio.to_thread(self._invoke, state, ctx, kind)
        if self.checkpointer is None:
            return await graph.ainvoke(state, context=ctx)
        if kind != "add":
            return await graph.ainvoke(state, config=self._thread(ctx, kind), context=ctx)
        config = add_thread(ctx, state)
        found = await graph.aget_state(config)
        config, resume = choose_add_thread(
            config, pending=bool(found.next), started=found.created_at is not None
        )
        return await graph.ainvoke(None if resume else state, config=config, context=ctx)

    # ---------------------------------------------------------------- outcome
    def _model_error(self, calls: list[LLMCall]) -> ModelUnreachableError | None:
        """The error to report when LLM calls were made and none reached the model."""
        if not calls or not all(c.unreachable for c in calls):
            return None
        detail = calls[0].error or ""
        return unreachable_error(self._models.get(), "no request got through", detail)

    def _added(self, output: Any, namespace: str) -> AddResult:
        """The AddResult; consolidation failures are logged at WARNING and reported."""
        result = add_result(output)
        error = self._model_error(result.llm_calls)
        if error is not None:
            result.model_error = str(error)
            logger.warning(
                "add(namespace=%r): %d raw turn(s) stored, consolidation skipped: %s",
                namespace,
                len(result.new_raw_ids),
                error,
            )
        elif result.failures:
            steps = ", ".join(sorted({f"{f.node}/{f.step}" for f in result.failures}))
            logger.warning(
                "add(namespace=%r): %d raw turn(s) stored; %d consolidation step(s) failed "
                "(%s), see AddResult.failures",
                namespace,
                len(result.new_raw_ids),
                len(result.failures),
                steps,
            )
        return result

    def _answered(self, output: Any, question: str, namespace: str) -> AnswerResult:
        """The AnswerResult, or ModelUnreachableError when no LLM call reached the model."""
        result = answer_result(output, question)
        error = self._model_error(result.llm_calls)
        if error is not None:
            raise error
        if result.failures:
            steps = ", ".join(sorted({f"{f.node}/{f.step}" for f in result.failures}))
            logger.warning(
                "answer(namespace=%r): %d LLM step(s) failed (%s); the answer may be degraded",
                namespace,
                len(result.failures),
                steps,
            )
        return result

    # -------------------------------------------------------------------- add
    def _add_request(
        self,
        messages: AddInput,
        namespace: str,
        session_id: str | None,
        at: datetime | None,
        speaker: str | None,
        session_closed: bool,
    ) -> tuple[dict[str, Any], MemoryContext]:
        require_namespace(namespace)
        require_bool("session_closed", session_closed)
        turns = to_turns(
            messages, namespace=namespace, session_id=session_id, at=at, speaker=speaker
        )
        state = {"turns": turns, "session_closed": session_closed}
        return state, self.config.memory_context(namespace)

    def add(
        self,
        messages: AddInput,
        *,
        namespace: str,
        session_id: str | None = None,
        at: datetime | None = None,
        speaker: str | None = None,
        session_closed: bool = False,
    ) -> AddResult:
        """Remember a turn or a conversation; consolidation runs per the trigger policy.

        The raw turns are stored before any LLM call. When consolidation fails (a
        malformed reply, or a model that cannot be reached) the turns stay stored, the
        failure is logged at WARNING and listed in ``AddResult.failures``, and
        ``AddResult.model_error`` says how to reach a model.

        Raises:
            InvalidTypeError: ``messages`` (or an argument) has a type add() does not
                take; the message names the type received and the types accepted.
            InvalidInputError: An empty text or list, a naive ``at``, a bad field.
            NamespaceError: A missing or malformed namespace.
        """
        state, ctx = self._add_request(messages, namespace, session_id, at, speaker, session_closed)
        return self._added(self._invoke(state, ctx, "add"), namespace)

    async def aadd(
        self,
        messages: AddInput,
        *,
        namespace: str,
        session_id: str | None = None,
        at: datetime | None = None,
        speaker: str | None = None,
        session_closed: bool = False,
    ) -> AddResult:
        """Async :meth:`add`."""
        state, ctx = self._add_request(messages, namespace, session_id, at, speaker, session_closed)
        return self._added(await self._ainvoke(state, ctx, "add"), namespace)

    # ----------------------------------------------------------------- search
    def search(
        self,
        query: str,
        *,
        namespace: str,
        k: int = 10,
        granularities: Sequence[str] | None = None,
        window: TimeWindow | None = None,
        as_of: datetime | None = None,
    ) -> list[MemoryHit]:
        """Hybrid search over the granularities (default all four); no LLM is used.

        Facts are current ones only, unless ``as_of`` asks for what held at that time.
        A namespace with no memories gives an empty list.
        """
        require_text("query", query)
        require_namespace(namespace)
        require_positive_int("k", k)
        require_window(window)
        require_aware("as_of", as_of)
        if isinstance(granularities, str):
            granularities = [granularities]
        if granularities is not None and not isinstance(granularities, Sequence):
            raise InvalidTypeError(
                "granularities must be a list of 'raw', 'fact', 'episode', 'scene' or None, "
                f"got {type_name(granularities)}"
            )
        grans = [parse_granularity(g).value for g in (granularities or ALL_GRANULARITIES)]
        if not grans:
            raise InvalidInputError("granularities must name at least one granularity")
        found: dict[str, list[ScoredRecord]] = {}
        for gran in dict.fromkeys(grans):
            where = {"superseded": False} if gran == "fact" and as_of is None else None
            hits = self.store.search(query, gran, namespace, k=k, window=window, where=where)
            found[gran] = [h for h in hits if visible_at(h, as_of)]
        return merge_hits(found, k)

    async def asearch(
        self,
        query: str,
        *,
        namespace: str,
        k: int = 10,
        granularities: Sequence[str] | None = None,
        window: TimeWindow | None = None,
        as_of: datetime | None = None,
    ) -> list[MemoryHit]:
        """Async :meth:`search`."""
        return await asyncio.to_thread(
            self.search,
            query,
            namespace=namespace,
            k=k,
            granularities=granularities,
            window=window,
            as_of=as_of,
        )

    # ----------------------------------------------------------------- answer
    def _answer_request(
        self, question: str, namespace: str, window: Sequence[str], as_of: datetime | None
    ) -> tuple[dict[str, Any], MemoryContext]:
        require_text("question", question)
        require_namespace(namespace)
        lines = require_lines("window", window)
        require_aware("as_of", as_of)
        state = {"question": question, "mode": "answer", "window": lines, "as_of": as_of}
        return state, self.config.memory_context(namespace)

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
        return self._answered(self._invoke(state, ctx, "answer"), question, namespace)

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
        return self._answered(await self._ainvoke(state, ctx, "answer"), question, namespace)

    # ----------------------------------------------------- history and profile
    def _known_ids(self, namespace: str, ids: Sequence[str]) -> set[str]:
        """Which of ``ids`` name a stored record of ``namespace`` (any granularity)."""
        found: set[str] = set()
        for gran in ALL_GRANULARITIES:
            missing = [i for i in ids if i not in found]
            if not missing:
                break
            found.update(r.id for r in self.store.get(gran, namespace, missing))
        return found

    @staticmethod
    def _not_found(namespace: str, ids: Sequence[str]) -> RecordNotFoundError:
        listed = ", ".join(repr(i) for i in ids)
        return RecordNotFoundError(
            f"no memory {listed} in namespace {namespace!r}; ids come from search(), "
            "answer().citations, inspect() or AddResult.new_raw_ids of the same namespace"
        )

    def history(self, memory_id: str, *, namespace: str) -> list[AuditEntry]:
        """The audit entries of a memory, with its facts' supersession chain, oldest first.

        A stored memory that never changed has an empty history; a forgotten one keeps
        its tombstone.

        Raises:
            RecordNotFoundError: ``memory_id`` names no memory of ``namespace``, stored
                or forgotten.
        """
        require_text("memory_id", memory_id)
        require_namespace(namespace)
        entries = history_of(self.store, namespace, memory_id)
        if not entries and not self._known_ids(namespace, [memory_id]):
            raise self._not_found(namespace, [memory_id])
        return entries

    async def ahistory(self, memory_id: str, *, namespace: str) -> list[AuditEntry]:
        """Async :meth:`history`."""
        return await asyncio.to_thread(self.history, memory_id, namespace=namespace)

    def profile(self, *, namespace: str) -> ProfileRecord | None:
        """The namespace's profile (distilled from scene summaries), or None."""
        return self.store.get_profile(require_namespace(namespace))

    async def aprofile(self, *, namespace: str) -> ProfileRecord | None:
        """Async :meth:`profile`."""
        return await asyncio.to_thread(self.profile, namespace=namespace)

    def inspect(
        self, *, namespace: str, granularity: str | None = None, limit: int = 50
    ) -> dict[str, list[MemoryRecord]]:
        """The most recent ``limit`` records per granularity (or of one), oldest first."""
        require_namespace(namespace)
        require_positive_int("limit", limit)
        if granularity is not None:
            require_text("granularity", granularity)
        grans = [parse_granularity(granularity).value] if granularity else ALL_GRANULARITIES
        return {g: self.store.get(g, namespace)[-limit:] for g in grans}

    # ----------------------------------------------------------------- forget
    def forget(
        self,
        *,
        namespace: str,
        memory_ids: Sequence[str] = (),
        subject: str | None = None,
        all: bool = False,
    ) -> ForgetResult:
        """Delete memories and everything derived only from them; leave a tombstone.

        Exactly one selector: ``memory_ids``, ``subject`` (every record whose content
        mentions it, case-insensitively) or ``all=True`` (the whole namespace).

        Raises:
            RecordNotFoundError: An id in ``memory_ids`` names no stored memory of
                ``namespace``; nothing is deleted.
        """
        require_namespace(namespace)
        require_bool("all", all)
        optional_text("subject", subject)
        ids = require_ids(memory_ids) if memory_ids != () else []
        if ids:
            known = self._known_ids(namespace, ids)
            unknown = [i for i in dict.fromkeys(ids) if i not in known]
            if unknown:
                raise self._not_found(namespace, unknown)
        return forget_records(
            self.store, namespace, memory_ids=ids, subject=subject, everything=all
        )

    async def aforget(
        self,
        *,
        namespace: str,
        memory_ids: Sequence[str] = (),
        subject: str | None = None,
        all: bool = False,
    ) -> ForgetResult:
        """Async :meth:`forget`."""
        return await asyncio.to_thread(
            self.forget, namespace=namespace, memory_ids=memory_ids, subject=subject, all=all
        )

    # -------------------------------------------------------------- lifecycle
    def close(self) -> None:
        """Stop the local model server and close a checkpointer this Memory opened.

        Safe to call twice; also runs at interpreter exit for a Memory never closed.
        """
        self._closed = True
        with self._lock:
            self._graph = None
        self._finalizer()

    def __enter__(self) -> Memory:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Memory(chat_model={self.chat_model_source}, chroma={self.config.chroma_mode})"
