"""The reranking stage: re-ordering the fused head, adaptivity, fallback, delegation, ONNX."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import pytest

from lamina.embedders.cross_encoder import OnnxCrossEncoder
from lamina.errors import EmbeddingError, InvalidInputError
from lamina.records import RawTurn
from lamina.stores import ChromaMemoryStore, MemoryStore, ScoredRecord
from lamina.stores.rerank import (
    RERANK_CHANNEL,
    RerankConfig,
    RerankingStore,
    confident,
    passage_text,
    rerank_hits,
)
from lamina.testing import FakeEmbeddings

NS = "user-rerank"
T0 = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)
TEXTS = [
    "we talked about the weather and the garden",
    "the garden needs water, the weather is dry",
    "I baked a lemon cake for my sister's birthday",
    "garden weather garden weather",
]


class KeywordReranker:
    """Scores a passage by how often it contains ``word``; records every call."""

    def __init__(self, word: str) -> None:
        self.word = word
        self.calls: list[tuple[str, list[str]]] = []

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        self.calls.append((query, list(passages)))
        return [float(p.lower().count(self.word)) for p in passages]


class BrokenReranker:
    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        raise RuntimeError("model crashed")


class ShortReranker:
    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        return [1.0]


def _turn(i: int, text: str) -> RawTurn:
    return RawTurn(
        namespace=NS, text=text, speaker="Ana", session_id="s1", turn_index=i, occurred_at=T0
    )


@pytest.fixture
def store() -> ChromaMemoryStore:
    s = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    s.add(NS, [_turn(i, t) for i, t in enumerate(TEXTS)])
    return s


def test_the_reranker_moves_the_passage_it_prefers_to_the_top(store: ChromaMemoryStore) -> None:
    fused = store.search("garden weather", "raw", NS, k=4)
    assert "cake" in fused[-1].record.text  # the fused order puts it last
    wrapped = RerankingStore(store, KeywordReranker("cake"), RerankConfig(top_n=4))
    hits = wrapped.search("garden weather", "raw", NS, k=4)
    assert "cake" in hits[0].record.text
    assert hits[0].ranks[RERANK_CHANNEL] == 1 and hits[0].channel_scores[RERANK_CHANNEL] == 1.0
    by_id = {h.record.id: h for h in fused}
    assert hits[0].score == by_id[hits[0].record.id].score  # the fused score is kept
    assert {h.record.id for h in hits} == set(by_id) and wrapped.reranked == 1


def test_the_reranker_reads_the_speaker_and_the_text(store: ChromaMemoryStore) -> None:
    reranker = KeywordReranker("cake")
    RerankingStore(store, reranker, RerankConfig(top_n=3)).search("cake", "raw", NS, k=1)
    query, passages = reranker.calls[0]
    assert query == "cake" and len(passages) == 3
    assert all(p.startswith("Ana: ") for p in passages)


def test_only_the_head_is_reranked_and_the_tail_keeps_its_order() -> None:
    records = [_turn(i, f"text {i} {'cake' if i == 3 else ''}") for i in range(5)]
    hits = [ScoredRecord(record=r, score=1.0 / (i + 1)) for i, r in enumerate(records)]
    out = rerank_hits("q", hits, KeywordReranker("cake"), RerankConfig(top_n=3))
    assert [h.record.turn_index for h in out] == [0, 1, 2, 3, 4]  # the cake turn is in the tail
    out = rerank_hits("q", hits, KeywordReranker("cake"), RerankConfig(top_n=4))
    assert [h.record.turn_index for h in out] == [3, 0, 1, 2, 4]  # ties keep the fused order


def test_an_adaptive_config_skips_a_confident_top() -> None:
    records = [_turn(i, "cake" if i == 1 else "plain") for i in range(3)]
    far = [ScoredRecord(record=r, score=s) for r, s in zip(records, (1.0, 0.2, 0.1), strict=True)]
    close = [ScoredRecord(record=r, score=s) for r, s in zip(records, (1, 0.95, 0.9), strict=True)]
    config = RerankConfig(top_n=3, adaptive_margin=0.5)
    assert confident(far, 0.5) and not confident(close, 0.5) and not confident(far, None)
    reranker = KeywordReranker("cake")
    assert [h.record.turn_index for h in rerank_hits("q", far, reranker, config)] == [0, 1, 2]
    assert reranker.calls == []  # no model call at all
    assert [h.record.turn_index for h in rerank_hits("q", close, reranker, config)][0] == 1


def test_a_failing_reranker_degrades_to_the_fused_order(store: ChromaMemoryStore) -> None:
    fused = [h.record.id for h in store.search("garden weather cake", "raw", NS, k=3)]
    for bad in (BrokenReranker(), ShortReranker()):
        wrapped = RerankingStore(store, bad, RerankConfig(top_n=4))
        hits = wrapped.search("garden weather cake", "raw", NS, k=3)
        assert [h.record.id for h in hits] == fused and wrapped.failures == 1
    assert store.count("raw", NS) == len(TEXTS)  # nothing stored was touched


def test_the_wrapper_passes_every_other_call_to_the_inner_store(store: ChromaMemoryStore) -> None:
    wrapped = RerankingStore(store, KeywordReranker("x"))
    wrapped.add(NS, [_turn(9, "a new turn")])
    assert wrapped.count("raw", NS) == len(TEXTS) + 1
    assert wrapped.get("raw", NS, [_turn(9, "a new turn").id])[0].text == "a new turn"
    assert wrapped.delete_namespace(NS) == len(TEXTS) + 1  # a store-specific method
    assert store.count("raw", NS) == 0


def test_bad_settings_are_refused_with_a_clear_error(store: ChromaMemoryStore) -> None:
    with pytest.raises(InvalidInputError, match="top_n"):
        RerankConfig(top_n=1)
    with pytest.raises(InvalidInputError, match="adaptive_margin"):
        RerankConfig(adaptive_margin=1.5)
    with pytest.raises(InvalidInputError, match="score"):
        RerankingStore(store, object())  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="k must"):
        RerankingStore(store, KeywordReranker("x")).search("q", "raw", NS, k=0)
    with pytest.raises(InvalidInputError, match="surrogate"):  # before the reranker reads it
        RerankingStore(store, KeywordReranker("x")).search("q \ud800", "raw", NS)


def test_passage_text_of_each_granularity() -> None:
    from lamina.records import EpisodeRecord, FactRecord

    turn = _turn(0, "look at this").model_copy(update={"media_caption": "a red bike"})
    assert passage_text(turn) == "Ana: look at this [image: a red bike]"
    fact = FactRecord(namespace=NS, text="likes tea", subject="Ana", occurred_at=T0)
    assert passage_text(fact) == "Ana: likes tea"
    episode = EpisodeRecord(namespace=NS, title="Tea time", text="Ana made tea.", occurred_at=T0)
    assert passage_text(episode) == "Tea time. Ana made tea."


def test_the_recall_graph_uses_a_reranking_store_unchanged(store: ChromaMemoryStore) -> None:
    from lamina.core.context import MemoryContext
    from lamina.graphs.recall import build_recall_graph
    from lamina.testing import SchemaChatModel

    def ranks(memory_store: MemoryStore) -> dict[str, int]:
        model = SchemaChatModel()
        graph = build_recall_graph(chat_model=model, store=memory_store).compile()
        out = graph.invoke(
            {"question": "what about the garden weather?", "mode": "retrieve"},
            context=MemoryContext(namespace=NS),
        )
        assert model.calls == []  # retrieval only: no LLM
        return {c.text: min(c.ranks.values()) for c in out["candidates"]}

    cake = TEXTS[2]
    assert ranks(store)[cake] > 1
    wrapped = RerankingStore(store, KeywordReranker("cake"), RerankConfig(top_n=4))
    assert ranks(wrapped)[cake] == 1 and wrapped.reranked >= 1


# ------------------------------------------------------------------ ONNX cross-encoder
def _tiny_cross_encoder(folder: Path, word: str) -> None:
    """A real ONNX graph scoring how often ``word``'s token occurs, and a real tokenizer."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper
    from tokenizers import BertWordPieceTokenizer

    vocab = Path(__file__).resolve().parents[2] / "embedders" / "resources" / "vocab.txt"
    tokenizer = BertWordPieceTokenizer(str(vocab), lowercase=True)
    tokenizer.save(str(folder / "tokenizer.json"))
    target = tokenizer.token_to_id(word)
    nodes = [
        helper.make_node("Equal", ["input_ids", "target"], ["hit"]),
        helper.make_node("Cast", ["hit"], ["hit_f"], to=TensorProto.FLOAT),
        helper.make_node("Cast", ["attention_mask"], ["mask_f"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["hit_f", "mask_f"], ["masked"]),
        helper.make_node("ReduceSum", ["masked", "axes"], ["logits"], keepdims=1),
    ]
    graph = helper.make_graph(
        nodes,
        "tiny",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["b", "s"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["b", "s"]),
        ],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["b", 1])],
        [
            helper.make_tensor("target", TensorProto.INT64, [], [target]),
            helper.make_tensor("axes", TensorProto.INT64, [1], [1]),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(folder / "model.onnx"))


