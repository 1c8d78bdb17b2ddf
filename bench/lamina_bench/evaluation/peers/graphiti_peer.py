"""Graphiti (``graphiti-core``) as a peer, set up as its README sets up a local model.

Graphiti builds a temporal knowledge graph (entities, and facts as dated edges).

* LLM: ``OpenAIGenericClient`` (the client its README names for local OpenAI-compatible
  servers, structured output as ``json_schema``, which llama.cpp enforces by constrained
  decoding) pointed at the run's chat endpoint, the run's model as both its model and its
  small model, the run's timeout and retries; its own default temperature (1.0) and output
  cap (16,384). At the run's temperature, 0, the local Qwen 1.5B's reply to its second
  call of conv-41's first batch ran on for minutes (greedy decoding repeating itself
  toward the cap); at 1.0 the same batch took 9 calls and 143 s.
  Its async OpenAI client is wrapped to count every call.
* Embeddings: the run's embeddings object behind Graphiti's ``EmbedderClient`` interface.
* Reranker: ``OpenAIRerankerClient`` on the same OpenAI client (its README passes the LLM
  client, which its type hints do not take); the default search, hybrid with reciprocal
  rank fusion, does not call it.
* Graph: the embedded Kuzu driver, one database per conversation under the stage's folder
  (``<folder>/graphiti/<conversation>.kuzu``). In graphiti-core 0.31.2 the Kuzu driver
  cannot take a ``group_id`` (``add_episode`` reads a database name the Kuzu driver never
  sets), and ``Graphiti.build_indices_and_constraints`` is a no-op on it, so the driver's
  own ``graph_ops.build_indices_and_constraints`` creates the full-text indexes of a new
  database. Graphiti marks its Kuzu driver deprecated (the Kuzu project is no longer
  maintained); its other drivers need a database server.
* Telemetry off (``GRAPHITI_TELEMETRY_ENABLED=false``, read when it is imported).
* Writing: one ``message`` episode per batch, its body the batch's turns one per line
  (``(8 May 2023, 13:56) Caroline: text``, Graphiti's ``actor: content`` with the date in
  front), ``reference_time`` the batch's first turn. The episode's dialogue ids and date
  are noted in ``sources.jsonl`` beside the graph, outside what Graphiti searches.
* Search: ``Graphiti.search`` with its default 10 results; each edge is its ``fact``, dated
  by its ``valid_at`` (else its episode's date), with ``(until <date>)`` when Graphiti has
  marked it invalid, as its quickstart prints them.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib.util
import json
import os
import re
import warnings
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from lamina.agents.common.formatting import long_date
from lamina.errors import InvalidInputError
from lamina.graphs import TurnInput

from .base import UTC_ZONE, Recalled, dia_ids_of, turn_message
from .costs import CallLog, CountingAsyncCompletions, logged_errors
from .endpoint import OpenAIEndpoint, endpoint_of

NODE = "graphiti"
FOLDER = "graphiti"
SOURCES = "sources.jsonl"
LOGGER = "graphiti_core"
SOURCE_DESCRIPTION = "a chat between two people"
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")


class GraphitiMemory:
    """Graphiti's graphs, one Kuzu database per conversation, driven from sync code."""

    def __init__(self, folder: Path, build: Any, log: CallLog) -> None:
        self.folder = folder
        self._build = build
        """conversation's database path -> a ready ``Graphiti`` (a coroutine function)."""
        self._log = log
        self._loop = asyncio.new_event_loop()
        self._graphs: dict[str, Any] = {}
        self._sources = self._read_sources()

    @property
    def log(self) -> CallLog:
        """Its LLM calls (through the wrapped async OpenAI client) and logged errors."""
        return self._log

    def _read_sources(self) -> dict[str, dict[str, Any]]:
        path = self.folder / SOURCES
        if not path.exists():
            return {}
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
        return {row["episode"]: row for row in rows}

    def _path(self, conversation: str) -> Path:
        """The conversation's database: its name, made safe (and then told apart by a hash)."""
        safe = _UNSAFE.sub("_", conversation)
        if safe != conversation:
            safe += "-" + hashlib.sha256(conversation.encode()).hexdigest()[:8]
        return self.folder / f"{safe}.kuzu"

    def _graph(self, conversation: str) -> Any:
        if conversation not in self._graphs:
            built = self._build(self._path(conversation))
            self._graphs[conversation] = self._loop.run_until_complete(built)
        return self._graphs[conversation]

    def add(self, conversation: str, turns: Sequence[TurnInput]) -> int:
        """One ``add_episode`` of the batch; the facts (edges) it wrote."""
        if not turns:
            return 0
        graph = self._graph(conversation)
        ids = dia_ids_of(turns)
        name = f"{conversation} {ids[0]}-{ids[-1]}" if ids else conversation
        with logged_errors(LOGGER, self._log):
            out = self._loop.run_until_complete(
                graph.add_episode(
                    name=name,
                    episode_body="\n".join(turn_message(t) for t in turns),
                    source_description=SOURCE_DESCRIPTION,
                    reference_time=turns[0].occurred_at,
                    source=_episode_type().message,
                )
            )
        row = {"episode": out.episode.uuid, "dia_ids": ids, "on": turns[0].occurred_at.isoformat()}
        with (self.folder / SOURCES).open("a", encoding="utf-8") as f:
            f.write(json.dumps(row) + "\n")
        self._sources[row["episode"]] = row
        return len(out.edges)

    def search(self, conversation: str, query: str, k: int) -> list[Recalled]:
        """``Graphiti.search`` in the conversation's graph (none yet: nothing found)."""
        if conversation not in self._graphs and not self._path(conversation).exists():
            return []
        graph = self._graph(conversation)
        edges = self._loop.run_until_complete(graph.search(query, num_results=k))
        return [self._recalled(edge) for edge in edges]

    def close(self) -> None:
        """Close every graph and its Kuzu database (Kuzu's own close waits for its GC)."""
        for graph in self._graphs.values():
            self._loop.run_until_complete(graph.close())
            graph.driver.client.close()
            graph.driver.db.close()
        self._graphs.clear()
        self._loop.close()

    def _recalled(self, edge: Any) -> Recalled:
        sources = [self._sources[e] for e in (edge.episodes or []) if e in self._sources]
        dia_ids = [d for s in sources for d in s["dia_ids"]]
        on = edge.valid_at or (datetime.fromisoformat(sources[0]["on"]) if sources else None)
        if on is not None and on.tzinfo is None:
            on = on.replace(tzinfo=UTC_ZONE)
        text = str(edge.fact)
        if edge.invalid_at is not None:
            text += f" (until {long_date(edge.invalid_at.astimezone(UTC_ZONE), UTC_ZONE)})"
        return Recalled(text=text, dia_ids=dia_ids, on=on)


