"""The graph ``langgraph dev`` and LangGraph Studio load; ``langgraph.json`` points here.

``make_graph`` is a graph factory: the LangGraph API server calls it for each run (and
for schema requests) and compiles the returned builder with its own checkpointer and
store, so nothing here compiles or persists checkpoints. Configuration is read at this
edge only, through :meth:`lamina.config.MemoryConfig.from_env`:

* the chat model: an API model when one is configured (``OPENAI_API_KEY`` for OpenAI, or
  ``OPENAI_BASE_URL`` for any OpenAI-compatible endpoint, with ``OPENAI_MODEL``; or
  their ``LAMINA_`` names). Otherwise the offline model (``LAMINA_LOCAL_MODEL``,
  default Qwen2.5-Coder-1.5B) is loaded into the server process by llama.cpp at the
  start of the first request that calls it, never while the graph loads, and is reused
  by every later run. :class:`~lamina.memory.models.ChatModelProvider` chooses between
  the two, as for :class:`~lamina.Memory`; :data:`STUDIO_MODELS` holds the model for
  the life of the process.
* the store: ``LAMINA_DATA_DIR`` (persistent Chroma under ``<dir>/chroma``),
  ``LAMINA_STORE=http://host:port`` for a ``chroma run`` server, or a Postgres DSN in
  ``LAMINA_STORE`` (or ``LAMINA_POSTGRES_DSN``; one store per process,
  :data:`STUDIO_STORES`).

``langgraph.postgres.json`` also points the API server's checkpointer
(:func:`postgres_checkpointer`) and long-term store (:func:`postgres_store`) at that
DSN, so memory, checkpoints and the ``BaseStore`` live in one database:
``langgraph dev --config langgraph.postgres.json``.

The run-time context (namespace, trigger policy, thresholds) is sent with each run, e.g.
``client.runs.wait(thread_id, "memory", input=..., context={"namespace": "user:alice"})``.
"""

from __future__ import annotations

import asyncio
import atexit
import threading
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

from langchain_core.language_models import BaseChatModel
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import StateGraph

from ..config import MemoryConfig
from ..core.context import MemoryContext
from ..errors import InvalidInputError, LocalModelError
from ..graphs.checkpoint import aopen_checkpointer
from ..graphs.memory import MemoryInput, MemoryOutput, MemoryState, build_memory_graph
from ..memory.models import ChatModelProvider, LocalServerFactory
from .langgraph_store import LaminaStore
from .studio_stores import StudioStores

StudioGraph = StateGraph[MemoryState, MemoryContext, MemoryInput, MemoryOutput]

_MODEL_SETTINGS = ("openai_base_url", "model", "timeout", "local_model", "local_port")
"""The configuration fields that choose or shape the chat model."""


def studio_config(env: Mapping[str, str] | None = None) -> MemoryConfig:
    """The configuration the Studio graph uses, from ``env`` (default ``os.environ``).

    Raises:
        InvalidInputError: The store would not outlive a single run (an ephemeral Chroma).
    """
    config = MemoryConfig.from_env(env)
    if config.store_kind == "memory":
        raise InvalidInputError(
            "LAMINA_STORE=memory would give every Studio run an empty store; use the "
            "persistent Chroma (LAMINA_DATA_DIR), a `chroma run` server "
            "(LAMINA_STORE=http://host:port) or Postgres (LAMINA_STORE=postgresql://...)"
        )
    return config


