"""The LangMem peer: writes, searches, answers, counts, reopens, and its failed batches."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage

from lamina.testing import FakeEmbeddings, ToolCallingChatModel
from lamina_bench.evaluation.peers import PeerSystem
from lamina_bench.evaluation.subset import Subset
from tests.evaluation.peer_doubles import (
    DOG,
    MEMORY,
    QUESTION,
    FakeEmbeddingsCounter,
    ingest,
    langmem_model,
    needs_langmem,
    oracle_answerer,
)


def open_fake_langmem(folder: Path, model: ToolCallingChatModel) -> Any:
    from lamina_bench.evaluation.peers.langmem_peer import open_langmem

    return open_langmem(folder, chat_model=model, embeddings=FakeEmbeddings())


@needs_langmem
def test_langmem_writes_searches_answers_counts_and_reopens(tmp_path: Path, subset: Subset) -> None:
    model = langmem_model()
    memory = open_fake_langmem(tmp_path / "stage", model)
    steps = ingest(memory, "peer-langmem", subset)

    assert [(s.batch, s.turns) for s in steps] == [(0, 4), (1, 4)]
    assert steps[0].written == 1 and steps[1].written == 0
    for step in steps:
        cost = step.construction["langmem"]
        assert cost.calls >= 1 and cost.unknown_calls == 0
        assert cost.prompt_tokens > 50 and cost.completion_tokens == 12 * cost.calls
    assert sum(s.construction["langmem"].calls for s in steps) == len(model.calls)
    assert f"(8 May 2023, 13:56) Caroline: {DOG}" in "\n".join(
        str(m.content) for m in model.calls[0]
    )
    assert (tmp_path / "stage" / "langmem" / "store.json").is_file()

    reopened = open_fake_langmem(tmp_path / "stage", langmem_model())  # a resumed run
    for peer in (memory, reopened):
        (hit,) = peer.search("conv-p", QUESTION, 10)
        assert hit.text == f"{MEMORY} (8 May 2023)" and "D1:3" in hit.dia_ids
        assert hit.on is not None and hit.on.date().isoformat() == "2023-05-08"
        assert peer.search("conv-other", QUESTION, 10) == []  # a namespace per conversation

    answerer, _ = oracle_answerer()
    system = PeerSystem("langmem", "peer-langmem", reopened, answerer, FakeEmbeddingsCounter(), 10)
    (question,) = subset.questions["conv-p"]
    answer = system.answer(subset.conversations[0], question)
    assert answer.answer == "Biscuit" and "D1:3" in answer.used and answer.context_tokens > 0


@needs_langmem
def test_a_langmem_batch_that_raises_is_retried_once_then_recorded_failed(
    tmp_path: Path, subset: Subset
) -> None:
    model = langmem_model(RuntimeError("model down"), RuntimeError("model down"))
    failed, after = ingest(open_fake_langmem(tmp_path / "stage", model), "peer-langmem", subset)
    assert failed.failures == 2 and failed.written == 0 and failed.error == "RuntimeError"
    assert failed.construction["langmem"].calls == 2  # the failed calls are counted too
    assert after.error is None and after.failures == 0


def langmem_reply_in_text(messages: list[BaseMessage]) -> AIMessage:
    """What Qwen2.5-Coder 1.5B does: the Memory call printed as a JSON block, no tool call."""
    usage = {"input_tokens": 100, "output_tokens": 30, "total_tokens": 130}
    text = '```json\n{"name": "Memory", "arguments": {"content": "Caroline has a dog"}}\n```'
    return AIMessage(text, usage_metadata=usage)  # type: ignore[arg-type]


@needs_langmem
def test_a_langmem_reply_in_text_instead_of_a_tool_call_is_counted_unusable(
    tmp_path: Path, subset: Subset
) -> None:
    model = ToolCallingChatModel().enqueue(*([langmem_reply_in_text] * 10))
    steps = ingest(open_fake_langmem(tmp_path / "stage", model), "peer-langmem", subset)
    assert [s.written for s in steps] == [0, 0]
    assert all(s.error is None for s in steps)  # not a raise: the batch is not retried
    assert [s.failures for s in steps] == [s.construction["langmem"].calls for s in steps]
    assert sum(s.failures for s in steps) == len(model.calls) >= 2

    tool_calls = langmem_model()  # a model that answers with tool calls is not counted
    fine = ingest(open_fake_langmem(tmp_path / "other", tool_calls), "peer-langmem", subset)
    assert [s.failures for s in fine] == [0, 0]
