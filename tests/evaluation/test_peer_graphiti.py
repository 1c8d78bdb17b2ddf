"""The Graphiti peer: writes, searches, answers, counts, reopens, and a refused batch."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lamina.testing import FakeEmbeddings
from lamina_bench.evaluation.peers import PeerSystem
from lamina_bench.evaluation.subset import Subset
from tests.evaluation.peer_doubles import (
    DOG,
    MEMORY,
    QUESTION,
    FakeEmbeddingsCounter,
    OpenAIStub,
    ingest,
    needs_graphiti,
    oracle_answerer,
)


def open_stub_graphiti(folder: Path, stub: OpenAIStub) -> Any:
    from lamina_bench.evaluation.peers.graphiti_peer import open_graphiti

    return open_graphiti(
        folder, chat_model=None, embeddings=FakeEmbeddings(), endpoint=stub.endpoint()
    )


def schema_names(stub: OpenAIStub) -> list[str]:
    formats = [r.get("response_format") or {} for r in stub.requests]
    return [f["json_schema"]["name"] for f in formats if f.get("type") == "json_schema"]


@needs_graphiti
def test_graphiti_writes_searches_answers_counts_and_reopens(
    tmp_path: Path, stub: OpenAIStub, subset: Subset
) -> None:
    memory = open_stub_graphiti(tmp_path / "stage", stub)
    steps = ingest(memory, "peer-graphiti", subset)

    assert [(s.batch, s.batches, s.turns) for s in steps] == [(0, 2, 4), (1, 2, 4)]
    assert [s.written for s in steps] == [1, 0]  # the dog fact, then nothing
    assert [s.failures for s in steps] == [0, 0] and all(s.error is None for s in steps)
    calls = [s.construction["graphiti"].calls for s in steps]
    assert sum(calls) == len(stub.requests) and all(c >= 1 for c in calls)
    assert all(s.construction["graphiti"].prompt_tokens > 50 for s in steps)
    assert {"ExtractedEntities", "ExtractedEdges"} <= set(schema_names(stub))
    assert all(r["temperature"] == 1.0 for r in stub.requests)  # Graphiti's own default
    prompts = ["\n".join(str(m["content"]) for m in r["messages"]) for r in stub.requests]
    assert any(f"(8 May 2023, 13:56) Caroline: {DOG}" in p for p in prompts)
    folder = tmp_path / "stage" / "graphiti"
    assert (folder / "conv-p.kuzu").exists() and (folder / "sources.jsonl").is_file()

    (hit, *_) = memory.search("conv-p", QUESTION, 10)
    assert hit.text == MEMORY and hit.dia_ids == ["D1:1", "D1:2", "D1:3", "D1:4"]
    assert hit.on is not None and hit.on.date().isoformat() == "2023-05-08"
    assert memory.search("conv-other", QUESTION, 10) == []  # a graph per conversation
    assert not (folder / "conv-other.kuzu").exists()  # a search creates no graph
    memory.close()

    reopened = open_stub_graphiti(tmp_path / "stage", stub)  # a resumed run
    assert reopened.search("conv-p", QUESTION, 10)[0] == hit

    answerer, model = oracle_answerer()
    counter = FakeEmbeddingsCounter()
    system = PeerSystem("graphiti", "peer-graphiti", reopened, answerer, counter, 10)
    (question,) = subset.questions["conv-p"]
    answer = system.answer(subset.conversations[0], question)
    assert answer.answer == "Biscuit" and "D1:3" in answer.used and answer.context_tokens > 0
    (_, prompt) = model.calls[0]
    assert f"(8 May 2023) {MEMORY}" in "\n".join(str(m.content) for m in prompt)


@needs_graphiti
def test_a_graphiti_batch_the_model_refuses_is_retried_once_then_recorded_failed(
    tmp_path: Path, stub: OpenAIStub, subset: Subset
) -> None:
    memory = open_stub_graphiti(tmp_path / "stage", stub)
    stub.refuse = 2  # the first call of the batch and the first call of its retry
    failed, after = ingest(memory, "peer-graphiti", subset)
    assert failed.failures == 2 and failed.written == 0 and failed.error
    assert failed.construction["graphiti"].calls >= 2  # the refused calls are counted too
    assert after.error is None and after.failures == 0
