"""benchmarks/context_answer_recall.py: where in the context the gold answer's words are."""

from __future__ import annotations

from types import ModuleType

import pytest

from tests.bench_scripts import load_benchmark

CONTEXT = "\n".join(
    [
        "[m1] (fact, 3 July 2023) Caroline: Caroline is learning the piano.",
        "[m2] (episode, 6 July 2023) Library: Caroline keeps classics and educational books.",
        "[m3] (scene, 6 July 2023) Library: Caroline's library project.",
        "(6 July 2023) Caroline: I have classics, stories from different cultures.",
    ]
)


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_benchmark("context_answer_recall")


def test_lines_are_told_apart_by_kind(bench: ModuleType) -> None:
    parts = bench._lines_of(bench._parsed(CONTEXT))
    assert set(parts) == {"fact", "episode", "scene", "raw"}
    assert parts["episode"].startswith("[m2]") and parts["raw"].startswith("(6 July 2023)")
    counted = bench._derived_lines(bench._parsed(CONTEXT))
    assert counted == {"fact": 1, "episode": 1, "scene": 1, "repeated_title": 1}  # "Library"


def test_the_share_of_answer_words_each_kind_holds(bench: ModuleType) -> None:
    want = bench.words("Classics, stories from different cultures, educational books")
    parts = bench._lines_of(bench._parsed(CONTEXT))
    assert bench._share(want, parts["episode"]) == pytest.approx(3 / 7)  # classics, educ., books
    assert bench._share(want, parts["raw"]) == pytest.approx(5 / 7)
    assert bench._share(want, parts["fact"]) == 0.0
    assert bench._share([], CONTEXT) == 0.0
