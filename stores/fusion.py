"""Reciprocal Rank Fusion of several ranked lists."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..errors import InvalidInputError


@dataclass(frozen=True, kw_only=True)
class FusionConfig:
    """RRF settings: ``score(d) = sum_c weight_c / (k + rank_c(d))`` with 1-based ranks."""

    k: float = 60.0
    """Rank offset; larger values flatten the head of each list."""
    weights: Mapping[str, float] = field(default_factory=lambda: {"dense": 1.0, "bm25": 1.0})
    """Weight per channel name; a channel missing here gets weight 1."""
    candidates: int = 50
    """How many results each channel contributes before fusion (at least ``k`` requested)."""

    def __post_init__(self) -> None:
        if self.k < 0:
            raise InvalidInputError(f"RRF k must be >= 0, got {self.k}")
        if self.candidates < 1:
            raise InvalidInputError(f"candidates must be >= 1, got {self.candidates}")
        for name, w in self.weights.items():
            if w < 0:
                raise InvalidInputError(f"weight of channel {name!r} must be >= 0, got {w}")


@dataclass(frozen=True)
class FusedHit:
    """One fused result with each channel's 1-based rank (absent if it did not rank it)."""

    record_id: str
    score: float
    ranks: dict[str, int]


def reciprocal_rank_fusion(
    rankings: Mapping[str, Sequence[str]], config: FusionConfig
) -> list[FusedHit]:
    """Fuse ``{channel: [record ids, best first]}``; ties break by record id."""
    scores: dict[str, float] = {}
    ranks: dict[str, dict[str, int]] = {}
    for channel, ids in rankings.items():
        weight = config.weights.get(channel, 1.0)
        for rank, rid in enumerate(ids, start=1):
            if channel in ranks.get(rid, {}):
                continue  # a duplicate within one list counts once, at its best rank
            scores[rid] = scores.get(rid, 0.0) + weight / (config.k + rank)
            ranks.setdefault(rid, {})[channel] = rank
    ordered = sorted(scores, key=lambda rid: (-scores[rid], rid))
    return [FusedHit(rid, scores[rid], ranks[rid]) for rid in ordered]
