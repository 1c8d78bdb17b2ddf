"""Folders under lamina's old name (OLD_NAME) are found, never read and never moved.

With the default data folder, a command that finds ``~/.local/share/<old name>`` (or
``$XDG_DATA_HOME/<old name>``) and no lamina folder stops before creating anything and
says where the old folder is and how to move it. A model file in the old cache
(``~/.cache/<old name>/models``) is pointed out with the command that moves it. Each test
runs with a temporary ``HOME`` and its own XDG variables.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from lamina import Memory, MemoryConfig
from lamina.cli import main
from lamina.config import default_data_dir, old_data_folder
from lamina.core.former_name import OLD_NAME, former_name
from lamina.llm.gguf import QWEN_GGUF_NAME, default_model_dir, old_model_files
from lamina.testing import FakeEmbeddings, SchemaChatModel

OLD = OLD_NAME or ""
"""The old name, as the shipped changelog gives it."""
Run = Callable[..., tuple[int, str, str]]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    return home


@pytest.fixture
def built() -> list[MemoryConfig]:
    return []


@pytest.fixture
def run(built: list[MemoryConfig], capsys: pytest.CaptureFixture[str]) -> Run:
    def factory(config: MemoryConfig) -> Memory:
        built.append(config)
        return Memory(config=config, embeddings=FakeEmbeddings(), chat_model=SchemaChatModel())

    def invoke(*args: str) -> tuple[int, str, str]:
        status = main(list(args), memory_factory=factory)
        return status, *capsys.readouterr()

    return invoke


def old_folder(base: Path) -> Path:
    """An old data folder with a file in it, as lamina left it under its old name."""
    folder = base / OLD
    (folder / "chroma").mkdir(parents=True)
    (folder / "chroma" / "old-index.bin").write_text("old memories")
    return folder


def snapshot(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): p.read_text() for p in folder.rglob("*") if p.is_file()}


def test_the_first_run_says_where_the_old_data_folder_is_and_moves_nothing(
    home: Path, run: Run, built: list[MemoryConfig]
) -> None:
    old = old_folder(home / ".local" / "share")
    before = snapshot(old)
    new = home / ".local" / "share" / "lamina"
    assert default_data_dir() == new and old_data_folder() == old

    status, out, err = run("search", "dog")
    assert status == 2 and out == ""
    assert err.startswith("lamina: error: found a data folder under lamina's old name")
    assert f"{OLD}: {old}." in err and f"keeps its data in {new}" in err
    assert f"mv {old} {new}" in err and f"--data-dir {old}" in err and f"mkdir -p {new}" in err
    assert snapshot(old) == before and not new.exists() and built == []  # nothing moved

    # once moved as the message says, the memories are lamina's
    old.rename(new)
    status, out, err = run("search", "dog")
    assert status == 0 and "found a data folder" not in err
    assert built[-1].data_dir == new


def test_the_old_folder_under_xdg_data_home_is_found(
    home: Path, tmp_path: Path, run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    xdg = tmp_path / "xdg-data"
    monkeypatch.setenv("XDG_DATA_HOME", str(xdg))
    old = old_folder(xdg)
    status, _, err = run("inspect")
    assert status == 2
    assert f"{OLD}: {old}." in err and f"mv {old} {xdg / 'lamina'}" in err
    assert not (xdg / "lamina").exists()


def test_a_chosen_data_folder_or_an_existing_lamina_folder_goes_ahead(
    home: Path, tmp_path: Path, run: Run, built: list[MemoryConfig], monkeypatch: pytest.MonkeyPatch
) -> None:
    old = old_folder(home / ".local" / "share")
    status, _, err = run("search", "dog", "--data-dir", str(tmp_path / "mine"))
    assert status == 0 and OLD not in err
    monkeypatch.setenv("LAMINA_DATA_DIR", str(tmp_path / "env"))
    status, _, err = run("search", "dog")
    assert status == 0 and OLD not in err
    monkeypatch.delenv("LAMINA_DATA_DIR")
    (home / ".local" / "share" / "lamina").mkdir()  # the user chose to start afresh
    status, _, err = run("search", "dog")
    assert status == 0 and OLD not in err
    assert [c.data_dir.name for c in built] == ["mine", "env", "lamina"]
    assert snapshot(old) == {"chroma/old-index.bin": "old memories"}


def test_a_model_in_the_old_cache_is_pointed_out_and_not_moved(
    home: Path, run: Run, tmp_path: Path
) -> None:
    old_models = home / ".cache" / OLD / "models"
    old_models.mkdir(parents=True)
    old_model = old_models / QWEN_GGUF_NAME
    old_model.write_bytes(b"GGUF not really a model")
    assert default_model_dir() == home / ".cache" / "lamina" / "models"
    assert old_model_files() == [old_model]

    data = ["--data-dir", str(tmp_path / "data")]
    status, _, err = run("add", "hello", "--speaker", "Alice", "--no-infer", *data)
    assert status == 0 and OLD not in err  # no model is used: nothing to say
    status, _, err = run("add", "hello again", "--speaker", "Alice", *data)
    assert status == 0
    note = [line for line in err.splitlines() if OLD in line]
    assert len(note) == 1 and note[0].startswith("lamina: note: found the offline model")
    new = default_model_dir()
    assert f"mkdir -p {new} && mv {old_model} {new}/" in note[0]
    assert old_model.read_bytes() == b"GGUF not really a model" and not new.exists()
    status, _, err = run("add", "and again", "--speaker", "A", "--base-url", "http://x/v1", *data)
    assert OLD not in err  # an endpoint is configured: the local model is not used


def test_the_old_cache_under_xdg_cache_home_is_found(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    xdg = tmp_path / "xdg-cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(xdg))
    (xdg / OLD / "models").mkdir(parents=True)
    model = xdg / OLD / "models" / "other.gguf"
    model.write_bytes(b"GGUF")
    assert old_model_files() == [model]
    (xdg / "lamina" / "models").mkdir(parents=True)
    (xdg / "lamina" / "models" / "other.gguf").write_bytes(b"GGUF")
    assert old_model_files() == []  # the cache has it: nothing to say


def test_the_old_name_is_spelled_in_the_changelog_only() -> None:
    """Code, docs and configuration read the old name from CHANGELOG.md's rename line."""
    import subprocess

    import lamina

    assert OLD and OLD != "lamina"  # the shipped changelog names it
    root = Path(lamina.__file__).parent
    if not (root / ".git").exists():
        pytest.skip("not a git checkout")
    found = subprocess.run(
        ["git", "grep", "-il", OLD, "--", ":!*.json", ":!*.jsonl", ":!eval-results"],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    ).stdout.split()
    assert found == ["CHANGELOG.md"]


def test_without_a_rename_line_no_old_folder_is_looked_for(tmp_path: Path) -> None:
    log = tmp_path / "CHANGELOG.md"
    log.write_text("# Changelog\n\n- Renamed from `oldname` to `lamina` (was it).\n")
    assert former_name(log) == "oldname"
    log.write_text("# Changelog\n\n- A fix.\n")
    assert former_name(log) is None
    assert former_name(tmp_path / "missing.md") is None
