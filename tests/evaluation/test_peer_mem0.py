"""The mem0 peer: writes, searches, answers, counts, and its failed batches."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

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
    needs_mem0,
    oracle_answerer,
)


def open_stub_mem0(folder: Path, stub: OpenAIStub) -> Any:
    from lamina_bench.evaluation.peers.mem0_peer import open_mem0

    return open_mem0(folder, chat_model=None, embeddings=FakeEmbeddings(), endpoint=stub.endpoint())


@needs_mem0
@pytest.mark.usefixtures("mem0_env")
def test_mem0_writes_searches_answers_and_counts(
    tmp_path: Path, stub: OpenAIStub, subset: Subset
) -> None:
    memory = open_stub_mem0(tmp_path / "stage", stub)
    steps = ingest(memory, "peer-mem0", subset)

    assert [(s.batch, s.batches, s.turns) for s in steps] == [(0, 2, 4), (1, 2, 4)]
    assert [s.written for s in steps] == [1, 0]
    assert [s.failures for s in steps] == [0, 0] and all(s.error is None for s in steps)
    for step, request in zip(steps, stub.extractions(), strict=True):
        cost = step.construction["mem0"]
        assert cost.calls == 1 and cost.unknown_calls == 0
        assert cost.prompt_tokens > 50 and cost.completion_tokens > 0
        assert request["response_format"] == {"type": "json_object"}  # mem0's own JSON mode
        assert request["temperature"] == 0.0  # the run's temperature
    first = stub.extractions()[0]["messages"][1]["content"]
    assert f"(8 May 2023, 13:56) Caroline: {DOG}" in first  # dated, named turns
    assert (tmp_path / "stage" / "mem0" / "chroma").is_dir()
    assert (tmp_path / "stage" / "mem0" / "history.db").is_file()

    (hit, *_) = memory.search("conv-p", QUESTION, 20)
    assert hit.text == MEMORY and hit.dia_ids == ["D1:1", "D1:2", "D1:3", "D1:4"]
    assert hit.on is not None and hit.on.date().isoformat() == "2023-05-08"
    assert memory.search("conv-other", QUESTION, 20) == []  # one user id per conversation

    answerer, model = oracle_answerer()
    system = PeerSystem("mem0", "peer-mem0", memory, answerer, FakeEmbeddingsCounter(), 20)
    conv = subset.conversations[0]
    (question,) = subset.questions["conv-p"]
    answer = system.answer(conv, question)
    assert answer.answer == "Biscuit" and "D1:3" in answer.used
    assert answer.context_tokens > 0 and answer.costs["eval_answer"].calls == 1
    assert answer.failures == 0 and not answer.notes
    (_, prompt) = model.calls[0]
    assert f"(8 May 2023) {MEMORY}" in "\n".join(str(m.content) for m in prompt)


@needs_mem0
@pytest.mark.usefixtures("mem0_env")
def test_a_mem0_batch_that_raises_is_retried_once_then_recorded_failed(
    tmp_path: Path, stub: OpenAIStub, subset: Subset
) -> None:
    memory = open_stub_mem0(tmp_path / "stage", stub)
    stub.refuse = 2  # both tries of the first batch get HTTP 400
    steps = ingest(memory, "peer-mem0", subset)

    failed, after = steps
    assert failed.batch == 0 and failed.failures == 2 and failed.written == 0
    assert failed.error is not None and "BadRequestError (HTTP 400)" in failed.error
    assert failed.construction["mem0"].calls == 2  # both tries are counted
    assert after.batch == 1 and after.error is None and after.failures == 0  # the run goes on
    assert len(stub.requests) == 3


@needs_mem0
@pytest.mark.usefixtures("mem0_env")
def test_a_mem0_batch_that_fails_once_is_kept_from_the_retry(
    tmp_path: Path, stub: OpenAIStub, subset: Subset
) -> None:
    memory = open_stub_mem0(tmp_path / "stage", stub)
    stub.refuse = 1
    first, _ = ingest(memory, "peer-mem0", subset)
    assert first.error is None and first.failures == 1 and first.written == 1
    assert first.construction["mem0"].calls == 2


@needs_mem0
@pytest.mark.usefixtures("mem0_env")
def test_mem0_output_it_cannot_parse_is_counted_as_a_failure(
    tmp_path: Path, stub: OpenAIStub, subset: Subset
) -> None:
    memory = open_stub_mem0(tmp_path / "stage", stub)
    stub.extract = lambda prompt: "Sure! Here are the memories you asked for."
    steps = ingest(memory, "peer-mem0", subset)
    assert [s.failures for s in steps] == [1, 1]  # mem0 logged it and went on
    assert [s.written for s in steps] == [0, 0] and all(s.error is None for s in steps)


@needs_mem0
@pytest.mark.usefixtures("mem0_env")
def test_a_model_server_that_refuses_connections_stops_the_run(
    tmp_path: Path, stub: OpenAIStub, subset: Subset
) -> None:
    memory = open_stub_mem0(tmp_path / "stage", stub)
    stub.close()  # nothing listens any more: a retry cannot help, every batch would fail
    with pytest.raises(Exception, match="Connection|connect"):
        ingest(memory, "peer-mem0", subset)
