"""The store reaches its search engine through the KeywordIndex seam only.

A factory passed as ``keyword_index`` gets the store's sources and is the only engine the
store talks to: told of each write and deleted namespace, asked for the indexes a search
ranks. Here it wraps the default engine (the BM25 mirror) and records what it is asked.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from lamina.stores import BM25Params, ChromaMemoryStore, MirrorConfig
from lamina.stores.keyword import KeywordIndex, KeywordSources
from lamina.stores.mirrors import MirrorCache
from lamina.testing import FakeEmbeddings, alternating_turn

NS = "user:alice"
T0 = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)


class Recording:
    """A KeywordIndex that records each call, then hands it to the default engine."""

    def __init__(self, inner: KeywordIndex) -> None:
        self.inner = inner
        self.calls: list[str] = []

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.inner, name)

        def recorded(*args: Any, **kwargs: Any) -> Any:
            self.calls.append(name)
            return method(*args, **kwargs)

        return recorded


def test_every_write_search_and_delete_goes_through_the_injected_index() -> None:
    built: list[Recording] = []
    given: list[KeywordSources] = []

    def factory(sources: KeywordSources) -> KeywordIndex:
        given.append(sources)
        engine = MirrorCache.from_sources(sources, bm25=BM25Params(), config=MirrorConfig())
        built.append(Recording(engine))
        return built[-1]  # type: ignore[return-value]

    store = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings(), keyword_index=factory)
    (index,) = built
    (sources,) = given
    assert sources.embeddings is store.embeddings and sources.policy is store.index_policy

    store.add(NS, [alternating_turn(NS, 0, "we rode a zeppelin over Lisbon", T0)])
    assert index.calls == ["applied"]
    (hit,) = store.search("zeppelin", "raw", NS, k=1)
    assert hit.record.text == "we rode a zeppelin over Lisbon" and index.calls[-1] == "get_many"
    store.lexical_index("raw", NS)
    assert index.calls[-1] == "get"
    store.delete_namespace(NS)
    assert index.calls.count("drop") == 4  # one per granularity
    store.refresh_lexical()
    assert index.calls[-1] == "clear"


def test_options_of_the_default_engine_still_configure_it() -> None:
    store = ChromaMemoryStore.ephemeral(
        embeddings=FakeEmbeddings(), bm25=BM25Params(k1=0.9), mirrors=MirrorConfig(exact_limit=5)
    )
    engine = store._mirrors
    assert isinstance(engine, MirrorCache)
    assert engine._bm25.k1 == 0.9 and engine.config.exact_limit == 5
