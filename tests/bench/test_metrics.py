import pytest

from lamina_bench.evaluation.metrics import first_distinct, mem0_f1, mem0_tokens, recall_at


def test_mem0_tokenisation_keeps_other_punctuation() -> None:
    assert mem0_tokens(" Caroline's  dog, Rex! ") == {"caroline's", "dog", "rex"}
    assert mem0_tokens("7 May 2023.") == {"7", "may", "2023"}


@pytest.mark.parametrize(
    ("pred", "gold", "f1"),
    [
        ("Rex", "Rex", 1.0),
        ("the dog Rex", "Rex", 0.5),
        ("7 May 2023", "May 7, 2023", 1.0),
        ("Rex Rex Rex", "Rex", 1.0),  # sets: duplicates count once
        ("", "Rex", 0.0),
        (None, "Rex", 0.0),
        ("cat", "dog", 0.0),
    ],
)
def test_mem0_f1(pred: object, gold: object, f1: float) -> None:
    assert mem0_f1(pred, gold) == pytest.approx(f1)


def test_recall_helpers() -> None:
    assert recall_at({"a", "b"}, ["a", "c", "b"], 2) == 0.5
    assert recall_at(set(), ["a"], 1) == 0.0
    assert first_distinct(["s1", "s1", "s2", "s3"], 2) == ["s1", "s2"]
