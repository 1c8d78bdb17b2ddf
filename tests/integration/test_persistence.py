"""A real persistent Chroma with the real offline embedder: close, reopen, compare."""

import warnings
from datetime import UTC, datetime, timedelta
from pathlib import Path

import chromadb
import pytest

from lamina.embedders import MiniLMEmbeddingFunction, MiniLMEmbeddings
from lamina.errors import StoreConfigurationError
from lamina.records import FactRecord, RawTurn
from lamina.stores import ChromaMemoryStore, IndexTextPolicy
from lamina.testing import FakeEmbeddings

pytestmark = pytest.mark.integration
NS = "user:carol"
T0 = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
LINES = [
    ("Carol", "I finally signed up for the pottery class downtown"),
    ("Dan", "Nice, when does it start?"),
    ("Carol", "Next Tuesday. I'm also training for the half marathon in October"),
    ("Dan", "My cat Miso knocked over the fern again"),
    ("Carol", "Ha! Did you ever fix the bike's flat tire?"),
    ("Dan", "Yes, I replaced the inner tube myself"),
]
QUERIES = ["When does Carol's pottery class start?", "marathon training", "Dan's cat", "bike tire"]


def turns() -> list[RawTurn]:
    return [
        RawTurn(
            namespace=NS,
            text=text,
            speaker=speaker,
            session_id="s1",
            turn_index=i,
            occurred_at=T0 + timedelta(minutes=i),
        )
        for i, (speaker, text) in enumerate(LINES)
    ]


def snapshot(store: ChromaMemoryStore) -> tuple[object, ...]:
    data = store.get("raw", NS)
    lexical = {q: store.lexical_index("raw", NS).scores(q) for q in QUERIES}
    results = {
        (q, mode): [(h.record.id, h.ranks) for h in store.search(q, "raw", NS, k=4, mode=mode)]
        for q in QUERIES
        for mode in ("hybrid", "dense", "bm25")
    }
    return data, lexical, results


def test_reopen_gives_identical_data_and_bm25_results(tmp_path: Path) -> None:
    embeddings = MiniLMEmbeddings()
    first = ChromaMemoryStore.persistent(tmp_path / "db", embeddings=embeddings)
    first.add(NS, turns())
    first.add(NS, [FactRecord(namespace=NS, text="Carol takes a pottery class", occurred_at=T0)])
    before = snapshot(first)
    assert before[2][(QUERIES[0], "hybrid")][0][0] == turns()[0].id
    del first

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # reopening must not warn about the embedding function
        second = ChromaMemoryStore.persistent(tmp_path / "db", embeddings=MiniLMEmbeddings())
        after = snapshot(second)
    assert after == before
    assert second.count("fact", NS) == 1


def test_collection_records_the_embedding_function(tmp_path: Path) -> None:
    ChromaMemoryStore.persistent(tmp_path / "db", embeddings=MiniLMEmbeddings()).add(
        NS, turns()[:1]
    )
    client = chromadb.PersistentClient(path=str(tmp_path / "db"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        collection = client.get_collection("lamina_raw")
    function = collection.configuration["embedding_function"]  # type: ignore[typeddict-item]
    assert isinstance(function, MiniLMEmbeddingFunction)
    assert collection.configuration["hnsw"]["space"] == "cosine"  # type: ignore[index]
    # chroma can embed with the rebuilt function and finds the stored turn
    hits = collection.query(query_texts=["pottery class"], n_results=1)
    assert hits["documents"] == [[LINES[0][1]]]


def test_reopening_with_other_embeddings_or_policy_fails_loudly(tmp_path: Path) -> None:
    ChromaMemoryStore.persistent(tmp_path / "db", embeddings=FakeEmbeddings()).add(NS, turns())
    with pytest.raises(StoreConfigurationError, match="same embeddings"):
        ChromaMemoryStore.persistent(tmp_path / "db", embeddings=FakeEmbeddings(model="other"))
    with pytest.raises(StoreConfigurationError):
        ChromaMemoryStore.persistent(
            tmp_path / "db", embeddings=FakeEmbeddings(), index_policy=IndexTextPolicy(date=False)
        )
    reopened = ChromaMemoryStore.persistent(tmp_path / "db", embeddings=FakeEmbeddings())
    assert reopened.count("raw", NS) == len(LINES)
