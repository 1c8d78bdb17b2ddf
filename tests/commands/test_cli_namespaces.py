"""``lamina namespaces`` and the note on an empty or mistyped namespace."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from lamina import Memory, MemoryConfig
from lamina.cli import main
from lamina.testing import FakeEmbeddings, SchemaChatModel

Run = Callable[..., tuple[int, str, str]]


@pytest.fixture
def run(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Run:
    """Run ``lamina ARGS --data-dir DIR``; return (status, stdout, stderr)."""
    model = SchemaChatModel()

    def factory(config: MemoryConfig) -> Memory:
        return Memory(config=config, embeddings=FakeEmbeddings(), chat_model=model)

    def invoke(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
        if stdin is not None:
            monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
        status = main([*args, "--data-dir", str(tmp_path / "data")], memory_factory=factory)
        out, err = capsys.readouterr()
        return status, out, err

    return invoke


def remember(run: Run, namespace: str, *texts: str) -> None:
    for text in texts:
        status, _, err = run("add", text, "-n", namespace, "--speaker", "Alice", "--no-infer")
        assert status == 0, err


def test_namespaces_lists_each_with_counts_per_granularity(run: Run) -> None:
    remember(run, "user:alice", "I adopted a greyhound called Biscuit", "She likes the park")
    remember(run, "user:bob", "My cat is called Tom")
    status, out, _ = run("namespaces")
    assert status == 0
    lines = out.strip().splitlines()
    assert lines[0].split() == ["NAMESPACE", "RAW", "FACT", "EPISODE", "SCENE"]
    assert lines[1].split() == ["user:alice", "2", "0", "0", "0"]
    assert lines[2].split() == ["user:bob", "1", "0", "0", "0"]
    status, out, _ = run("namespaces", "--json")
    assert json.loads(out) == {"user:alice": {"raw": 2}, "user:bob": {"raw": 1}}


def test_namespaces_on_an_empty_store_says_so(run: Run) -> None:
    status, out, _ = run("namespaces")
    assert status == 0 and "no namespace yet" in out
    assert json.loads(run("namespaces", "--json")[1]) == {}


def test_ask_on_a_mistyped_namespace_says_it_is_empty_and_names_the_nearest(run: Run) -> None:
    remember(run, "user:alice", "I adopted a greyhound called Biscuit")
    remember(run, "user:bob", "My cat is called Tom")
    status, _, err = run("ask", "What is my dog called?", "-n", "user:alcie")
    assert status == 0
    assert "namespace 'user:alcie' holds no memories; did you mean: 'user:alice'" in err


def test_search_on_an_unknown_namespace_lists_the_known_ones(run: Run) -> None:
    remember(run, "user:alice", "I adopted a greyhound called Biscuit")
    status, out, err = run("search", "greyhound", "-n", "team:zeta")
    assert status == 0 and "no memories match" in out
    assert "holds no memories; known namespaces: 'user:alice'" in err


def test_no_note_when_the_namespace_holds_memories(run: Run) -> None:
    remember(run, "user:alice", "I adopted a greyhound called Biscuit")
    status, _, err = run("search", "submarine", "-n", "user:alice")
    assert status == 0 and "holds no memories" not in err
    assert "holds no memories" not in run("ask", "Who am I?", "-n", "user:alice")[2]


def test_a_store_with_nothing_at_all_says_so(run: Run) -> None:
    _, _, err = run("search", "greyhound", "-n", "user:alice")
    assert "holds no memories, and neither does any other" in err


def test_memory_namespaces_counts_pending_turns() -> None:
    from lamina.stores import ChromaMemoryStore

    store = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    memory = Memory(store=store, chat_model=SchemaChatModel())
    memory.add("note one", namespace="user:alice", infer=False)
    assert memory.namespaces() == {"user:alice": {"raw": 1}}
    from lamina.memory.background import queue_turns
    from lamina.memory.inputs import to_turns

    ctx = memory.config.memory_context("user:bob")
    queue_turns(
        store,
        ctx,
        to_turns("note two", namespace="user:bob"),
        session_closed=False,
        instructions=None,
    )
    assert memory.namespaces()["user:bob"] == {"raw": 1, "pending": 1}


def test_default_ttl_sets_shows_and_clears_a_namespace_default(run: Run, tmp_path: Path) -> None:
    status, out, _ = run("default-ttl", "-n", "user:alice")
    assert status == 0 and "never expire" in out
    status, out, _ = run("default-ttl", "-n", "user:alice", "30d")
    assert status == 0 and "2592000 s (30 days)" in out
    remember(run, "user:alice", "My badge number is 4471")
    remember(run, "user:bob", "My cat is called Tom")
    store = Memory(
        config=MemoryConfig(data_dir=tmp_path / "data"), embeddings=FakeEmbeddings()
    ).store
    (badge,) = store.get("raw", "user:alice")
    (cat,) = store.get("raw", "user:bob")
    assert badge.expires_at is not None and cat.expires_at is None
    assert "90 s" in run("default-ttl", "-n", "user:bob", "1.5m")[1]
    status, out, _ = run("default-ttl", "-n", "user:alice", "--clear")
    assert status == 0 and "never expire" in out
    assert "never expire" in run("default-ttl", "-n", "user:alice")[1]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("0",), "ttl must be positive"),
        (("soon",), "cannot read the duration 'soon'"),
        (("30d", "--clear"), "not both"),
        # were an OverflowError traceback
        (("99999999999999d",), "longer than 365000 days"),
        (("1" + "0" * 400,), "longer than 365000 days"),
    ],
)
def test_default_ttl_refuses_a_bad_duration_and_keeps_the_default(
    run: Run, args: tuple[str, ...], message: str
) -> None:
    assert run("default-ttl", "-n", "user:alice", "1h")[0] == 0
    status, _, err = run("default-ttl", "-n", "user:alice", *args)
    assert status == 2 and message in err
    assert "3600 s" in run("default-ttl", "-n", "user:alice")[1]
