"""Research arms: the designs lamina-bench compares, not user settings.

:class:`ResearchArms` holds only what a committed benchmark varies against the library's
default. A graph builder takes it as its ``arms`` option
(:class:`~lamina.graphs.options.GraphOptions`); the facade never sets it, so a user's
memory always runs the defaults.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import InvalidInputError
from .context import DERIVED_KINDS, ConstructionFormat, DerivedKind, MemoryContext

__all__ = ["ResearchArms"]


@dataclass(frozen=True, kw_only=True)
class ResearchArms:
    """Designs under comparison in lamina-bench; the defaults are lamina's own."""

    boundary_max_tokens: int = 360
    """Boundary policy: buffered text longer than this (approx. tokens) closes the episode.
    A small model's capped reply covers an excerpt's first turns best, so shorter excerpts
    leave fewer turns without a note, at the price of more calls (docs/concepts/ingest.md)."""
    construction_format: ConstructionFormat = "lines"
    """How the Constructor's model replies: one line per item (cheap, for small local
    models) or a JSON object validated against the schema."""

    update_cues: bool | None = None
    """The small-model profile's English update cues alone (``MemoryContext.small_model``):
    None follows the profile."""
    owner_rules: bool | None = None
    """The small-model profile's English owner rules alone: None follows the profile."""

    derived_share: float = 0.2
    """Share of the context budget facts, episodes and scenes may take; the rest is kept
    for raw turns, which are the evidence (unused derived room goes to raw turns)."""
    source_weight: float = 0.0
    """Weight, in the fusion of the raw-turn rankings, of the ranking made of the source
    turns of the best facts, episodes and scenes (0: off; 1: as much as the question's own
    search). Off by default: on memory a small local model built, that ranking displaced
    evidence the question's own search had found."""
    context_kinds: tuple[DerivedKind, ...] = DERIVED_KINDS
    """The derived kinds that may take context lines (within the derived share of the
    budget). A kind left out is still searched: scenes still lend their member episodes to
    the episode ranking (``SCENE_TOP``). ``()`` shows raw turns only. Every kind is the
    default: facts alone showed no clear gain."""
    aggregation_kinds: tuple[DerivedKind, ...] = ("fact",)
    """The derived kinds an aggregation question may show: a question for a list, a count
    or what two people share ("What hobbies does Lena have?", "How many pets...", "both"),
    unless it is about time. Facts, each about one person, are what such a question gathers
    across sessions; the episodes' longer accounts of one session crowd them out of the
    derived room. ``DERIVED_KINDS`` shows every kind for every question."""
    premise_search: bool = True
    """When the turns best matching the question's topic are all about someone other than
    the person it names, and the draft does not confirm it, search the namespace's raw
    turns for the topic (BM25, no LLM, ``agents.recall.premise_search``); if none ties the
    person to it, the answer is a refusal."""

    def cues_on(self, ctx: MemoryContext) -> bool:
        """Whether the update check uses the English cues (the arm, else the profile)."""
        return ctx.small_model if self.update_cues is None else self.update_cues

    def owner_rules_on(self, ctx: MemoryContext) -> bool:
        """Whether construction applies the owner rules (the arm, else the profile)."""
        return ctx.small_model if self.owner_rules is None else self.owner_rules

    def __post_init__(self) -> None:
        if self.boundary_max_tokens < 1:
            raise InvalidInputError(
                f"boundary_max_tokens must be >= 1, got {self.boundary_max_tokens}"
            )
        if self.construction_format not in ("lines", "json"):
            raise InvalidInputError(
                f"unknown construction_format {self.construction_format!r}; use 'lines' or 'json'"
            )
        if not 0.0 <= self.derived_share < 1.0:
            raise InvalidInputError(
                f"derived_share is the budget share of derived memory, in [0, 1); "
                f"got {self.derived_share}"
            )
        if not 0.0 <= self.source_weight <= 10.0:
            raise InvalidInputError(
                f"source_weight is a fusion weight, in [0, 10]; got {self.source_weight}"
            )
        for name in ("context_kinds", "aggregation_kinds"):
            unknown = sorted(set(getattr(self, name)) - set(DERIVED_KINDS))
            if unknown:
                raise InvalidInputError(
                    f"unknown {name} {unknown}; use some of {list(DERIVED_KINDS)}"
                )
