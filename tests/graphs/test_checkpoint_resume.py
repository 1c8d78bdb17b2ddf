"""Checkpointed workflow: SQLite by default, Postgres by URI, and crash/resume of a thread.

"Breaking a run mid-consolidation" here means what a killed worker or a Ctrl-C does: an
exception that is not an ``Exception`` (so neither the structured-output helper nor the
Constructor's per-job guard may swallow it) escapes from inside an LLM call. Ordinary
LLM errors degrade a run instead of breaking it; those are covered in
tests/agents/ingest/test_ingest.py.
"""

from __future__ import annotations

import asyncio
import logging
import re
import sqlite3
import sys
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatResult

from lamina.agents.ingest.nodes.episodes import episode_id
from lamina.errors import InvalidInputError, MissingDependencyError
from lamina.graphs import MemoryContext, build_memory_graph
from lamina.graphs.checkpoint import (
    aopen_checkpointer,
    open_checkpointer,
    resolve_target,
)
from lamina.records import RawTurn
from lamina.stores import ChromaMemoryStore
from lamina.testing import FakeEmbeddings, SchemaChatModel, requested_schema

NS = "user:alice"
T0 = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)
SESSIONS = {
    "s1": ["We hiked Mount Tam on Saturday", "The trail to the summit was muddy"],
    "s2": ["I started pottery classes downtown", "My first bowl came out lopsided"],
}


class SimulatedCrash(BaseException):
    """Stands for a killed process: not an ``Exception``, so no node may catch it."""


class CrashingChatModel(SchemaChatModel):
    """A :class:`SchemaChatModel` whose ``crash_on``-th call raises :class:`SimulatedCrash`."""

    crash_on: int = 0

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        if self.crash_on and len(self.calls) + 1 == self.crash_on:
            self.crash_on = 0  # one crash; the resumed run goes through
            title = str((requested_schema(messages) or {}).get("title", ""))
            self.calls.append((f"crash:{title}", list(messages)))
            raise SimulatedCrash(f"worker killed during a {title} call")
        return super()._generate(messages, stop, run_manager, **kwargs)


def turns() -> list[dict[str, Any]]:
    out = []
    for s, (session, texts) in enumerate(SESSIONS.items()):
        for i, text in enumerate(texts):
            when = T0 + timedelta(days=s, minutes=i)
            out.append(
                {"speaker": "Alice", "text": text, "occurred_at": when, "session_id": session}
            )
    return out


def _turn_lines(messages: list[BaseMessage]) -> list[str]:
    text = "\n".join(str(m.content) for m in messages)
    return [t for texts in SESSIONS.values() for t in texts if t in text]


def construction_reply(messages: list[BaseMessage]) -> str:
    """A narrative that repeats the turns it was given (so it embeds close to them), and
    one fact per turn."""
    lines = _turn_lines(messages)
    merge = "Known episode" in "\n".join(str(m.content) for m in messages)
    title = "MERGED" if merge else "Episode"
    notes = [f"F|Alice|{FACTS[t]}" for t in lines]
    return "\n".join([f"T|{title}", "S|Alice said: " + ". ".join(lines), *notes])


FACTS = {
    "We hiked Mount Tam on Saturday": "Alice hiked Mount Tam",
    "The trail to the summit was muddy": "The Mount Tam trail was muddy",
    "I started pottery classes downtown": "Alice takes pottery classes",
    "My first bowl came out lopsided": "Alice made a lopsided bowl",
}


def model(crash_on: int) -> CrashingChatModel:
    m = CrashingChatModel(crash_on=crash_on)
    m.script("ConstructionLines", *[construction_reply] * 10)
    return m


CTX = MemoryContext(namespace=NS, trigger_policy="session")


