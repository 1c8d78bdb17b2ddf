"""The Memory facade's offline default with a real local model (SmolLM2) served in-process.

No chat model is injected: the facade resolves the local model from its config, starts
the llama.cpp server on the first add, reuses it for answer, and stops it on close.
SmolLM2-135M invents facts, so only what must hold with any model is checked.
"""

import socket
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from lamina import Memory, MemoryConfig
from lamina.errors import LocalModelError
from lamina.llm import smollm2_gguf_path
from lamina.memory.models import LocalServer, default_local_server
from lamina.testing import FakeEmbeddings

pytestmark = pytest.mark.integration
NS = "user:maya"
T0 = datetime(2024, 2, 3, 18, 20, tzinfo=UTC)


def small_server(config: MemoryConfig) -> LocalServer:
    """The offline model's own server, with a 4,096-token window and 128-token replies."""
    server = default_local_server(config, n_ctx=4096)
    chat_model = server.chat_model

    def capped(**options: Any) -> Any:
        return chat_model(**{**options, "max_tokens": 128})

    server.chat_model = capped  # type: ignore[method-assign]
    return server


def test_local_model_lifecycle_through_the_facade() -> None:
    try:
        smollm2_gguf_path()
    except LocalModelError as e:
        pytest.skip(f"the SmolLM2 test model is not installed: {e}")
    config = MemoryConfig(
        store="memory",
        local_model="smollm2",
        context={"trigger_policy": "session"},
    )
    memory = Memory(config=config, embeddings=FakeEmbeddings(), local_server_factory=small_server)
    assert memory.chat_model_source == "local" and memory.local_server is None
    assert memory.search("greyhound", namespace=NS) == []
    assert memory.local_server is None  # search never starts the model

    added = memory.add(
        [
            {"role": "user", "content": "I adopted a greyhound called Biscuit yesterday!"},
            {"role": "assistant", "content": "Congratulations! How is she settling in?"},
        ],
        namespace=NS,
        at=T0,
        session_closed=True,
    )
    server = memory.local_server
    assert server is not None and server.running
    assert len(added.new_raw_ids) == 2 and memory.store.count("raw", NS) == 2
    assert added.llm_calls and all((c.prompt_tokens or 0) > 0 for c in added.llm_calls)
    hits = memory.search("greyhound Biscuit", namespace=NS, granularities=["raw"])
    assert hits and "Biscuit" in hits[0].text

    answer = memory.answer("What is my dog called?", namespace=NS, as_of=T0 + timedelta(days=1))
    assert memory.local_server is server  # reused, not restarted
    assert isinstance(answer.answer, str) and answer.answer and answer.rounds >= 1

    port = server.port
    memory.close()
    assert not server.running
    with socket.socket() as s:  # nothing listens on the port any more
        s.settimeout(5)
        assert s.connect_ex(("127.0.0.1", port)) != 0
