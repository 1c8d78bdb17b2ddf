import pytest

from lamina.errors import InvalidInputError
from lamina.stores.fusion import FusionConfig, reciprocal_rank_fusion


def test_rrf_sums_reciprocal_ranks() -> None:
    fused = reciprocal_rank_fusion(
        {"dense": ["a", "b", "c"], "bm25": ["c", "a"]}, FusionConfig(k=60)
    )
    scores = {h.record_id: h.score for h in fused}
    assert scores["a"] == pytest.approx(1 / 61 + 1 / 62)
    assert scores["c"] == pytest.approx(1 / 63 + 1 / 61)
    assert scores["b"] == pytest.approx(1 / 62)
    assert [h.record_id for h in fused] == ["a", "c", "b"]
    assert fused[0].ranks == {"dense": 1, "bm25": 2}
    assert fused[2].ranks == {"dense": 2}


def test_weights_and_k_change_the_order() -> None:
    rankings = {"dense": ["a", "b"], "bm25": ["b", "a"]}
    assert reciprocal_rank_fusion(rankings, FusionConfig())[0].record_id == "a"  # tie -> id
    heavy = FusionConfig(weights={"dense": 1.0, "bm25": 3.0})
    assert reciprocal_rank_fusion(rankings, heavy)[0].record_id == "b"
    zero = FusionConfig(weights={"dense": 0.0, "bm25": 1.0})
    assert reciprocal_rank_fusion(rankings, zero)[0].record_id == "b"


def test_duplicates_within_a_list_count_once() -> None:
    fused = reciprocal_rank_fusion({"dense": ["a", "a", "b"]}, FusionConfig(k=0))
    assert fused[0].score == pytest.approx(1.0)
    assert fused[0].ranks == {"dense": 1}


@pytest.mark.parametrize("kwargs", [{"k": -1}, {"candidates": 0}, {"weights": {"dense": -1.0}}])
def test_bad_config_is_rejected(kwargs: dict[str, object]) -> None:
    with pytest.raises(InvalidInputError):
        FusionConfig(**kwargs)  # type: ignore[arg-type]
