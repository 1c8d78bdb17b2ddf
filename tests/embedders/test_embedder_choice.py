"""Choosing an offline embedder; the static WordLlama embedder; embedder changes on open."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from lamina.embedders import MiniLMEmbeddings
from lamina.embedders.choice import DEFAULT_EMBEDDER, EMBEDDERS, make_embeddings
from lamina.errors import InvalidInputError, MissingDependencyError, StoreConfigurationError
from lamina.records import RawTurn
from lamina.stores import ChromaMemoryStore
from lamina.testing import FakeEmbeddings

T0 = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)


def test_the_default_is_still_minilm() -> None:
    assert DEFAULT_EMBEDDER == "minilm"
    assert isinstance(make_embeddings(), MiniLMEmbeddings)
    assert EMBEDDERS["minilm"].dims == 384 and EMBEDDERS["minilm"].extra is None


def test_an_unknown_name_is_refused_with_the_choices() -> None:
    with pytest.raises(InvalidInputError, match="minilm"):
        make_embeddings("bge-huge")
    with pytest.raises(InvalidInputError):
        make_embeddings(3)  # type: ignore[arg-type]


def test_a_missing_package_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda n, *a: None if n == "wordllama" else real(n, *a)
    )
    with pytest.raises(MissingDependencyError, match=r"lamina\[embedders\]"):
        make_embeddings("static")


@pytest.fixture(scope="module")
def static() -> object:
    pytest.importorskip("wordllama")
    return make_embeddings("static")


def test_static_vectors_are_unit_length_and_deterministic(static: object) -> None:
    from lamina.embedders.static import StaticEmbeddings

    assert isinstance(static, StaticEmbeddings)
    texts = ["I adopted a puppy last week", "", "🎉🎉", "word " * 20000]
    vectors = np.asarray(static.embed_documents(texts))
    assert vectors.shape == (4, EMBEDDERS["static"].dims)
    assert np.all(np.isfinite(vectors))
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert np.allclose(static.embed_query(texts[0]), vectors[0], atol=1e-6)


def test_static_vectors_rank_related_text_first(static: object) -> None:
    from lamina.embedders.static import StaticEmbeddings

    assert isinstance(static, StaticEmbeddings)
    query = np.asarray(static.embed_query("did she get a dog?"))
    docs = np.asarray(
        static.embed_documents(
            ["We adopted a puppy from the shelter", "The quarterly budget report is late"]
        )
    )
    related, unrelated = docs @ query
    assert related > unrelated


def _store_written_by(path: Path, embeddings: object) -> RawTurn:
    turn = RawTurn(
        namespace="u1", text="I adopted a puppy", speaker="Ana", session_id="s", turn_index=0,
        occurred_at=T0,
    )  # fmt: skip
    ChromaMemoryStore.persistent(path, embeddings=embeddings).add("u1", [turn])
    return turn


def test_a_store_reopens_with_its_own_embedder(tmp_path: Path, static: object) -> None:
    from lamina.embedders.static import StaticEmbeddings

    turn = _store_written_by(tmp_path / "chroma", static)
    with pytest.raises(Exception, match="wordllama"):  # refused, whatever the type (below)
        ChromaMemoryStore.persistent(tmp_path / "chroma", embeddings=FakeEmbeddings())
    again = ChromaMemoryStore.persistent(tmp_path / "chroma", embeddings=StaticEmbeddings())
    assert again.search("a dog", "raw", "u1", k=1)[0].record.id == turn.id  # nothing lost


def test_a_store_written_by_a_langchain_embedder_refuses_another(tmp_path: Path) -> None:
    _store_written_by(tmp_path / "chroma", FakeEmbeddings(model="model-a"))
    with pytest.raises(StoreConfigurationError, match="model-a"):
        ChromaMemoryStore.persistent(tmp_path / "chroma", embeddings=FakeEmbeddings(model="b"))


def test_a_store_refuses_another_embedder_with_laminas_error(
    tmp_path: Path, static: object
) -> None:
    from lamina.embedders.static import StaticEmbeddings

    turn = _store_written_by(tmp_path / "chroma", static)
    for other in (FakeEmbeddings(), MiniLMEmbeddings()):  # a LangChain model, another built-in
        with pytest.raises(StoreConfigurationError, match="wordllama") as caught:
            ChromaMemoryStore.persistent(tmp_path / "chroma", embeddings=other)
        assert ("lamina-minilm" if isinstance(other, MiniLMEmbeddings) else "Fake") in str(
            caught.value
        )
    # the failed opens changed nothing: the store reopens with its own embedder, whole
    again = ChromaMemoryStore.persistent(tmp_path / "chroma", embeddings=StaticEmbeddings())
    assert again.get("raw", "u1", [turn.id])[0].text == turn.text
    assert again.search("a dog", "raw", "u1", k=1)[0].record.id == turn.id
