"""One search request over several granularities and channels: each ranking the same as its
own ``search``, each query embedded once, one change-log read for every mirror."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from lamina.errors import InvalidInputError
from lamina.records import EpisodeRecord, FactRecord, Granularity
from lamina.stores import ChromaMemoryStore, TimeWindow
from lamina.stores.base import (
    PLAIN,
    Channel,
    MemoryStore,
    Ranking,
    ScoredRecord,
    SearchRequest,
)
from lamina.stores.changelog import PROBE
from lamina.stores.rerank import RERANK_CHANNEL, RerankConfig, RerankingStore
from lamina.testing import FakeEmbeddings, alternating_turn

NS = "user:alice"
T0 = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)
TEXTS = [
    "we baked bread in the new oven",
    "Alice flew a kite at the beach",
    "the dog ran along the beach",
    "the bakery sold out of bread",
    "Bob's kite got stuck in a tree",
    "a lemon cake for the birthday",
]


def records() -> list[Any]:
    turns = [alternating_turn(NS, i, text, T0) for i, text in enumerate(TEXTS)]
    facts = [
        FactRecord(namespace=NS, text="Alice bakes bread", subject="Alice", occurred_at=T0),
        FactRecord(namespace=NS, text="Bob flies kites at the beach", occurred_at=T0),
    ]
    episode = EpisodeRecord(
        namespace=NS, title="Beach day", text="kites and the dog", occurred_at=T0
    )
    return [*turns, *facts, episode]


def request(**changes: Any) -> SearchRequest:
    window = TimeWindow.between(T0 + timedelta(minutes=2), T0 + timedelta(minutes=5))
    asked: dict[str, Any] = {
        "query": "bread at the beach",
        "namespace": NS,
        "rankings": {
            "raw": Ranking(k=4),
            "fact": Ranking(k=2, where={"superseded": False}),
            "episode": Ranking(k=2),
        },
        "channels": {
            "window": Channel(window=window),
            "speaker": Channel(query="kite", where={"speaker": ["Alice"]}, only=("raw",)),
        },
    }
    return SearchRequest(**(asked | changes))


@pytest.fixture
def store(empty_store: ChromaMemoryStore) -> ChromaMemoryStore:
    """The records on each backend (Chroma, Postgres)."""
    empty_store.add(NS, records())
    return empty_store


def test_each_ranking_of_a_request_is_what_its_own_search_returns(
    store: ChromaMemoryStore,
) -> None:
    asked = request()
    answer = store.search_many(asked)
    assert {g: set(c) for g, c in answer.items()} == {
        "raw": {PLAIN, "window", "speaker"},
        "fact": {PLAIN, "window"},
        "episode": {PLAIN, "window"},
    }
    for s in asked.searches():
        alone = store.search(s.query, s.granularity, NS, k=s.k, window=s.window, where=s.where)
        assert answer[s.granularity][s.channel] == alone
    speaker = answer["raw"]["speaker"]
    assert speaker and {h.record.speaker for h in speaker} == {"Alice"}  # type: ignore[attr-defined]
    assert answer["raw"]["speaker"][0].record.text == "Alice flew a kite at the beach"


def test_a_request_embeds_each_query_once_and_reads_the_change_log_once() -> None:
    writer = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    prefix = writer._collections[Granularity.RAW].name.removesuffix("_raw")
    reader = ChromaMemoryStore(writer.client, embeddings=FakeEmbeddings(), collection_prefix=prefix)
    writer.add(NS, records())
    reader.search_many(request())  # the reader's mirrors are loaded now
    late = alternating_turn(NS, 9, "bread crumbs on the beach towel", T0)
    writer.add(NS, [late])  # another process's write

    embedded: list[str] = []
    embed_query = reader.embeddings.embed_query
    reader.embeddings.embed_query = lambda text: embedded.append(text) or embed_query(text)  # type: ignore[method-assign]
    log = reader._log._collection
    reads: list[Any] = []
    get = log.get
    log.get = lambda **kw: reads.append(kw) or get(**kw)  # type: ignore[method-assign]

    answer = reader.search_many(request())
    assert sorted(embedded) == ["bread at the beach", "kite"]
    assert len(reads) == 1  # raw, fact and episode caught up in one read
    assert late.id in [h.record.id for h in answer["raw"][PLAIN]]


def test_the_change_log_is_read_again_only_for_a_granularity_with_more_changes() -> None:
    writer = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    prefix = writer._collections[Granularity.RAW].name.removesuffix("_raw")
    reader = ChromaMemoryStore(writer.client, embeddings=FakeEmbeddings(), collection_prefix=prefix)
    writer.add(NS, records())
    reader.search_many(request())
    late = [alternating_turn(NS, 10 + i, f"bread roll number {i}", T0) for i in range(PROBE + 4)]
    for turn in late:  # one change-log slot each: more than one read's probe
        writer.add(NS, [turn])
    writer.add(NS, [FactRecord(namespace=NS, text="Bob bakes bread too", occurred_at=T0)])
    log = reader._log._collection
    reads: list[Any] = []
    get = log.get
    log.get = lambda **kw: reads.append(kw) or get(**kw)  # type: ignore[method-assign]
    answer = reader.search_many(request(rankings={"raw": Ranking(k=50), "fact": Ranking(k=5)}))
    assert len(reads) == 2 and len(reads[1]["ids"]) == PROBE  # the second for raw alone
    assert {t.id for t in late} <= {h.record.id for h in answer["raw"][PLAIN]}
    assert "Bob bakes bread too" in [h.record.text for h in answer["fact"][PLAIN]]


class OneByOne(MemoryStore):
    """A store that only searches one ranking at a time: the protocol's default asks it."""

    def __init__(self, inner: ChromaMemoryStore) -> None:
        self.inner = inner
        self.calls = 0

    def search(self, *args: Any, **kwargs: Any) -> list[ScoredRecord]:
        self.calls += 1
        return self.inner.search(*args, **kwargs)


