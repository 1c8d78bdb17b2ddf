"""The checkpointer a :class:`~lamina.Memory` runs its graph with, and add's threads.

``auto`` opens SQLite beside a persistent store the Memory opened itself, and a
``PostgresSaver`` in the database of a Postgres store it opened. Each ``add``
gets a thread named by a digest of its input, so calling an interrupted ``add`` again
resumes it instead of starting over.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Mapping
from contextlib import ExitStack
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.types import StateSnapshot
from pydantic import BaseModel

from ..config import MemoryConfig
from ..core.context import MemoryContext


def configured_checkpointer(
    config: MemoryConfig,
    stack: ExitStack,
    *,
    own_store: bool = False,
) -> BaseCheckpointSaver[Any] | None:
    """The checkpointer ``config`` asks for, opened on ``stack`` (closed with it).

    ``auto`` means SQLite under the data dir when the Memory opened a persistent Chroma
    from ``config`` itself (``own_store``), a ``PostgresSaver`` in the same database when
    it opened a Postgres store, and no checkpointer otherwise
    (:meth:`MemoryConfig.checkpoint_kind`).
    """
    kind = config.checkpoint_kind(own_store=own_store)
    if kind == "none":
        return None
    from ..graphs.checkpoint import open_checkpointer, state_serializer

    if kind == "memory":
        from langgraph.checkpoint.memory import InMemorySaver

        return InMemorySaver(serde=state_serializer())  # restores lamina's state types

    if kind == "postgres":
        target = config.checkpoint_uri or ""  # set: checked by MemoryConfig
    else:
        target = str(config.resolved_sqlite_path.expanduser())
    return stack.enter_context(open_checkpointer(target))


async def supports_async(checkpointer: BaseCheckpointSaver[Any] | None) -> bool:
    """Whether ``checkpointer`` implements the async API (``SqliteSaver`` does not)."""
    if checkpointer is None:
        return True
    probe: Any = {"configurable": {"thread_id": "lamina-async-probe", "checkpoint_ns": ""}}
    try:
        await checkpointer.aget_tuple(probe)
    except NotImplementedError:
        return False
    return True


def add_thread(ctx: MemoryContext, state: Mapping[str, Any]) -> RunnableConfig:
    """The checkpoint thread of an ``add``: the namespace plus a digest of its input.

    The same turns (speakers, texts, times, sessions) give the same thread, so calling
    an interrupted ``add`` again (same arguments, including ``at``) finds its unfinished
    run. Turns without an explicit time get "now", so such an ``add`` is not resumable.
    """
    turns = [
        t.model_dump(mode="json") if isinstance(t, BaseModel) else dict(t)
        for t in state.get("turns") or []
    ]
    payload: dict[str, Any] = {"turns": turns, "session_closed": bool(state.get("session_closed"))}
    if state.get("pending_raw_ids"):  # a background build: its turns are stored already
        payload["pending_raw_ids"] = list(state["pending_raw_ids"])
    digest = hashlib.sha256(
        json.dumps(payload, sort_keys=True, default=str).encode("utf-8")
    ).hexdigest()
    return {"configurable": {"thread_id": f"{ctx.namespace}/add/{digest[:32]}"}}


def choose_add_thread(config: RunnableConfig, found: StateSnapshot) -> tuple[RunnableConfig, bool]:
    """``(config, resume)`` for an add whose thread holds ``found``.

    A pending run is resumed; a finished thread is not reused (the add gets a new one).
    """
    if found.next:
        return config, True
    if found.created_at is None:
        return config, False
    thread = f"{config['configurable']['thread_id']}/{uuid.uuid4().hex}"
    return {"configurable": {"thread_id": thread}}, False
