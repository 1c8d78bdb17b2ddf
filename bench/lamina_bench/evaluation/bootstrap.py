"""Bootstrap confidence intervals for per-question means (recall, F1).

A benchmark's mean over a few hundred questions moves by a few hundredths when the
questions change; the interval says how far, so a change of 0.01 is not read as progress.
Questions are resampled with replacement (percentile bootstrap), with a fixed seed so the
same scores always give the same interval.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

DEFAULT_RESAMPLES = 2000
DEFAULT_SEED = 15


@dataclass(frozen=True)
class Interval:
    """A mean and its bootstrap confidence interval."""

    mean: float
    low: float
    high: float
    n: int
    """Questions the mean is over."""

    def format(self, digits: int = 3) -> str:
        """``0.652 [0.628, 0.675]``; ``-`` with no questions."""
        if self.n == 0:
            return "-"
        return f"{self.mean:.{digits}f} [{self.low:.{digits}f}, {self.high:.{digits}f}]"

    def as_dict(self, digits: int = 4) -> dict[str, float | int]:
        """JSON-ready figures."""
        return {
            "mean": round(self.mean, digits),
            "ci95_low": round(self.low, digits),
            "ci95_high": round(self.high, digits),
            "n": self.n,
        }


def bootstrap_mean(
    values: Sequence[float],
    *,
    level: float = 0.95,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> Interval:
    """Percentile-bootstrap interval of the mean of ``values``.

    Raises:
        ValueError: ``level`` is not in (0, 1) or ``resamples`` is below 100.
    """
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    if resamples < 100:
        raise ValueError(f"resamples must be >= 100, got {resamples}")
    data = np.asarray(values, dtype=np.float64)
    if data.size == 0:
        return Interval(float("nan"), float("nan"), float("nan"), 0)
    rng = np.random.default_rng(seed)
    means = data[rng.integers(0, data.size, size=(resamples, data.size))].mean(axis=1)
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return Interval(float(data.mean()), float(low), float(high), int(data.size))
