"""Bootstrap confidence intervals of per-question means."""

from __future__ import annotations

import pytest

from lamina_bench.evaluation.bootstrap import bootstrap_mean


def test_the_interval_brackets_the_mean_and_narrows_with_more_questions() -> None:
    few = bootstrap_mean([0.0, 1.0] * 20)
    many = bootstrap_mean([0.0, 1.0] * 500)
    assert few.low < few.mean == 0.5 < few.high and many.low < 0.5 < many.high
    assert many.high - many.low < (few.high - few.low) / 3
    assert 0.30 < few.low < 0.40  # about mean -/+ 1.96 * 0.5 / sqrt(40)


def test_the_interval_is_reproducible_and_collapses_on_constant_scores() -> None:
    values = [0.2, 0.9, 0.4, 1.0, 0.0, 0.7]
    assert bootstrap_mean(values) == bootstrap_mean(values)
    assert bootstrap_mean(values, seed=1) != bootstrap_mean(values, seed=2)
    flat = bootstrap_mean([0.75] * 30)
    assert flat.low == flat.high == flat.mean == 0.75
    assert flat.format() == "0.750 [0.750, 0.750]"
    assert flat.as_dict() == {"mean": 0.75, "ci95_low": 0.75, "ci95_high": 0.75, "n": 30}


def test_no_questions_and_bad_settings() -> None:
    assert bootstrap_mean([]).n == 0 and bootstrap_mean([]).format() == "-"
    with pytest.raises(ValueError, match="level"):
        bootstrap_mean([1.0], level=1.0)
    with pytest.raises(ValueError, match="resamples"):
        bootstrap_mean([1.0], resamples=10)
