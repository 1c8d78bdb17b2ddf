import random

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from lamina.stores.bm25 import BM25Index
from lamina.stores.lexical import Analyzer
from lamina.stores.okapi import BM25Params

WORDS = "apple banana cherry dog eagle falcon guitar harbor island jungle kayak lemon".split()


def corpus(seed: int, n: int) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choices(WORDS, k=rng.randint(1, 12))) for _ in range(n)]


def reference_scores(texts: dict[str, str], query: str, analyzer: Analyzer) -> dict[str, float]:
    ids = sorted(texts)
    model = BM25Okapi([analyzer(texts[i]) for i in ids])
    scores = model.get_scores(analyzer(query))
    terms = set(analyzer(query))
    return {
        i: float(s) for i, s in zip(ids, scores, strict=True) if terms & set(analyzer(texts[i]))
    }


def index_of(texts: dict[str, str], analyzer: Analyzer) -> BM25Index:
    index = BM25Index(analyzer)
    index.upsert((i, t, {"namespace": "n"}) for i, t in texts.items())
    return index


@pytest.mark.parametrize("seed", range(5))
def test_scores_equal_rank_bm25(seed: int) -> None:
    analyzer = Analyzer(stop_words=frozenset(), stem=False)
    texts = {f"d{i}": t for i, t in enumerate(corpus(seed, 40))}
    index = index_of(texts, analyzer)
    for query in ["apple dog", "kayak kayak lemon", "zebra", "harbor"]:
        ours = index.scores(query)
        ref = reference_scores(texts, query, analyzer)
        assert ours.keys() == ref.keys()
        for key, value in ref.items():
            assert ours[key] == pytest.approx(value, rel=1e-9, abs=1e-12)


def test_stays_equal_after_updates_and_deletes() -> None:
    analyzer = Analyzer(stop_words=frozenset(), stem=False)
    texts = {f"d{i}": t for i, t in enumerate(corpus(7, 30))}
    index = index_of(texts, analyzer)
    index.delete(["d1", "d2", "missing"])
    del texts["d1"], texts["d2"]
    texts["d3"] = "eagle eagle falcon"
    texts["new"] = "guitar island"
    index.upsert([("d3", texts["d3"], {}), ("new", texts["new"], {})])
    assert index.ids() == set(texts)
    ref = reference_scores(texts, "eagle guitar", analyzer)
    assert index.scores("eagle guitar") == pytest.approx(ref)


def test_compaction_keeps_results() -> None:
    analyzer = Analyzer(stop_words=frozenset(), stem=False)
    texts = {f"d{i}": t for i, t in enumerate(corpus(3, 3000))}
    index = index_of(texts, analyzer)
    doomed = [f"d{i}" for i in range(2500)]
    index.delete(doomed)
    for d in doomed:
        del texts[d]
    assert len(index) == 500
    assert len(index._ids) == 500  # dead slots were dropped
    assert index.scores("cherry jungle") == pytest.approx(
        reference_scores(texts, "cherry jungle", analyzer)
    )


def test_search_orders_filters_and_breaks_ties_by_id() -> None:
    index = BM25Index(Analyzer(stem=False))
    index.upsert(
        [
            ("b", "red fox", {"speaker": "x"}),
            ("a", "red fox", {"speaker": "y"}),
            ("c", "red red fox fox", {"speaker": "x"}),
            ("d", "blue whale", {"speaker": "x"}),
        ]
        + [(f"z{i}", f"filler text {i}", {"speaker": "x"}) for i in range(10)]
    )
    assert [h.record_id for h in index.search("red fox", 10)] == ["c", "a", "b"]
    assert [h.record_id for h in index.search("red fox", 2)][:1] == ["c"]
    only_x = index.search("red fox", 10, lambda m: m["speaker"] == "x")
    assert [h.record_id for h in only_x] == ["c", "b"]
    assert index.search("", 5) == []
    assert index.search("red", 0) == []


def test_filtered_search_finds_rare_matches_beyond_the_first_window() -> None:
    index = BM25Index(Analyzer(stem=False))
    index.upsert((f"d{i:03}", "common word", {"keep": i == 250}) for i in range(300))
    hits = index.search("common", 1, lambda m: bool(m["keep"]))
    assert [h.record_id for h in hits] == ["d250"]


def test_parameters_change_scores() -> None:
    texts = {"a": "apple apple apple banana", "b": "apple cherry", "c": "dog"}
    plain = index_of(texts, Analyzer(stem=False)).scores("apple")
    tuned = BM25Index(Analyzer(stem=False), BM25Params(k1=0.5, b=0.0))
    tuned.upsert((i, t, {}) for i, t in texts.items())
    assert tuned.scores("apple") != plain
    assert np.isfinite(list(plain.values())).all()
