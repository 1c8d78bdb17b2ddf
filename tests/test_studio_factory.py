"""The Studio graph factory: configuration from the environment, an uncompiled builder."""

import asyncio
from pathlib import Path

import pytest
from langgraph.graph import StateGraph

from memstrata.errors import InvalidInputError
from memstrata.graphs.studio import make_graph, studio_config


def test_make_graph_builds_the_memory_graph_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("OPENAI_MODEL", "some-model")
    monkeypatch.setenv("MEMSTRATA_DATA_DIR", str(tmp_path / "data"))
    graph = asyncio.run(make_graph())
    assert isinstance(graph, StateGraph)  # the API server compiles it with its checkpointer
    assert {"ingest", "recall"} <= set(graph.nodes)
    assert (tmp_path / "data" / "chroma").is_dir()  # the persistent store it opened
    compiled = graph.compile()
    assert compiled.checkpointer is None
    nodes = set(compiled.get_graph(xray=True).nodes)
    assert any(n.endswith("constructor") for n in nodes)


def test_the_endpoint_and_model_come_from_openai_variables(tmp_path: Path) -> None:
    env = {
        "OPENAI_BASE_URL": "http://127.0.0.1:8085/v1",
        "OPENAI_MODEL": "qwen",
        "MEMSTRATA_DATA_DIR": str(tmp_path),
        "MEMSTRATA_CHROMA_MODE": "http",
        "MEMSTRATA_CHROMA_PORT": "8123",
    }
    config = studio_config(env)
    assert config.openai_base_url == "http://127.0.0.1:8085/v1" and config.model == "qwen"
    assert (config.chroma_mode, config.chroma_port) == ("http", 8123)


def test_no_endpoint_says_how_to_serve_the_local_model(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match="memstrata serve-llm"):
        studio_config({"MEMSTRATA_DATA_DIR": str(tmp_path)})


def test_an_ephemeral_store_is_refused(tmp_path: Path) -> None:
    env = {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "MEMSTRATA_CHROMA_MODE": "ephemeral"}
    with pytest.raises(InvalidInputError, match="empty store"):
        studio_config(env)