def _episode_type() -> Any:
    from graphiti_core.nodes import EpisodeType

    return EpisodeType


def _embedder(embeddings: Any) -> Any:
    """The run's LangChain embeddings behind Graphiti's ``EmbedderClient``."""
    from graphiti_core.embedder.client import EmbedderClient, EmbedderConfig

    class RunEmbeddings(EmbedderClient):
        def __init__(self) -> None:
            self.config = EmbedderConfig(embedding_dim=len(embeddings.embed_query("dimension")))

        async def create(self, input_data: Any) -> list[float]:
            # a list: the first item's vector, as Graphiti's OpenAI embedder returns
            text = input_data if isinstance(input_data, str) else str(next(iter(input_data)))
            return list(await asyncio.to_thread(embeddings.embed_query, text))

        async def create_batch(self, input_data_list: list[str]) -> list[list[float]]:
            found = await asyncio.to_thread(embeddings.embed_documents, list(input_data_list))
            return [list(v) for v in found]

    return RunEmbeddings()


def _import_graphiti() -> None:
    """Import graphiti-core with its telemetry off; refuse without the Kuzu driver."""
    os.environ["GRAPHITI_TELEMETRY_ENABLED"] = "false"
    # A Kuzu database opened once kuzu's library is loaded before xllamacpp's aborts the
    # process (std::bad_alloc; kuzu 0.11.3, xllamacpp here); loaded after it, both work.
    # The local model loads xllamacpp only when it starts, so it is loaded first here.
    if importlib.util.find_spec("xllamacpp") is not None:
        import xllamacpp  # noqa: F401
    try:
        import graphiti_core  # noqa: F401
        import kuzu  # noqa: F401
    except ImportError as e:
        raise InvalidInputError(
            f"graphiti needs graphiti-core and kuzu ({e}): pip install './bench[peers]'"
        ) from e


def open_graphiti(
    folder: Path,
    *,
    chat_model: Any,
    embeddings: Any,
    endpoint: OpenAIEndpoint | None = None,
) -> GraphitiMemory:
    """Open (or create) Graphiti's graphs under ``<folder>/graphiti``.

    Args:
        folder: The stage's construction folder.
        chat_model: The run's chat model (its endpoint is used unless ``endpoint``).
        embeddings: The run's LangChain embeddings.
        endpoint: Where to send Graphiti's calls instead (tests).
    """
    home = folder / FOLDER
    home.mkdir(parents=True, exist_ok=True)
    target = endpoint or endpoint_of(chat_model, NODE)
    _import_graphiti()
    from graphiti_core import Graphiti
    from graphiti_core.cross_encoder.openai_reranker_client import OpenAIRerankerClient
    from graphiti_core.driver.kuzu_driver import KuzuDriver
    from graphiti_core.llm_client.config import LLMConfig
    from graphiti_core.llm_client.openai_generic_client import OpenAIGenericClient
    from openai import AsyncOpenAI

    log = CallLog(NODE, "openai")
    client = AsyncOpenAI(
        api_key=target.api_key, base_url=target.base_url, **target.client_options()
    )
    counted = CountingAsyncCompletions(client.chat.completions, log)
    client.chat.completions = counted  # type: ignore[misc,assignment]  # set once, here
    config = LLMConfig(
        api_key=target.api_key,
        model=target.model,
        small_model=target.model,
        base_url=target.base_url,
    )
    llm = OpenAIGenericClient(config=config, client=client)
    embedder = _embedder(embeddings)

    async def build(path: Path) -> Any:
        new = not path.exists()
        with warnings.catch_warnings():  # its deprecation is stated in the report's settings
            warnings.filterwarnings("ignore", "The Kuzu backend is deprecated", DeprecationWarning)
            driver = KuzuDriver(db=str(path))
        graph = Graphiti(
            graph_driver=driver,
            llm_client=llm,
            embedder=embedder,
            cross_encoder=OpenAIRerankerClient(client=client, config=config),
        )
        if new:
            await driver.graph_ops.build_indices_and_constraints(driver)
        return graph

    return GraphitiMemory(home, build, log)


__all__ = ["GraphitiMemory", "open_graphiti"]