def assert_memory_is_whole(store: ChromaMemoryStore) -> None:
    """Every raw turn once; no derived record duplicated by id or text."""
    raw = [r for r in store.get("raw", NS) if isinstance(r, RawTurn)]
    assert sorted(r.text for r in raw) == sorted(t for ts in SESSIONS.values() for t in ts)
    assert store.count("raw", NS) == 4
    for granularity in ("episode", "fact", "scene"):
        records = store.get(granularity, NS)
        ids, texts = [r.id for r in records], [r.text for r in records]
        assert len(ids) == len(set(ids)), granularity
        assert not [t for t, n in Counter(texts).items() if n > 1], granularity
    episodes = {r.id: r for r in store.get("episode", NS)}
    expected = {episode_id(NS, [r.id for r in raw if r.session_id == s]): s for s in SESSIONS}
    assert set(episodes) == set(expected)  # one episode per session, stable ids
    for ep_id, episode in episodes.items():
        assert episode.title == "Episode", "an episode was merged into itself on resume"
        assert sorted(episode.source_ids) == sorted(  # type: ignore[attr-defined]
            r.id for r in raw if r.session_id == expected[ep_id]
        )
    for r in raw:  # consolidated exactly once, into its own session's episode
        assert len(r.consolidated_into) == 1 and episodes[r.consolidated_into[0]]
    for scene in store.get("scene", NS):
        assert len(scene.members) == len(set(scene.members))  # type: ignore[attr-defined]
    facts = sorted(f.text for f in store.get("fact", NS))
    assert facts == sorted(FACTS.values())


# The two LLM calls of this ingest: one construction call per session (episode and facts
# together; each new episode starts its own scene, which needs no LLM call).
@pytest.mark.parametrize(
    "crash_on",
    [
        1,  # nothing derived is written yet
        2,  # s1 is complete, s2 has not started
    ],
)
def test_a_crashed_ingest_resumes_on_the_same_thread(tmp_path: Path, crash_on: int) -> None:
    store = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    llm = model(crash_on)
    with open_checkpointer(tmp_path / "checkpoints.sqlite") as saver:
        graph = build_memory_graph(chat_model=llm, store=store).compile(checkpointer=saver)
        cfg = {"configurable": {"thread_id": "alice-1"}}
        with pytest.raises(SimulatedCrash):
            graph.invoke({"turns": turns(), "session_closed": True}, cfg, context=CTX)
        assert store.count("raw", NS) == 4  # the turns were stored before any LLM call
        broken = graph.get_state(cfg, subgraphs=True)
        assert broken.next == ("ingest",)
        (task,) = broken.tasks
        assert task.state is not None and task.state.next == ("constructor",)

        out = graph.invoke(None, cfg, context=CTX)

    assert out["failures"] == []
    # raw_write and the trigger were not re-run: their outputs come from the checkpoint
    assert len(out["new_raw_ids"]) == 4 and out["duplicate_raw_ids"] == []
    assert out["trigger"].consolidate and len(out["trigger"].jobs) == 2
    assert_memory_is_whole(store)
    created = [(w.granularity, w.action) for w in out["written"]]
    assert created.count(("episode", "created")) == 2 and ("episode", "merged") not in created
    assert {w.id for w in out["written"] if w.granularity == "fact"} == {
        f.id for f in store.get("fact", NS)
    }
    # only the interrupted node ran again: the trigger plans no LLM call, so every call
    # after the crash is the Constructor's
    titles = [t for t, _ in llm.calls]
    assert titles[crash_on - 1].startswith("crash:")
    assert set(titles[crash_on:]) <= {"ConstructionLines"}


def test_checkpoint_history_shows_the_resumed_constructor(tmp_path: Path) -> None:
    store = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    path = tmp_path / "checkpoints.sqlite"
    cfg = {"configurable": {"thread_id": "alice-2"}}
    with open_checkpointer(path) as saver:
        graph = build_memory_graph(chat_model=model(2), store=store).compile(checkpointer=saver)
        with pytest.raises(SimulatedCrash):
            graph.invoke({"turns": turns(), "session_closed": True}, cfg, context=CTX)
        (task,) = graph.get_state(cfg, subgraphs=True).tasks
        assert task.state is not None
        crashed = task.state.config["configurable"]
        ingest_ns, crash_id = crashed["checkpoint_ns"], crashed["checkpoint_id"]
        assert task.state.next == ("constructor",)

        graph.invoke(None, cfg, context=CTX)
        sub_cfg = {"configurable": {"thread_id": "alice-2", "checkpoint_ns": ingest_ns}}
        sub = {c.checkpoint["id"]: c for c in saver.list(sub_cfg)}
        history = list(graph.get_state_history(cfg))

    # the subgraph checkpointed raw_write and episode_trigger before the crash; the
    # resumed constructor's step follows the crash checkpoint directly
    crash = sub[crash_id]
    assert "trigger" in crash.checkpoint["updated_channels"]  # the trigger's step
    (resumed,) = [
        c
        for c in sub.values()
        if c.parent_config and c.parent_config["configurable"]["checkpoint_id"] == crash_id
    ]
    assert resumed.metadata["step"] == crash.metadata["step"] + 1
    assert {"written", "new_fact_ids"} <= set(resumed.checkpoint["updated_channels"])
    # the parent shows the resumed run finishing with the whole ingest output
    assert [s.next for s in history][:2] == [(), ("ingest",)]
    assert history[0].values["new_raw_ids"] and history[0].values["written"]
    with sqlite3.connect(path) as conn:  # a real SQLite file holding both namespaces
        namespaces = {row[0] for row in conn.execute("SELECT checkpoint_ns FROM checkpoints")}
    assert namespaces == {"", ingest_ns}


