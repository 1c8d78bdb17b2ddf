"""mem0 (``mem0ai``) as a peer: ``Memory.from_config`` as its documentation sets it up.

* LLM: its ``openai`` provider pointed at the run's chat endpoint (the base URL, model name
  and key of the run's ``ChatOpenAI``; for a local model, ``serve-llm``'s URL), with the
  run's temperature. mem0 also has a ``langchain`` provider that would take the chat model
  object itself, but that provider drops the ``response_format`` mem0 asks for (JSON mode
  for its extraction call), so the OpenAI provider is the one that runs mem0 as written.
  Its client is given the chat model's timeout and retries, and is wrapped to count calls
  and to keep its replies (``openai-replies.jsonl`` in the construction folder, committed:
  the store is rebuilt on another machine without asking the model again).
* Embeddings: its ``langchain`` embedder provider wrapping the run's embeddings object.
* Vector store: Chroma under ``<stage folder>/mem0/chroma``; its history database and its
  home folder (``MEM0_DIR``, where it keeps a config file) under the same folder.
* Telemetry off (``MEM0_TELEMETRY=False``, read when mem0 is first imported).
* Its default extraction prompt, one user id per conversation; each batch carries the
  batch's dialogue ids and session date as metadata (stored with each memory it writes,
  never shown to its LLM), so the answer knows where a memory came from and when.
* Search: ``Memory.search`` with its defaults, top-20 and threshold 0.1.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from lamina.errors import InvalidInputError
from lamina.graphs import TurnInput

from ..kept_replies import KeptReplies
from .base import Recalled, dia_ids_of, messages_of
from .costs import CallLog, CountingOpenAI, logged_errors
from .endpoint import OpenAIEndpoint, endpoint_of
from .kept_openai import KeptOpenAI

NODE = "mem0"
FOLDER = "mem0"
COLLECTION = "mem0"
LOGGER = "mem0"


def mem0_config(folder: Path, endpoint: OpenAIEndpoint, embeddings: Any) -> dict[str, Any]:
    """The ``Memory.from_config`` dictionary (everything stored under ``folder``)."""
    llm: dict[str, Any] = {
        "model": endpoint.model,
        "openai_base_url": endpoint.base_url,
        "api_key": endpoint.api_key,
    }
    if endpoint.temperature is not None:
        llm["temperature"] = endpoint.temperature
    return {
        "vector_store": {
            "provider": "chroma",
            "config": {"path": str(folder / "chroma"), "collection_name": COLLECTION},
        },
        "embedder": {"provider": "langchain", "config": {"model": embeddings}},
        "llm": {"provider": "openai", "config": llm},
        "history_db_path": str(folder / "history.db"),
    }


class Mem0Memory:
    """A mem0 ``Memory``: one user id per conversation."""

    def __init__(self, memory: Any, log: CallLog) -> None:
        self.memory = memory
        self._log = log

    @property
    def log(self) -> CallLog:
        """Its LLM calls (through the wrapped OpenAI client) and logged errors."""
        return self._log

    def add(self, conversation: str, turns: Sequence[TurnInput]) -> int:
        """``Memory.add`` of the batch; the memories it added."""
        metadata = {
            "dia_ids": " ".join(dia_ids_of(turns)),
            "session_date": turns[0].occurred_at.isoformat() if turns else "",
        }
        with logged_errors(LOGGER, self._log):
            out = self.memory.add(messages_of(turns), user_id=conversation, metadata=metadata)
        return len(out.get("results", []))

    def search(self, conversation: str, query: str, k: int) -> list[Recalled]:
        """``Memory.search`` within the conversation's user id."""
        out = self.memory.search(query, top_k=k, filters={"user_id": conversation})
        found = []
        for hit in out.get("results", []):
            meta = hit.get("metadata") or {}
            day = str(meta.get("session_date") or "")
            found.append(
                Recalled(
                    text=str(hit.get("memory", "")),
                    dia_ids=str(meta.get("dia_ids") or "").split(),
                    on=datetime.fromisoformat(day) if day else None,
                )
            )
        return found


def _import_mem0(folder: Path) -> Any:
    """mem0's ``Memory`` class, imported with telemetry off and its home under ``folder``."""
    os.environ["MEM0_TELEMETRY"] = "False"
    os.environ.setdefault("MEM0_DIR", str(folder / "home"))
    from mem0 import Memory
    from mem0.memory import telemetry

    if telemetry.MEM0_TELEMETRY:
        raise InvalidInputError(
            "mem0 was imported with its telemetry on before the evaluation could turn it off; "
            "set MEM0_TELEMETRY=False in the environment"
        )
    return Memory


def open_mem0(
    folder: Path,
    *,
    chat_model: Any,
    embeddings: Any,
    endpoint: OpenAIEndpoint | None = None,
    replies: KeptReplies | None = None,
    scope: str = "",
) -> Mem0Memory:
    """Open (or create) mem0's memory under ``<folder>/mem0``.

    Args:
        folder: The stage's construction folder.
        chat_model: The run's chat model (its endpoint is used unless ``endpoint``).
        embeddings: The run's LangChain embeddings.
        endpoint: Where to send mem0's calls instead (tests).
        replies: Kept replies that answer a request seen before, and keep every new one
            (:class:`~.kept_openai.KeptOpenAI`); None: none kept.
        scope: Part of every kept reply's key: the model as the run names it.
    """
    home = folder / FOLDER
    home.mkdir(parents=True, exist_ok=True)
    target = endpoint or endpoint_of(chat_model, NODE)
    memory_class = _import_mem0(home)
    memory = memory_class.from_config(mem0_config(home, target, embeddings))
    log = CallLog(NODE, "openai")
    options = target.client_options()
    client = memory.llm.client.with_options(**options) if options else memory.llm.client
    if replies is not None:
        client = KeptOpenAI(client, replies, scope, on_kept=log.kept)
    memory.llm.client = CountingOpenAI(client, log)
    return Mem0Memory(memory, log)


__all__ = ["Mem0Memory", "OpenAIEndpoint", "endpoint_of", "mem0_config", "open_mem0"]