def test_the_protocol_default_answers_a_request_one_search_at_a_time(
    store: ChromaMemoryStore,
) -> None:
    asked = request()
    one_by_one = OneByOne(store)
    assert one_by_one.search_many(asked) == store.search_many(asked)
    assert one_by_one.calls == len(asked.searches()) == 7


class KeywordReranker:
    def __init__(self, word: str) -> None:
        self.word = word
        self.queries: list[str] = []

    def score(self, query: str, passages: list[str]) -> list[float]:
        self.queries.append(query)
        return [float(p.lower().count(self.word)) for p in passages]


def test_a_reranking_store_reranks_each_ranking_for_its_own_query(
    store: ChromaMemoryStore,
) -> None:
    reranker = KeywordReranker("kite")
    wrapped = RerankingStore(store, reranker, RerankConfig(top_n=4))
    asked = request(rankings={"raw": Ranking(k=3)})
    answer = wrapped.search_many(asked)
    assert sorted(reranker.queries) == ["bread at the beach", "bread at the beach", "kite"]
    for channel, hits in answer["raw"].items():
        assert len(hits) <= 3 and "kite" in hits[0].record.text, channel
        assert RERANK_CHANNEL in hits[0].ranks
    alone = wrapped.search("bread at the beach", "raw", NS, k=3)
    assert alone == answer["raw"][PLAIN]


def test_a_bad_request_is_refused_before_any_search(store: ChromaMemoryStore) -> None:
    embeddings = store.embeddings
    assert isinstance(embeddings, FakeEmbeddings)
    embeddings.calls.clear()
    with pytest.raises(InvalidInputError, match="plain"):
        store.search_many(request(channels={PLAIN: Channel()}))
    own = TimeWindow.after_(T0)
    with pytest.raises(InvalidInputError, match="window"):
        store.search_many(request(rankings={"raw": Ranking(window=own)}))
    with pytest.raises(InvalidInputError, match="cannot filter fact records on .speaker."):
        store.search_many(request(channels={"who": Channel(where={"speaker": "Alice"})}))
    with pytest.raises(InvalidInputError, match="k must"):
        store.search_many(request(rankings={"raw": Ranking(k=0)}))
    assert embeddings.calls == []  # nothing was embedded


def test_a_request_of_no_granularity_finds_nothing(store: ChromaMemoryStore) -> None:
    """A request that asks no ranking answers ``{}`` on every backend, as the protocol's
    own one-search-per-ranking answer does; on Postgres its statement had no ranking
    and the server refused it (a bare ``psycopg`` syntax error)."""
    for mode in ("hybrid", "dense", "bm25"):
        assert store.search_many(request(rankings={}, mode=mode)) == {}, mode
        assert store.search_many(request(rankings={}, channels={}, mode=mode)) == {}, mode
