"""The ingest and recall graphs against a real local model over HTTP (SmolLM2).

SmolLM2-135M invents facts, so these tests check what must hold with any model: raw
turns are stored before any LLM call and exactly once, every call is recorded with its
node and token counts, construction asks for its compact line format with a capped
output, and whatever the model says, the graph finishes without losing data.
"""

from datetime import UTC, datetime, timedelta

import pytest

from lamina.graphs import MemoryContext, build_ingest_graph, build_recall_graph
from lamina.stores import ChromaMemoryStore
from lamina.testing import FakeEmbeddings

pytestmark = pytest.mark.integration
NS = "user:maya"
T0 = datetime(2024, 2, 3, 18, 20, tzinfo=UTC)
LINES = [
    ("Maya", "I adopted a greyhound from the shelter yesterday! Her name is Biscuit."),
    ("Theo", "Congratulations! How is she settling in?"),
    ("Maya", "She sleeps twenty hours a day and steals my socks."),
]


def test_ingest_and_recall_over_http(local_llm) -> None:  # type: ignore[no-untyped-def]
    store = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    model = local_llm.chat_model(max_tokens=128)
    ingest = build_ingest_graph(chat_model=model, store=store, max_attempts=2).compile()
    turns = [
        {"speaker": s, "text": t, "occurred_at": T0 + timedelta(minutes=i), "session_id": "s1"}
        for i, (s, t) in enumerate(LINES)
    ]
    ctx = MemoryContext(namespace=NS, trigger_policy="session")
    out = ingest.invoke({"turns": turns, "session_closed": True}, context=ctx)
    assert len(out["new_raw_ids"]) == 3 and store.count("raw", NS) == 3
    calls = out["llm_calls"]
    assert calls and {c.node for c in calls} <= {"constructor", "judge", "episode_trigger"}
    assert calls[0].node == "constructor" and calls[0].method == "lines"  # one capped call
    assert all((c.prompt_tokens or 0) > 0 for c in calls)  # usage kept even for failed calls
    # the tiny model may ramble past max_tokens: then the step is recorded as failed and
    # the turns stay unconsolidated, but never lost
    assert store.count("episode", NS) + len(out["failures"]) >= 1

    again = ingest.invoke({"turns": turns, "session_closed": True}, context=ctx)
    assert again["new_raw_ids"] == [] and store.count("raw", NS) == 3

    recall = build_recall_graph(chat_model=model, store=store, max_attempts=2).compile()
    answer = recall.invoke({"question": "What is the name of Maya's dog?"}, context=ctx)
    assert isinstance(answer["answer"], str) and answer["answer"]
    assert answer["rounds"] >= 1 and answer["candidates"]
    nodes = {c.node for c in answer["llm_calls"]}
    assert "judge" in nodes and "retriever" not in nodes  # retrieval is deterministic
