"""``memstrata demo`` in answering mode, with a scripted model in place of the local one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memstrata import Memory, MemoryConfig
from memstrata.cli import main
from memstrata.testing import FakeEmbeddings, SchemaChatModel


def run(argv: list[str], model: SchemaChatModel) -> int:
    def factory(config: MemoryConfig) -> Memory:
        return Memory(config=config, embeddings=FakeEmbeddings(), chat_model=model)

    return main(argv, memory_factory=factory)


def test_demo_remembers_each_session_then_answers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = SchemaChatModel()
    model.script(
        "JudgedAnswer",
        json.dumps({"sufficient": True, "answer": "Biscuit", "cited": []}),
    )
    status = run(["demo", "--data-dir", str(tmp_path), "--questions", "1"], model)
    out = capsys.readouterr().out
    assert status == 0
    # each of the three sessions was stored and consolidated (session policy)
    for session in ("session_1", "session_2", "session_3"):
        line = next(x for x in out.splitlines() if x.startswith(f"{session}:"))
        assert "turns stored" in line and "episode" in line
    assert "? What is the name of Maya's dog?" in out
    assert "Biscuit" in out.split("? What is the name of Maya's dog?")[1]
    assert (tmp_path / "chroma").is_dir()  # the memory persisted where asked
    assert (tmp_path / "checkpoints.sqlite").exists()  # default checkpointer


def test_demo_rejects_a_non_positive_question_count(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = run(["demo", "--data-dir", str(tmp_path), "--questions", "0"], SchemaChatModel())
    assert status == 2
    assert "--questions must be a positive integer" in capsys.readouterr().err


def test_demo_gives_the_local_model_every_core_unless_told(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[int | None] = []

    def factory(config: MemoryConfig) -> Memory:
        seen.append(config.local_threads)
        return Memory(config=config, embeddings=FakeEmbeddings(), chat_model=SchemaChatModel())

    monkeypatch.setattr("os.cpu_count", lambda: 6)
    assert (
        main(["demo", "--data-dir", str(tmp_path), "--questions", "1"], memory_factory=factory) == 0
    )
    argv = ["demo", "--data-dir", str(tmp_path), "--questions", "1", "--local-threads", "1"]
    assert main(argv, memory_factory=factory) == 0
    assert seen == [6, 1]
