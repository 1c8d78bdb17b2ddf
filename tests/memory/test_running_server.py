"""A local model already served on ``local_port`` is used, not loaded a second time.

``lamina serve-llm --port N`` answers ``GET /v1/models`` with the model's name; a Memory
(and so ``lamina ask``) configured with ``local_port=N`` for that model talks to it. A
port that serves another model, or nothing, is not used: the model is loaded as before.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from lamina import MemoryConfig
from lamina.memory.models import ChatModelProvider, local_model_name, running_local_server
from lamina.testing import FakeLocalServer

QWEN = "qwen2.5-coder-1.5b-instruct-q4_k_m"


def serve(model_id: str) -> Iterator[int]:
    class Models(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (the http.server hook)
            body = json.dumps({"object": "list", "data": [{"id": model_id}]}).encode()
            code = 200 if self.path == "/v1/models" else 404
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Models)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


@pytest.fixture
def qwen_port() -> Iterator[int]:
    yield from serve(QWEN)


@pytest.fixture
def other_port() -> Iterator[int]:
    yield from serve("some-other-model")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def provider(config: MemoryConfig) -> tuple[ChatModelProvider, list[FakeLocalServer]]:
    built: list[FakeLocalServer] = []

    def factory(c: MemoryConfig) -> FakeLocalServer:
        built.append(FakeLocalServer(config=c))
        return built[-1]

    return ChatModelProvider(config, local_server_factory=factory), built


def test_the_running_server_of_the_configured_model_is_used(qwen_port: int) -> None:
    config = MemoryConfig(local_port=qwen_port)
    chat, built = provider(config)
    model = chat.get()
    assert chat.source == "running" and built == []
    assert model.openai_api_base == f"http://127.0.0.1:{qwen_port}/v1"  # type: ignore[attr-defined]
    assert model.model_name == QWEN  # type: ignore[attr-defined]


def test_a_server_of_another_model_is_not_used(other_port: int) -> None:
    chat, built = provider(MemoryConfig(local_port=other_port))
    chat.get()
    assert chat.source == "local" and len(built) == 1 and built[0].starts == 1


def test_a_port_nobody_serves_loads_the_model() -> None:
    chat, built = provider(MemoryConfig(local_port=free_port()))
    chat.get()
    assert chat.source == "local" and built[0].starts == 1


def test_without_a_configured_port_nothing_is_probed() -> None:
    assert running_local_server(MemoryConfig()) is None


def test_the_name_of_a_gguf_path_is_its_stem() -> None:
    assert local_model_name(MemoryConfig(local_model="/models/tiny-chat.Q4_0.gguf")) == (
        "tiny-chat.Q4_0"
    )
    assert local_model_name(MemoryConfig()) == QWEN
