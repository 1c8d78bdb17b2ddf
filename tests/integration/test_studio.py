"""``langgraph dev`` loads langgraph.json and serves the memory graph over HTTP.

The server is the real LangGraph API (langgraph-cli[inmem]) on 127.0.0.1; its chat model
is the SmolLM2 llama.cpp server of the ``local_llm`` fixture, reached through
``OPENAI_BASE_URL`` exactly as a user would configure a remote endpoint.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest

from memstrata.graphs.events import MEMORY_WRITTEN
from memstrata.stores import ChromaMemoryStore

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]
NS = "user:studio"
TURNS = [
    {
        "speaker": "Maya",
        "text": "I adopted a greyhound called Biscuit yesterday.",
        "occurred_at": "2024-02-03T18:20:00Z",
        "session_id": "s1",
    },
    {
        "speaker": "Maya",
        "text": "Biscuit sleeps twenty hours a day and steals my socks.",
        "occurred_at": "2024-02-03T18:21:00Z",
        "session_id": "s1",
    },
]
STARTUP_TIMEOUT_S = 180


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _server_env(llm: Any, data_dir: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OPENAI_", "MEMSTRATA_", "CHROMA_", "LANGSMITH_", "LANGCHAIN_"))
    }
    env.update(
        OPENAI_BASE_URL=llm.base_url,
        OPENAI_MODEL=llm.model_alias,
        MEMSTRATA_DATA_DIR=str(data_dir),
        MEMSTRATA_MAX_TOKENS="128",
        MEMSTRATA_MAX_LLM_ATTEMPTS="2",
        MEMSTRATA_TIMEOUT="180",
        ANONYMIZED_TELEMETRY="False",
        LANGGRAPH_NO_VERSION_CHECK="true",
        LANGGRAPH_CLI_NO_ANALYTICS="1",
        LANGSMITH_TRACING="false",
    )
    return env


@pytest.fixture(scope="module")
def studio(local_llm, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:  # type: ignore[no-untyped-def]
    """``langgraph dev`` on a free loopback port, stopped (process group) afterwards."""
    exe = shutil.which("langgraph", path=str(Path(sys.executable).parent))
    if exe is None or find_spec("langgraph_api") is None:
        pytest.skip("langgraph-cli[inmem] is not installed (`pip install -e '.[dev]'`)")
    work = tmp_path_factory.mktemp("studio")
    config = json.loads((REPO / "langgraph.json").read_text())
    # the repo's langgraph.json as is, except that a developer's .env must not leak in
    config["env"] = {}
    config["dependencies"] = [str(REPO)]
    (work / "langgraph.json").write_text(json.dumps(config))
    port = _free_port()
    log_path = work / "server.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [
                exe,
                "dev",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--no-browser",
                "--no-reload",
                "--config",
                str(work / "langgraph.json"),
            ],
            cwd=work,  # its .langgraph_api folder goes here, not into the repository
            env=_server_env(local_llm, work / "data"),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        while True:
            try:
                with opener.open(f"{url}/ok", timeout=2):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(
                        f"langgraph dev did not start: {log_path.read_text()[-3000:]}"
                    ) from None
                time.sleep(0.5)
        yield url, work / "data"
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)


@pytest.fixture(scope="module")
def client(studio):  # type: ignore[no-untyped-def]
    from langgraph_sdk import get_sync_client

    return get_sync_client(url=studio[0], timeout=600)


def test_langgraph_json_names_the_factory_module() -> None:
    config = json.loads((REPO / "langgraph.json").read_text())
    assert config["graphs"] == {"memory": "memstrata.graphs.studio:make_graph"}
    assert config["dependencies"] == ["."]


def test_ingest_then_answer_through_the_http_api(client, studio) -> None:  # type: ignore[no-untyped-def]
    assistants = client.assistants.search(graph_id="memory")
    assert assistants, "the server registered no assistant for the memory graph"
    thread = client.threads.create()
    ingested = client.runs.wait(
        thread["thread_id"],
        "memory",
        input={"turns": TURNS},
        context={"namespace": NS, "trigger_policy": "recurrence"},
    )
    assert len(ingested["new_raw_ids"]) == 2 and ingested["duplicate_raw_ids"] == []
    assert ingested["trigger"]["policy"] == "recurrence"  # the run's context arrived

    store = ChromaMemoryStore.persistent(studio[1] / "chroma")  # what the server wrote
    stored = store.get("raw", NS, ingested["new_raw_ids"])
    assert sorted(r.text for r in stored) == sorted(t["text"] for t in TURNS)
    assert store.get("raw", "default") == []  # the namespace came from the context

    answered = client.runs.wait(
        thread["thread_id"],
        "memory",
        input={"question": "What is the name of Maya's dog?"},
        context={"namespace": NS},
    )
    assert "error" not in answered, answered
    assert isinstance(answered.get("answer"), str) and isinstance(answered.get("refused"), bool)
    assert answered["verdicts"] and answered["rounds"] >= 1
    assert answered["llm_calls"], "the model behind OPENAI_BASE_URL was never called"
    assert any(c["id"] in ingested["new_raw_ids"] for c in answered["candidates"])


def test_updates_and_memory_events_stream_over_http(client) -> None:  # type: ignore[no-untyped-def]
    thread = client.threads.create()
    turn = {**TURNS[0], "text": "Biscuit's favourite toy is a squeaky duck.", "turn_index": 9}
    chunks = list(
        client.runs.stream(
            thread["thread_id"],
            "memory",
            input={"turns": [turn]},
            context={"namespace": NS},
            stream_mode=["updates", "custom"],
            stream_subgraphs=True,
        )
    )
    updates = [c.data for c in chunks if c.event.startswith("updates")]
    custom = [c.data for c in chunks if c.event.startswith("custom")]
    nodes = [name for update in updates for name in update]
    assert nodes[:2] == ["raw_write", "episode_trigger"] and "ingest" in nodes
    (raw_update,) = [u["raw_write"] for u in updates if "raw_write" in u]
    assert custom == [
        {
            "event": MEMORY_WRITTEN,
            "node": "raw_write",
            "namespace": NS,
            "granularity": "raw",
            "id": raw_update["new_raw_ids"][0],
            "action": "created",
        }
    ]
