"""A model that cannot be reached is an error that names it, never a silent refusal.

Real ``ChatOpenAI`` clients talk to a closed port, to a local HTTP server that answers
401, 404 or 5xx, and to one that never answers. ``answer``/``aanswer`` raise
:class:`ModelUnreachableError` naming the URL and the model; ``add`` keeps the raw turn,
logs at WARNING and says so in ``AddResult``. Malformed output still degrades quietly
into a refusal, logged at WARNING.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from langchain_openai import ChatOpenAI

from lamina import Memory, MemoryConfig
from lamina.errors import ModelUnreachableError
from lamina.stores import ChromaMemoryStore
from lamina.testing import FakeEmbeddings, SchemaChatModel

NS = "user:alice"
T0 = datetime(2024, 5, 8, 18, 20, tzinfo=UTC)
QUESTION = "What is my dog called?"


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class _Status(BaseHTTPRequestHandler):
    status = 500
    delay = 0.0

    def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
        time.sleep(self.delay)
        body = json.dumps({"error": {"message": f"status {self.status}"}}).encode()
        self.send_response(self.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def http_status() -> Iterator[Callable[..., str]]:
    servers: list[ThreadingHTTPServer] = []

    def start(status: int, delay: float = 0.0) -> str:
        handler = type("Handler", (_Status,), {"status": status, "delay": delay})
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/v1"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def memory_for(model: object, **config: object) -> Memory:
    store = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    return Memory(store=store, chat_model=model, config=MemoryConfig(**config))  # type: ignore[arg-type]


def remember_a_turn(memory: Memory) -> None:
    result = memory.add("I adopted a greyhound called Biscuit", namespace=NS, at=T0)
    assert len(result.new_raw_ids) == 1


def test_a_closed_port_raises_naming_the_url_and_the_model() -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    memory = memory_for(ChatOpenAI(base_url=url, api_key="not-needed", model="qwen2.5"))
    remember_a_turn(memory)  # one turn closes no episode: no LLM call, nothing fails
    started = time.monotonic()
    with pytest.raises(ModelUnreachableError) as info:
        memory.answer(QUESTION, namespace=NS)
    seconds = time.monotonic() - started
    assert seconds < 60  # generous: benchmarks/unreachable_model.py measures the real figure
    message = str(info.value)
    assert message.startswith(f"could not reach the chat model 'qwen2.5' at {url}")
    assert "lamina serve-llm" in message and "OPENAI_BASE_URL" in message
    assert (info.value.url, info.value.model) == (url, "qwen2.5")


def test_aanswer_raises_too() -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    model = ChatOpenAI(base_url=url, api_key="x", model="m", max_retries=0)
    memory = memory_for(model)
    with pytest.raises(ModelUnreachableError, match=url):
        asyncio.run(memory.aanswer(QUESTION, namespace=NS))


@pytest.mark.parametrize("status", [401, 403, 404, 500, 502, 503])
def test_http_errors_that_no_reask_can_fix_raise(http_status, status: int) -> None:  # type: ignore[no-untyped-def]
    url = http_status(status)
    memory = memory_for(ChatOpenAI(base_url=url, api_key="x", model="m", max_retries=0))
    with pytest.raises(ModelUnreachableError, match=f"HTTP|{status}") as info:
        memory.answer(QUESTION, namespace=NS)
    assert url in str(info.value) and str(status) in str(info.value)


def test_a_server_that_never_answers_times_out_and_raises(http_status) -> None:  # type: ignore[no-untyped-def]
    url = http_status(200, delay=5.0)
    model = ChatOpenAI(base_url=url, api_key="x", model="m", max_retries=0, timeout=0.5)
    with pytest.raises(ModelUnreachableError, match="Timeout|timed out"):
        memory_for(model).answer(QUESTION, namespace=NS)


def test_add_keeps_the_turn_reports_and_logs_an_unreachable_model(
    caplog: pytest.LogCaptureFixture,
) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    model = ChatOpenAI(base_url=url, api_key="x", model="qwen2.5", max_retries=0)
    memory = memory_for(model, context={"trigger_policy": "session"})
    with caplog.at_level("WARNING", logger="lamina"):
        result = memory.add("we baked bread", namespace=NS, at=T0, session_closed=True)
    assert len(result.new_raw_ids) == 1
    [stored] = memory.store.get("raw", NS)
    assert stored.text == "we baked bread"
    assert result.failures and result.llm_calls and all(c.unreachable for c in result.llm_calls)
    assert result.model_error and url in result.model_error
    facade = [r for r in caplog.records if r.name == "lamina.memory"]
    assert facade and facade[0].levelname == "WARNING"
    assert "consolidation skipped" in facade[0].getMessage() and url in facade[0].getMessage()


def test_malformed_output_degrades_to_a_refusal_logged_at_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    model = SchemaChatModel()
    for title in ("DraftFirst", "QueryRewrite", "AnswerDraft"):
        model.script(title, *["not json at all"] * 9)
    memory = memory_for(model)
    remember_a_turn(memory)
    with caplog.at_level("WARNING", logger="lamina"):
        result = memory.answer(QUESTION, namespace=NS)
    assert result.refused and result.failures
    assert not any(c.unreachable for c in result.llm_calls)
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert any("malformed output" in w for w in warnings)
    assert any("answer(namespace='user:alice')" in w for w in warnings)


def test_one_unreachable_call_among_answered_ones_is_no_error() -> None:
    model = SchemaChatModel()
    model.script("DraftFirst", ConnectionRefusedError(111, "refused"))
    memory = memory_for(model)
    remember_a_turn(memory)
    result = memory.answer(QUESTION, namespace=NS)  # the other calls got through
    assert any(c.unreachable for c in result.llm_calls)
    assert not all(c.unreachable for c in result.llm_calls)
