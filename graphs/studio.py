"""The graph ``langgraph dev`` and LangGraph Studio load; ``langgraph.json`` points here.

``make_graph`` is a graph factory: the LangGraph API server calls it for each run (and
for schema requests) and compiles the returned builder with its own checkpointer and
store, so nothing here compiles or persists checkpoints. Configuration is read at this
edge only, through :meth:`memstrata.config.MemoryConfig.from_env`:

* the chat model: an OpenAI-compatible endpoint from ``OPENAI_BASE_URL`` /
  ``OPENAI_API_KEY`` / ``OPENAI_MODEL`` (or their ``MEMSTRATA_`` names). For the offline
  model, serve it first with ``memstrata serve-llm --model qwen --port 8085`` and set
  ``OPENAI_BASE_URL=http://127.0.0.1:8085/v1``: the API server's worker is no place to
  own a model process.
* the store: ``MEMSTRATA_DATA_DIR`` (persistent Chroma under ``<dir>/chroma``) or
  ``MEMSTRATA_CHROMA_MODE=http`` with ``MEMSTRATA_CHROMA_HOST`` / ``_PORT`` for a
  ``chroma run`` server.

The run-time context (namespace, trigger policy, thresholds) is sent with each run, e.g.
``client.runs.wait(thread_id, "memory", input=..., context={"namespace": "user:alice"})``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

from langgraph.graph import StateGraph

from ..config import MemoryConfig
from ..core.context import MemoryContext
from ..errors import InvalidInputError
from ..memory import open_store
from ..memory.models import endpoint_chat_model
from .memory import MemoryInput, MemoryOutput, MemoryState, build_memory_graph

StudioGraph = StateGraph[MemoryState, MemoryContext, MemoryInput, MemoryOutput]


def studio_config(env: Mapping[str, str] | None = None) -> MemoryConfig:
    """The configuration the Studio graph uses, from ``env`` (default ``os.environ``).

    Raises:
        InvalidInputError: no chat endpoint is configured, or the store would not
            outlive a single run (an ephemeral Chroma).
    """
    config = MemoryConfig.from_env(env)
    if not config.uses_endpoint:
        raise InvalidInputError(
            "the Studio graph needs an OpenAI-compatible chat endpoint: set OPENAI_BASE_URL "
            "(and OPENAI_API_KEY / OPENAI_MODEL as the endpoint needs), e.g. run "
            "`memstrata serve-llm --model qwen --port 8085` and set "
            "OPENAI_BASE_URL=http://127.0.0.1:8085/v1"
        )
    if config.chroma_mode == "ephemeral":
        raise InvalidInputError(
            "MEMSTRATA_CHROMA_MODE=ephemeral would give every Studio run an empty store; "
            "use persistent (MEMSTRATA_DATA_DIR) or http (a `chroma run` server)"
        )
    return config


def build_studio_graph(config: MemoryConfig) -> StudioGraph:
    """The uncompiled memory graph on the store and chat endpoint ``config`` names."""
    return build_memory_graph(
        chat_model=endpoint_chat_model(config),
        store=open_store(config, None),
        structured_method=config.structured_method,
        max_attempts=config.max_llm_attempts,
    )


async def make_graph() -> StudioGraph:
    """Graph factory for ``langgraph dev``: read the environment, build the graph.

    Opening the store touches the disk or the network, so it runs in a worker thread
    instead of blocking the server's event loop.
    """
    return await asyncio.to_thread(lambda: build_studio_graph(studio_config()))


__all__ = ["build_studio_graph", "make_graph", "studio_config"]