class StudioModels:
    """The Studio's chat model, resolved once per process and model configuration.

    The API server calls the graph factory for every run, so the model must outlive a
    call: the first call with a configuration builds its model, later calls reuse it.
    The offline model is not loaded then: it loads at the start of the model's first
    request (:class:`~lamina.memory.models.StartOnFirstCall`), so the graph loads at once.
    A call with different model settings stops the old model and builds the new one.

    Args:
        local_server_factory: Builds the offline model's server (tests pass a fake);
            default :func:`~lamina.memory.models.default_local_server`.
    """

    def __init__(self, *, local_server_factory: LocalServerFactory | None = None) -> None:
        self._factory = local_server_factory
        self._provider: ChatModelProvider | None = None
        self._key: tuple[object, ...] | None = None
        self._lock = threading.Lock()

    def get(self, config: MemoryConfig) -> BaseChatModel:
        """The chat model for ``config``: the API model, or the offline one.

        The offline model loads at the start of its first request, not here.

        Raises:
            LocalModelError: No API model is configured and the offline model is not
                installed; the message says how to fix it.
        """
        secret = config.openai_api_key.get_secret_value() if config.openai_api_key else None
        key = (secret, *(getattr(config, name) for name in _MODEL_SETTINGS))
        with self._lock:
            if self._provider is None or key != self._key:
                self._close()
                self._provider = ChatModelProvider(config, local_server_factory=self._factory)
                self._key = key
            try:
                return self._provider.get(start=False)
            except LocalModelError as e:
                raise LocalModelError(
                    f"no API model is configured, so the Studio graph uses the offline model "
                    f"({config.local_model}), which could not be started: {e}. Install it with "
                    "`lamina install-model qwen` (or `make model`), or configure an API "
                    "model: OPENAI_API_KEY, or OPENAI_BASE_URL for an OpenAI-compatible "
                    "endpoint (with OPENAI_MODEL)"
                ) from e

    @property
    def source(self) -> str | None:
        """``endpoint`` or ``local`` once a model was asked for, else None."""
        return self._provider.source if self._provider is not None else None

    def _close(self) -> None:
        provider, self._provider, self._key = self._provider, None, None
        if provider is not None:
            provider.close()

    def close(self) -> None:
        """Stop the offline model if one was started; safe to call twice."""
        with self._lock:
            self._close()


STUDIO_MODELS = StudioModels()
"""The API server process's chat model; stopped when the process exits."""
atexit.register(STUDIO_MODELS.close)


STUDIO_STORES = StudioStores()
"""The API server process's Postgres store (Chroma stores are opened per run)."""
atexit.register(STUDIO_STORES.close)


def build_studio_graph(
    config: MemoryConfig, models: StudioModels | None = None, stores: StudioStores | None = None
) -> StudioGraph:
    """The uncompiled memory graph on the store and chat model ``config`` names.

    Args:
        config: From :func:`studio_config`.
        models: Holds the chat model between calls (default :data:`STUDIO_MODELS`).
        stores: Holds a Postgres store between calls (default :data:`STUDIO_STORES`).
    """
    chat_model = (models or STUDIO_MODELS).get(config)
    return build_memory_graph(chat_model=chat_model, store=(stores or STUDIO_STORES).get(config))


async def make_graph() -> StudioGraph:
    """Graph factory for ``langgraph dev``: read the environment, build the graph.

    No model is loaded here (the offline model loads at its first request). Opening the
    store touches the disk or the network, so it runs in a worker thread instead of
    blocking the server's loop.
    """
    return await asyncio.to_thread(lambda: build_studio_graph(studio_config()))


def postgres_studio_config(env: Mapping[str, str] | None = None) -> MemoryConfig:
    """The Studio's configuration when its checkpoints and store go to Postgres.

    Raises:
        InvalidInputError: The store is not Postgres, so there is no database to share.
    """
    config = studio_config(env)
    if config.checkpoint_uri is None:
        raise InvalidInputError(
            "langgraph.postgres.json keeps the Studio's checkpoints and store in lamina's "
            "Postgres database: set LAMINA_STORE to its postgresql:// DSN "
            "(`lamina serve-postgres` prints it for a local trial), or use langgraph.json"
        )
    return config


@asynccontextmanager
async def postgres_checkpointer() -> AsyncIterator[BaseCheckpointSaver[Any]]:
    """The API server's checkpointer: an ``AsyncPostgresSaver`` in the memory's database.

    ``langgraph.postgres.json`` names it; its tables are created on first use, beside
    lamina's schema, and it restores lamina's state types.
    """
    config = postgres_studio_config()
    async with aopen_checkpointer(config.checkpoint_uri or "") as saver:
        yield saver


@asynccontextmanager
async def postgres_store() -> AsyncIterator[LaminaStore]:
    """The API server's long-term store: a :class:`LaminaStore` on the Studio's Postgres store.

    Its items are lamina raw records under the ``lg/`` namespaces of the same database.
    """
    config = postgres_studio_config()
    store = await asyncio.to_thread(STUDIO_STORES.get, config)
    yield LaminaStore(store)


__all__ = [
    "STUDIO_MODELS",
    "STUDIO_STORES",
    "StudioModels",
    "build_studio_graph",
    "make_graph",
    "postgres_checkpointer",
    "postgres_store",
    "postgres_studio_config",
    "studio_config",
]
