"""Checkpointers for the memory graphs: SQLite by default, Postgres when configured.

``open_checkpointer(target)`` is the one factory. ``target`` is a file path (or
``sqlite:///path``, or ``":memory:"``) for a ``SqliteSaver``, or a ``postgresql://`` URI
for a ``PostgresSaver``. It returns a context manager; the connection is closed when the
block ends::

    with open_checkpointer(".lamina/checkpoints.sqlite") as saver:
        graph = build_memory_graph(chat_model=model, store=store).compile(checkpointer=saver)
        graph.invoke({"turns": turns}, {"configurable": {"thread_id": "t1"}}, context=ctx)

``aopen_checkpointer`` is the async twin (``AsyncSqliteSaver`` / ``AsyncPostgresSaver``).
Postgres needs the ``postgres`` extra (``pip install 'lamina[postgres]'``); it is
imported only when a Postgres URI is given.

Every saver opened here deserialises exactly the lamina types the graph state holds
(plus langgraph's safe built-ins), so checkpoints load without "unregistered type"
warnings today and keep loading under ``LANGGRAPH_STRICT_MSGPACK``.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from importlib import import_module
from pathlib import Path
from typing import Any, Literal, TypeVar

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from ..core.calls import LLMCall
from ..core.state import Candidate, Conflict, Failure, Job, TriggerDecision, TurnInput, Written
from ..errors import InvalidInputError, MissingDependencyError

Backend = Literal["sqlite", "postgres"]

_POSTGRES_SCHEMES = ("postgresql://", "postgres://")
_SQLITE_PREFIX = "sqlite:///"
_MEMORY = ":memory:"

STATE_TYPES: tuple[type, ...] = (
    Candidate,
    Conflict,
    Failure,
    Job,
    LLMCall,
    TriggerDecision,
    TurnInput,
    Written,
)
"""The lamina types stored in checkpoints of the memory graphs."""

S = TypeVar("S", bound=BaseCheckpointSaver[Any])


def state_serializer() -> JsonPlusSerializer:
    """A serializer that restores exactly the lamina state types (and safe built-ins).

    ``open_checkpointer`` sets it on the savers it opens; give it to any other saver that
    checkpoints the memory graphs, e.g. ``InMemorySaver(serde=state_serializer())``, so
    their checkpoints load without "Deserializing unregistered type" warnings (and still
    load once LangGraph blocks unregistered types).
    """
    return JsonPlusSerializer(allowed_msgpack_modules=STATE_TYPES)


def _with_state_types(saver: S) -> S:
    saver.serde = state_serializer()
    return saver


def resolve_target(target: str | os.PathLike[str]) -> tuple[Backend, str]:
    """Classify a checkpoint setting: ``("postgres", uri)`` or ``("sqlite", path)``.

    Raises:
        InvalidInputError: for an empty value or a URI scheme that is neither.
    """
    text = os.fspath(target).strip()
    if not text:
        raise InvalidInputError(
            "checkpoint target is empty; give a SQLite file path "
            "(e.g. '.lamina/checkpoints.sqlite') or a 'postgresql://' URI"
        )
    if text.startswith(_POSTGRES_SCHEMES):
        return "postgres", text
    if text.startswith(_SQLITE_PREFIX):
        text = text[len(_SQLITE_PREFIX) :]
    elif "://" in text:
        scheme = text.split("://", 1)[0]
        raise InvalidInputError(
            f"unsupported checkpoint URI scheme {scheme!r}; use a SQLite file path, "
            "'sqlite:///path', or a 'postgresql://user:pass@host:5432/db' URI"
        )
    return "sqlite", text


def _sqlite_path(path: str) -> str:
    if path != _MEMORY:
        Path(path).expanduser().parent.mkdir(parents=True, exist_ok=True)
        return str(Path(path).expanduser())
    return path


def _postgres_module(name: str) -> Any:
    try:
        return import_module(name)
    except ImportError as e:
        raise MissingDependencyError(
            "a postgresql:// checkpoint needs langgraph-checkpoint-postgres and psycopg; "
            "install them with `pip install 'lamina[postgres]'`"
        ) from e


@contextmanager
def sqlite_checkpointer(path: str | os.PathLike[str]) -> Iterator[SqliteSaver]:
    """A ``SqliteSaver`` on the file at ``path`` (created with its folder if missing)."""
    with SqliteSaver.from_conn_string(_sqlite_path(os.fspath(path))) as saver:
        saver.setup()
        yield _with_state_types(saver)


@contextmanager
def postgres_checkpointer(uri: str) -> Iterator[BaseCheckpointSaver[Any]]:
    """A ``PostgresSaver`` on ``uri``; its tables are created on first use."""
    module = _postgres_module("langgraph.checkpoint.postgres")
    with module.PostgresSaver.from_conn_string(uri) as saver:
        saver.setup()
        yield _with_state_types(saver)


@contextmanager
def open_checkpointer(target: str | os.PathLike[str]) -> Iterator[BaseCheckpointSaver[Any]]:
    """Open the checkpointer ``target`` names: a SQLite path or a Postgres URI.

    Raises:
        InvalidInputError: if ``target`` is neither.
        MissingDependencyError: for a Postgres URI without the ``postgres`` extra.
    """
    backend, location = resolve_target(target)
    opened = postgres_checkpointer if backend == "postgres" else sqlite_checkpointer
    with opened(location) as saver:
        yield saver


@asynccontextmanager
async def aopen_checkpointer(
    target: str | os.PathLike[str],
) -> AsyncIterator[BaseCheckpointSaver[Any]]:
    """Async twin of :func:`open_checkpointer` (``AsyncSqliteSaver`` / ``AsyncPostgresSaver``)."""
    backend, location = resolve_target(target)
    if backend == "postgres":
        module = _postgres_module("langgraph.checkpoint.postgres.aio")
        async with module.AsyncPostgresSaver.from_conn_string(location) as saver:
            await saver.setup()
            yield _with_state_types(saver)
    else:
        async with AsyncSqliteSaver.from_conn_string(_sqlite_path(location)) as sqlite_saver:
            await sqlite_saver.setup()
            yield _with_state_types(sqlite_saver)


__all__ = [
    "aopen_checkpointer",
    "open_checkpointer",
    "postgres_checkpointer",
    "resolve_target",
    "sqlite_checkpointer",
    "state_serializer",
]
