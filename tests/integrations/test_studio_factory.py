"""The Studio graph factory: configuration from the environment, the chat model it starts
(the API model when one is configured, else the offline model, once per process), and an
uncompiled builder."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from langchain_openai import ChatOpenAI
from langgraph.graph import StateGraph

from lamina.config import MemoryConfig
from lamina.errors import InvalidInputError, LocalModelError
from lamina.integrations import studio
from lamina.integrations.studio import (
    StudioModels,
    build_studio_graph,
    make_graph,
    studio_config,
)
from lamina.testing import FakeLocalServer


class ServerFactory:
    """A fake ``local_server_factory`` that keeps every server it built."""

    def __init__(self) -> None:
        self.servers: list[FakeLocalServer] = []

    def __call__(self, config: MemoryConfig) -> FakeLocalServer:
        self.servers.append(FakeLocalServer(config=config))
        return self.servers[-1]


@pytest.fixture
def servers(monkeypatch: pytest.MonkeyPatch) -> ServerFactory:
    """The module's model holder, with fake offline servers (so nothing real loads)."""
    factory = ServerFactory()
    monkeypatch.setattr(studio, "STUDIO_MODELS", StudioModels(local_server_factory=factory))
    return factory


def test_make_graph_builds_the_memory_graph_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, servers: ServerFactory
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("OPENAI_MODEL", "some-model")
    monkeypatch.setenv("LAMINA_DATA_DIR", str(tmp_path / "data"))
    graph = asyncio.run(make_graph())
    assert isinstance(graph, StateGraph)  # the API server compiles it with its checkpointer
    assert {"ingest", "recall"} <= set(graph.nodes)
    assert (tmp_path / "data" / "chroma").is_dir()  # the persistent store it opened
    compiled = graph.compile()
    assert compiled.checkpointer is None
    nodes = set(compiled.get_graph(xray=True).nodes)
    assert any(n.endswith("constructor") for n in nodes)
    assert servers.servers == []  # an API model is configured: no offline model loads
    assert studio.STUDIO_MODELS.source == "endpoint"


def test_with_no_api_model_the_offline_model_loads_at_its_first_request_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, servers: ServerFactory
) -> None:
    """The graph loads without loading the model (Studio's graph load must be quick);
    the model loads when a run first calls it, once per process."""
    monkeypatch.setenv("LAMINA_DATA_DIR", str(tmp_path / "data"))
    first = asyncio.run(make_graph())
    second = asyncio.run(make_graph())  # the API server calls the factory for every run
    assert [(s.starts, s.stops) for s in servers.servers] == [(0, 0)]  # not loaded yet
    assert studio.STUDIO_MODELS.source == "local"
    assert servers.servers[0].config.local_model == "qwen"  # the default offline model
    first.compile().get_graph(xray=True)  # Studio drawing the graph loads nothing either
    assert servers.servers[0].starts == 0
    model = servers.servers[0].model
    for graph in (first, second):  # both graphs run on the one offline model
        calls = len(model.calls)
        out = graph.compile().invoke(
            {"question": "What is my dog called?"}, context={"namespace": "user:alice"}
        )
        assert "answer" in out
        assert len(model.calls) > calls
        assert [(s.starts, s.stops) for s in servers.servers] == [(1, 0)]


def test_a_model_that_cannot_load_fails_its_requests_not_the_graph_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    class BrokenServer(FakeLocalServer):
        def start(self) -> FakeLocalServer:
            self.starts += 1
            raise LocalModelError("llama.cpp could not load the model")

    broken: list[BrokenServer] = []

    def factory(config: MemoryConfig) -> BrokenServer:
        broken.append(BrokenServer(config=config))
        return broken[-1]

    monkeypatch.setattr(studio, "STUDIO_MODELS", StudioModels(local_server_factory=factory))
    monkeypatch.setenv("LAMINA_DATA_DIR", str(tmp_path / "data"))
    graph = asyncio.run(make_graph())  # loads: the model is not needed yet
    model = studio.STUDIO_MODELS.get(studio_config())
    with pytest.raises(LocalModelError, match="could not load"):
        model.invoke("hello")
    with pytest.raises(LocalModelError, match="could not load"):
        model.invoke("hello again")  # the first failure is kept: no second load
    assert broken[0].starts == 1
    out = graph.compile().invoke(
        {"question": "What is my dog called?"}, context={"namespace": "user:alice"}
    )
    assert any("could not load" in f.error for f in out["failures"])


