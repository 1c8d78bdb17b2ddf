"""The docs' examples that need a server run, page after page, in one namespace like a notebook.

These are the Python blocks marked ``<!-- runnable: integration -->`` (the offline ones,
marked ``<!-- runnable -->``, run in tests/test_docs.py). They run as written, in the
order of :data:`PAGES`, against these stand-ins on 127.0.0.1:

* ``http://127.0.0.1:8080/v1`` (the chat endpoint ``lamina serve-llm`` starts): a
  scripted OpenAI-compatible chat server that answers every structured request with a
  minimal valid object of the requested JSON schema (so answers are refusals);
* the offline model (``Memory()``, ``LocalLLMServer(assemble_qwen_gguf())``): a fake
  local server whose chat model talks to that scripted endpoint (the real llama.cpp
  server is covered by ``test_local_llm.py`` and ``test_studio.py``);
* ``http://127.0.0.1:8081/v1`` (an embeddings endpoint): a small OpenAI-compatible
  ``/v1/embeddings`` server;
* Chroma at ``127.0.0.1:8000``: a ``chroma run`` server; ``http://127.0.0.1:2024``:
  ``langgraph dev`` serving ``langgraph.json`` with the SmolLM2 test model.

Addresses are replaced by the ports these services got; nothing else in a block changes.
The Postgres examples fall back to SQLite when ``CHECKPOINT_URI`` is unset, as
the deployment guide says; no Postgres server is started.
"""

from __future__ import annotations

import json
import re
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType, TracebackType
from typing import Any

import pytest
from langchain_openai import ChatOpenAI

import lamina.llm
import lamina.memory.models
from lamina.testing import FakeEmbeddings, minimal_instance

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
PAGES = [
    "docs/getting-started.md",  # Memory, the ChatOpenAI `model`, Memory.from_env
    "docs/guides/graphs.md",  # `store`, `graph`, `turn`, `ctx`, `cfg`
    "docs/guides/studio.md",
    "docs/guides/agents.md",  # `memory`
    "docs/guides/langgraph-store.md",
    "docs/guides/deployment.md",
    "docs/guides/embeddings.md",
]
"""The pages with integration blocks, in the order their blocks run (later blocks use
names that earlier ones defined)."""
_BLOCK = re.compile(r"^<!-- runnable: integration -->\n```python\n(.*?)^```", re.S | re.M)


def python_blocks(page: str) -> list[tuple[str, str]]:
    """``(page:line, code)`` of every integration block of one page, in order."""
    text = (ROOT / page).read_text(encoding="utf-8")
    return [
        (f"{page}:{text.count(chr(10), 0, m.start()) + 2}", m.group(1))
        for m in _BLOCK.finditer(text)
    ]


BLOCKS = [block for page in PAGES for block in python_blocks(page)]


def _reply(handler: BaseHTTPRequestHandler, payload: dict[str, Any]) -> None:
    data = json.dumps(payload).encode()
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


class _Chat(BaseHTTPRequestHandler):
    """``/v1/chat/completions``: a minimal instance of the requested schema, or "ok"."""

    def do_POST(self) -> None:  # noqa: N802 (http.server API)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        schema = (body.get("response_format") or {}).get("json_schema", {}).get("schema")
        text = json.dumps(minimal_instance(schema)) if schema else "ok"
        prompt = sum(len(str(m.get("content", "")).split()) for m in body["messages"])
        message = {"role": "assistant", "content": text}
        choice = {"index": 0, "message": message, "finish_reason": "stop"}
        usage = {"prompt_tokens": prompt, "completion_tokens": 3, "total_tokens": prompt + 3}
        _reply(
            self,
            {
                "id": "chatcmpl-readme",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", "scripted"),
                "choices": [choice],
                "usage": usage,
            },
        )

    def log_message(self, *args: object) -> None:
        pass


class _Embeddings(BaseHTTPRequestHandler):
    vectors = FakeEmbeddings(dim=32)

    def do_POST(self) -> None:  # noqa: N802 (http.server API)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        data = [
            {"object": "embedding", "index": i, "embedding": self.vectors.embed_query(str(t))}
            for i, t in enumerate(texts)
        ]
        usage = {"prompt_tokens": 1, "total_tokens": 1}
        _reply(self, {"object": "list", "data": data, "model": body["model"], "usage": usage})

    def log_message(self, *args: object) -> None:
        pass


def _serve(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def embeddings_endpoint() -> Iterator[str]:
    yield from _serve(_Embeddings)


@pytest.fixture(scope="module")
def chat_endpoint() -> Iterator[str]:
    yield from _serve(_Chat)


class FakeLocalServer:
    """Stands in for ``LocalLLMServer``: same calls, its model is the scripted endpoint."""

    endpoint = ""

    def __init__(self, model_path: object = None, **options: object) -> None:
        self.model_path = model_path

    def start(self) -> FakeLocalServer:
        return self

    def stop(self) -> None:
        pass

    def __enter__(self) -> FakeLocalServer:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def chat_model(self, **kwargs: Any) -> ChatOpenAI:
        options: dict[str, Any] = {"base_url": self.endpoint, "api_key": "x", "model": "local"}
        return ChatOpenAI(**{**options, **kwargs})


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("doc_examples")


@pytest.fixture(scope="module")
def namespace() -> Iterator[dict[str, Any]]:
    module = ModuleType("doc_examples")  # a real module, so a block's dataclasses work
    sys.modules["doc_examples"] = module
    yield module.__dict__
    del sys.modules["doc_examples"]


@pytest.fixture(scope="module")
def replacements(
    chat_endpoint: str,
    embeddings_endpoint: str,
    chroma_server: tuple[str, int],
    studio: tuple[str, Path],
) -> dict[str, str]:
    port = str(chroma_server[1])
    return {
        "http://127.0.0.1:8080/v1": chat_endpoint,
        "http://127.0.0.1:8081/v1": embeddings_endpoint,
        '"127.0.0.1", 8000': f'"127.0.0.1", {port}',
        'store="http://127.0.0.1:8000"': f'store="http://127.0.0.1:{port}"',
        "http://127.0.0.1:2024": studio[0],
    }


def test_every_page_with_integration_blocks_is_in_pages() -> None:
    pages = {
        page
        for page in (str(path.relative_to(ROOT)) for path in (ROOT / "docs").rglob("*.md"))
        if python_blocks(page)
    }
    assert pages == set(PAGES)
    assert len(BLOCKS) >= 10 and all(code.strip() for _, code in BLOCKS)


@pytest.mark.parametrize(("where", "code"), BLOCKS, ids=[where for where, _ in BLOCKS])
def test_doc_block_runs(
    where: str,
    code: str,
    namespace: dict[str, Any],
    replacements: dict[str, str],
    workdir: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(workdir)
    monkeypatch.setenv("HOME", str(workdir / "home"))  # ~/.local/share/lamina lives here
    monkeypatch.setattr(FakeLocalServer, "endpoint", replacements["http://127.0.0.1:8080/v1"])
    monkeypatch.setattr(lamina.memory.models, "default_local_server", FakeLocalServer)
    monkeypatch.setattr(lamina.llm, "LocalLLMServer", FakeLocalServer)
    monkeypatch.setattr(lamina.llm, "assemble_qwen_gguf", lambda dest_dir=None: "model.gguf")
    for address, actual in replacements.items():
        code = code.replace(address, actual)
    exec(compile(code, where, "exec"), namespace)  # noqa: S102 (the docs are ours)
