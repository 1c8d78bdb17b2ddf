"""LangMem as a peer: ``create_memory_store_manager`` over a LangGraph store, as documented.

* The manager: ``create_memory_store_manager(chat_model, store=store)`` with its defaults
  (its instructions, its ``Memory`` schema, inserts on, its query limit), the run's chat
  model object itself; namespace ``("memories", "{langgraph_user_id}")`` with the
  conversation's id as the user id, so each conversation has its own namespace.
* The store: LangGraph's ``InMemoryStore`` indexed with the run's embeddings, the store
  LangMem's documentation uses. It keeps nothing on disk, so its items are saved to
  ``<stage folder>/langmem/store.json`` after every batch and put back (embedded again)
  when the stage is opened, which makes the stage resumable batch by batch. LangGraph's
  ``SqliteStore`` would persist by itself, but its vector search loads the sqlite-vec
  extension, and not every Python's sqlite3 can load extensions (this project's cannot).
* Costs: a LangChain callback handler in the run config counts every call the manager
  makes through the chat model.
* Sources: the keys each batch wrote (the manager returns them) are noted with the batch's
  dialogue ids and session date, in the same file, outside the store LangMem searches.
* Search: ``manager.search(query=..., config=...)`` with its default limit, 10.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from pydantic import BaseModel

from lamina.graphs import TurnInput

from .base import Recalled, dia_ids_of, messages_of
from .costs import CallLog, CountingCallbacks

NODE = "langmem"
FOLDER = "langmem"
SNAPSHOT = "store.json"
PAGE = 1000


def _text(value: Any) -> str:
    """A memory's text: the ``content`` of LangMem's default ``Memory``, else its JSON."""
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    if isinstance(value, dict):
        inner = value.get("content", value)
        if isinstance(inner, dict) and set(inner) == {"content"}:
            inner = inner["content"]
        if isinstance(inner, str):
            return inner
        return json.dumps(inner, ensure_ascii=False)
    return str(value)


def store_items(store: BaseStore) -> list[dict[str, Any]]:
    """Every item of ``store`` as ``{namespace, key, value}``."""
    out: list[dict[str, Any]] = []
    while True:
        page = store.search((), limit=PAGE, offset=len(out))
        out += [{"namespace": list(i.namespace), "key": i.key, "value": i.value} for i in page]
        if len(page) < PAGE:
            return out


class LangMemMemory:
    """A LangMem memory store manager over an in-memory store saved after every batch."""

    def __init__(
        self,
        manager: Any,
        store: BaseStore,
        path: Path,
        log: CallLog,
        sources: dict[str, dict[str, Any]] | None = None,
    ) -> None:
        self.manager = manager
        self.store = store
        self.path = path
        """The snapshot file."""
        self.sources: dict[str, dict[str, Any]] = sources or {}
        """``conversation/key`` -> the dialogue ids and date of the batches that wrote it."""
        self._log = log

    @property
    def log(self) -> CallLog:
        """Its chat model calls (through the callback handler)."""
        return self._log

    def _config(self, conversation: str, *, counted: bool = False) -> dict[str, Any]:
        config: dict[str, Any] = {"configurable": {"langgraph_user_id": conversation}}
        if counted:
            config["callbacks"] = [CountingCallbacks(self._log)]
        return config

    def add(self, conversation: str, turns: Sequence[TurnInput]) -> int:
        """The manager on the batch; then the store is saved. The memories it put."""
        puts = self.manager.invoke(
            {"messages": messages_of(turns)}, config=self._config(conversation, counted=True)
        )
        day = turns[0].occurred_at.isoformat() if turns else None
        for put in puts:
            source = self.sources.setdefault(f"{conversation}/{put['key']}", {"dia_ids": []})
            source["dia_ids"] = list(dict.fromkeys([*source["dia_ids"], *dia_ids_of(turns)]))
            source["on"] = day
        self.save()
        return len(puts)

    def search(self, conversation: str, query: str, k: int) -> list[Recalled]:
        """``manager.search`` in the conversation's namespace."""
        found = []
        for item in self.manager.search(query=query, limit=k, config=self._config(conversation)):
            source = self.sources.get(f"{conversation}/{item.key}", {})
            day = source.get("on")
            found.append(
                Recalled(
                    text=_text(item.value),
                    dia_ids=list(source.get("dia_ids", [])),
                    on=datetime.fromisoformat(day) if day else None,
                )
            )
        return found

    def save(self) -> None:
        """Write the store's items and the sources to the snapshot (atomically)."""
        data = {"items": store_items(self.store), "sources": self.sources}
        partial = self.path.with_suffix(".partial")
        partial.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
        os.replace(partial, self.path)


def open_store(embeddings: Any) -> InMemoryStore:
    """LangGraph's in-memory store, indexed with ``embeddings`` (their dimension probed)."""
    dims = len(embeddings.embed_query("dimension probe"))
    return InMemoryStore(index={"dims": dims, "embed": embeddings})


def open_langmem(folder: Path, *, chat_model: Any, embeddings: Any) -> LangMemMemory:
    """Open (or create) LangMem's memory under ``<folder>/langmem``, reloading its snapshot."""
    from langmem import create_memory_store_manager

    home = folder / FOLDER
    home.mkdir(parents=True, exist_ok=True)
    store = open_store(embeddings)
    path = home / SNAPSHOT
    sources: dict[str, dict[str, Any]] = {}
    if path.exists():
        data = json.loads(path.read_text(encoding="utf-8"))
        for item in data.get("items", []):
            store.put(tuple(item["namespace"]), item["key"], item["value"])
        sources = data.get("sources", {})
    manager = create_memory_store_manager(chat_model, store=store)
    return LangMemMemory(manager, store, path, CallLog(NODE, "langchain"), sources)


__all__ = ["LangMemMemory", "open_langmem", "open_store", "store_items"]
