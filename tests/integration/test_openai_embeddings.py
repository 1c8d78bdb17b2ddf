"""Any LangChain Embeddings can replace the offline model: OpenAIEmbeddings over HTTP.

A tiny OpenAI-compatible /v1/embeddings server on 127.0.0.1 stands in for a real
endpoint, so the test exercises the real client, HTTP and JSON path without a network.
"""

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from langchain_openai import OpenAIEmbeddings

from lamina.stores import ChromaMemoryStore
from lamina.testing import FakeEmbeddings

pytestmark = pytest.mark.integration
FAKE = FakeEmbeddings(dim=32)


class _Handler(BaseHTTPRequestHandler):
    requests: list[dict[str, object]] = []

    def do_POST(self) -> None:  # noqa: N802 (http.server API)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _Handler.requests.append(body)
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        data = [
            {"object": "embedding", "index": i, "embedding": FAKE.embed_query(str(t))}
            for i, t in enumerate(texts)
        ]
        payload = json.dumps(
            {
                "object": "list",
                "data": data,
                "model": body["model"],
                "usage": {"prompt_tokens": 1, "total_tokens": 1},
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def endpoint() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def test_store_runs_on_openai_compatible_embeddings(endpoint: str, make_turn) -> None:  # type: ignore[no-untyped-def]
    embeddings = OpenAIEmbeddings(
        model="test-embed",
        base_url=endpoint,
        api_key="not-needed",  # type: ignore[arg-type]
        check_embedding_ctx_length=False,
    )
    store = ChromaMemoryStore.ephemeral(embeddings=embeddings)
    ns = "user:erin"
    turns = [
        make_turn(ns, "Erin bought a red kayak", 0),
        make_turn(ns, "The weather was rainy all week", 1),
    ]
    store.add(ns, turns)
    hits = store.search("kayak", "raw", ns, k=2, mode="dense")
    assert hits[0].record.id == turns[0].id
    assert _Handler.requests and all(r["model"] == "test-embed" for r in _Handler.requests)