def test_the_onnx_cross_encoder_scores_pairs_with_a_real_model(tmp_path: Path) -> None:
    _tiny_cross_encoder(tmp_path, "cake")
    encoder = OnnxCrossEncoder(tmp_path, batch_size=2)
    scores = encoder.score("cake", ["no match here", "cake and more cake", "a cake"])
    assert scores == [1.0, 3.0, 2.0]  # the query's own token counts once in every pair
    assert encoder.score("cake", []) == []
    long = "cake " * 2000  # truncated to max_length, never an error
    assert encoder.score("cake", [long])[0] <= encoder.max_length


def test_the_onnx_cross_encoder_reranks_a_store(store: ChromaMemoryStore, tmp_path: Path) -> None:
    _tiny_cross_encoder(tmp_path, "cake")
    wrapped = RerankingStore(store, OnnxCrossEncoder(tmp_path), RerankConfig(top_n=4))
    assert "cake" in store.search("garden weather", "raw", NS, k=4)[-1].record.text
    assert "cake" in wrapped.search("garden weather", "raw", NS, k=2)[0].record.text


def test_the_onnx_cross_encoder_needs_its_files(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match="model.onnx"):
        OnnxCrossEncoder(tmp_path)
    (tmp_path / "model.onnx").write_bytes(b"not a model")
    (tmp_path / "tokenizer.json").write_text("{}")
    encoder = OnnxCrossEncoder(tmp_path)
    with pytest.raises(EmbeddingError, match="could not load"):
        encoder.score("q", ["p"])
    with pytest.raises(InvalidInputError, match="max_length"):
        OnnxCrossEncoder(tmp_path, max_length=4)
