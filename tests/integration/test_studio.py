"""``langgraph dev`` loads langgraph.json and serves the memory graph over HTTP.

The server is the real LangGraph API (langgraph-cli[inmem]) on 127.0.0.1; its chat model
is the SmolLM2 llama.cpp server of the ``local_llm`` fixture, reached through
``OPENAI_BASE_URL`` exactly as a user would configure a remote endpoint.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lamina.graphs.events import MEMORY_WRITTEN
from lamina.stores import ChromaMemoryStore

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


@pytest.fixture(scope="module")
def client(studio):  # type: ignore[no-untyped-def]
    from langgraph_sdk import get_sync_client

    return get_sync_client(url=studio[0], timeout=600)


def test_langgraph_json_names_the_factory_module() -> None:
    config = json.loads((REPO / "langgraph.json").read_text())
    assert config["graphs"] == {"memory": "lamina.integrations.studio:make_graph"}
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