def test_new_model_settings_stop_the_old_offline_model(
    tmp_path: Path, servers: ServerFactory
) -> None:
    models = StudioModels(local_server_factory=servers)
    one = MemoryConfig(data_dir=tmp_path, local_model="qwen")
    models.get(one).invoke("hello")  # the first request loads the model
    models.get(one).invoke("hello")
    models.get(MemoryConfig(data_dir=tmp_path, local_model="smollm2")).invoke("hello")
    assert [(s.starts, s.stops) for s in servers.servers] == [(1, 1), (1, 0)]
    assert servers.servers[1].config.local_model == "smollm2"
    models.close()
    models.close()  # safe twice
    assert [(s.starts, s.stops) for s in servers.servers] == [(1, 1), (1, 1)]
    models.get(MemoryConfig(data_dir=tmp_path, local_port=8099))
    models.close()  # a model never called was never loaded: nothing to stop
    assert [(s.starts, s.stops) for s in servers.servers][2] == (0, 0)


def test_an_api_key_alone_selects_the_api_model(tmp_path: Path, servers: ServerFactory) -> None:
    models = StudioModels(local_server_factory=servers)
    config = studio_config({"OPENAI_API_KEY": "sk-test", "LAMINA_DATA_DIR": str(tmp_path)})
    model = models.get(config)
    assert isinstance(model, ChatOpenAI) and servers.servers == []


def test_a_missing_offline_model_says_how_to_install_it(tmp_path: Path) -> None:
    def not_installed(config: MemoryConfig) -> FakeLocalServer:
        raise LocalModelError("22 of the 22 Qwen model parts are missing")

    models = StudioModels(local_server_factory=not_installed)
    config = studio_config({"LAMINA_DATA_DIR": str(tmp_path)})
    with pytest.raises(LocalModelError) as caught:
        build_studio_graph(config, models)
    message = str(caught.value)
    assert "lamina install-model qwen" in message and "OPENAI_API_KEY" in message
    assert "parts are missing" in message  # the cause is kept


def test_the_endpoint_and_model_come_from_openai_variables(tmp_path: Path) -> None:
    env = {
        "OPENAI_BASE_URL": "http://127.0.0.1:8085/v1",
        "OPENAI_MODEL": "qwen",
        "LAMINA_DATA_DIR": str(tmp_path),
        "LAMINA_STORE": "http://127.0.0.1:8123",
    }
    config = studio_config(env)
    assert config.openai_base_url == "http://127.0.0.1:8085/v1" and config.model == "qwen"
    assert (config.store_kind, config.chroma_server[1]) == ("http", 8123)


def test_an_ephemeral_store_is_refused(tmp_path: Path) -> None:
    env = {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "LAMINA_STORE": "memory"}
    with pytest.raises(InvalidInputError, match="empty store"):
        studio_config(env)


def test_the_load_benchmark_measures_a_graph_load_without_a_model(tmp_path: Path) -> None:
    """benchmarks/studio_load.py imports the module langgraph.json names and awaits its
    factory, as the server does, and reports that no model loaded. The limit here is a
    guard far above the figure it prints (about 3 s on 2 busy cores)."""
    repo = Path(__file__).resolve().parents[2]
    out = tmp_path / "load.json"
    env = {
        **os.environ,
        "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",  # an API model: nothing to install
        "LAMINA_DATA_DIR": str(tmp_path / "data"),
    }
    done = subprocess.run(
        [sys.executable, str(repo / "benchmarks" / "studio_load.py"), "--json", str(out),
         "--limit", "60"],
        capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(out.read_text())
    assert result["graph"] == "lamina.integrations.studio:make_graph"
    assert result["chat_model"] == "endpoint" and result["model_loaded_during_load"] is False
    assert result["graph_load_s"] == pytest.approx(
        result["import_s"] + result["factory_first_s"], abs=0.01
    )
    assert "graph load (import + call)" in done.stdout
    assert (tmp_path / "data" / "chroma").is_dir()