def test_checkpoints_load_without_unregistered_type_warnings(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    caplog.set_level(logging.WARNING)
    with open_checkpointer(tmp_path / "c.sqlite") as saver:
        graph = build_memory_graph(chat_model=model(2), store=store).compile(checkpointer=saver)
        cfg = {"configurable": {"thread_id": "t"}}
        with pytest.raises(SimulatedCrash):
            graph.invoke({"turns": turns(), "session_closed": True}, cfg, context=CTX)
        graph.invoke(None, cfg, context=CTX)
    assert not [r for r in caplog.records if "unregistered type" in r.getMessage()]


def test_a_thread_survives_reopening_the_checkpoint_file(tmp_path: Path) -> None:
    store = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    path = tmp_path / "nested" / "dir" / "c.sqlite"  # folders are created
    cfg = {"configurable": {"thread_id": "t"}}
    with open_checkpointer(path) as saver:
        graph = build_memory_graph(chat_model=model(2), store=store).compile(checkpointer=saver)
        with pytest.raises(SimulatedCrash):
            graph.invoke({"turns": turns(), "session_closed": True}, cfg, context=CTX)
    with open_checkpointer(f"sqlite:///{path}") as saver:  # a new process would do this
        graph = build_memory_graph(chat_model=model(0), store=store).compile(checkpointer=saver)
        out = graph.invoke(None, cfg, context=CTX)
    assert len(out["new_raw_ids"]) == 4
    assert_memory_is_whole(store)


def test_async_sqlite_checkpointer_runs_the_graph(tmp_path: Path) -> None:
    store = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    cfg = {"configurable": {"thread_id": "t"}}

    async def scenario() -> tuple[dict[str, Any], Any]:
        async with aopen_checkpointer(tmp_path / "a.sqlite") as saver:
            graph = build_memory_graph(chat_model=model(0), store=store).compile(checkpointer=saver)
            out = await graph.ainvoke({"turns": turns(), "session_closed": True}, cfg, context=CTX)
            return out, await graph.aget_state(cfg)

    out, state = asyncio.run(scenario())
    assert len(out["new_raw_ids"]) == 4 and state.next == ()
    assert_memory_is_whole(store)


# ----------------------------------------------------------------- the factory
@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("checkpoints.sqlite", ("sqlite", "checkpoints.sqlite")),
        ("sqlite:///var/lib/m.sqlite", ("sqlite", "var/lib/m.sqlite")),
        ("sqlite:////abs/m.sqlite", ("sqlite", "/abs/m.sqlite")),
        (":memory:", ("sqlite", ":memory:")),
        ("postgresql://u:p@db:5432/mem", ("postgres", "postgresql://u:p@db:5432/mem")),
        ("postgres://db/mem", ("postgres", "postgres://db/mem")),
    ],
)
def test_targets_are_classified(target: str, expected: tuple[str, str]) -> None:
    assert resolve_target(target) == expected


@pytest.mark.parametrize("bad", ["", "   ", "mysql://db/x", "redis://localhost"])
def test_bad_targets_say_what_to_use(bad: str) -> None:
    with pytest.raises(InvalidInputError, match="postgresql://"):
        resolve_target(bad)


def test_postgres_without_the_extra_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "langgraph.checkpoint.postgres", None)  # not installed
    with pytest.raises(MissingDependencyError, match=re.escape("lamina[postgres]")):
        with open_checkpointer("postgresql://u:p@127.0.0.1:1/mem"):
            pass


def test_postgres_uri_reaches_the_postgres_saver() -> None:
    psycopg = pytest.importorskip("psycopg", reason="the postgres extra is not installed")
    pytest.importorskip("langgraph.checkpoint.postgres")
    # nothing listens on port 1: the PostgresSaver's connection attempt is what fails
    with pytest.raises(psycopg.OperationalError):
        with open_checkpointer("postgresql://u:p@127.0.0.1:1/mem?connect_timeout=2"):
            pass
