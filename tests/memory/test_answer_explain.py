"""``AnswerResult.explain()``: a refusal shows what was retrieved and why it was refused."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from lamina import Memory
from lamina.memory.results import AnswerResult, MemoryHit
from lamina.stores import ChromaMemoryStore
from lamina.testing import FakeEmbeddings, SchemaChatModel

NS = "user:maya"
T0 = datetime(2024, 2, 3, 18, 20, tzinfo=UTC)


def test_a_refusal_lists_its_candidates_the_verdicts_and_the_rounds() -> None:
    model = SchemaChatModel()
    insufficient = {"sufficient": False, "missing": "the dog's name"}
    model.script("DraftFirst", *[json.dumps(insufficient)] * 2)
    model.script("QueryRewrite", json.dumps({"queries": ["greyhound name"]}))
    store = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    memory = Memory(store=store, chat_model=model)
    texts = ["I adopted the greyhound from the shelter!", "She steals my socks."]
    for n, text in enumerate(texts):
        memory.add(text, namespace=NS, speaker="Maya", at=T0 + timedelta(minutes=n))

    result = memory.answer("What is Maya's dog called?", namespace=NS)
    assert result.refused and result.memories
    text = result.explain()
    lines = text.splitlines()
    assert lines[0] == "question: What is Maya's dog called?"
    assert lines[1].startswith("refused: ")
    assert f"rounds: {result.rounds}; LLM calls: {len(result.llm_calls)}" in text
    assert result.verdicts and len(result.verdicts) == result.rounds
    for verdict in result.verdicts:  # every verdict: its round, decision and reasons
        assert f"  round {verdict['round']}: " in text
        for key, value in verdict.items():
            if isinstance(value, str) and value and key not in ("status", "action"):
                assert value in text, key
            if isinstance(value, list) and value:
                assert f"{key}: " + "; ".join(map(str, value)) in text
    for n, hit in enumerate(result.memories, start=1):  # every candidate, with granularity
        line = next(x for x in lines if x.startswith(f"  m{n} [{hit.granularity} {hit.id}]"))
        assert "score" in line and "<- cited" not in line
    assert any("greyhound from the shelter" in x for x in lines if x.startswith("  m"))
    assert result.queries and all(repr(q) in text for q in result.queries)


def test_an_answer_marks_what_it_cites_and_counts_tokens_as_reported() -> None:
    model = SchemaChatModel()
    model.script(
        "DraftFirst", json.dumps({"sufficient": True, "answer": "Biscuit", "cited": ["m1"]})
    )
    store = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    memory = Memory(store=store, chat_model=model)
    memory.add("Her name is Biscuit", namespace=NS, speaker="Maya", at=T0)
    result = memory.answer("What is the dog called?", namespace=NS)
    text = result.explain()
    assert "answer: Biscuit" in text
    cited = [x for x in text.splitlines() if x.startswith("  m") and "<- cited" in x]
    assert len(cited) == 1 and result.citations[0] in cited[0]
    usage = result.usage
    assert usage.calls == len(result.llm_calls) and usage.unreported_calls == 0
    assert usage.prompt_tokens == sum(c.prompt_tokens or 0 for c in result.llm_calls)
    assert f"{usage.prompt_tokens} prompt + {usage.completion_tokens} completion" in text
    dumped = result.model_dump(mode="json")
    assert dumped["repairs"] == 0 and dumped["reasks"] == 0 and dumped["usage"]["calls"]


def test_best_memories_puts_the_cited_first_then_raw_turns_by_score() -> None:
    def hit(i: str, granularity: str, score: float) -> MemoryHit:
        return MemoryHit(granularity=granularity, id=i, text=i, score=score, occurred_at=T0)

    # the order the Judge saw: notes first, raw turns worst first
    seen = [hit("f1", "fact", 0.9), hit("r3", "raw", 0.1), hit("r2", "raw", 0.2)]
    seen += [hit("r1", "raw", 0.5)]
    result = AnswerResult(answer="Biscuit", citations=["r3"], memories=seen)
    assert [m.id for m in result.best_memories(3)] == ["r3", "r1", "r2"]
    assert [m.id for m in result.best_memories(10)] == ["r3", "r1", "r2", "f1"]
    assert result.best_memories(0) == [] and [m.id for m in result.memories] == [
        "f1", "r3", "r2", "r1"
    ]  # fmt: skip
