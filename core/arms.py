"""Research arms: the designs lamina-bench compares, not user settings.

:class:`ResearchArms` holds only what a committed benchmark varies against the library's
default (the benchmark and its figures are named on each field). A graph builder takes it
as its ``arms`` option (:class:`~lamina.graphs.options.GraphOptions`); the facade never
sets it, so a user's memory always runs the defaults.
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
    Small episodes are what a small model extracts most from: its capped reply covers the
    excerpt's first turns best and its last ones least, so a shorter excerpt leaves fewer
    turns without a note, at the price of more calls. 360 tokens covered as many
    observations as 320 for fewer LLM tokens per turn, and more than 400
    (``benchmarks/construction_quality.py``; docs/concepts/ingest.md)."""
    construction_format: ConstructionFormat = "lines"
    """How the Constructor's model replies: one line per item (cheap, for small local
    models) or a JSON object validated against the schema
    (``benchmarks/construction_cost.py --format``; benchmarks/RESULTS.md)."""

    update_cues: bool | None = None
    """The small-model profile's English update cues alone (``MemoryContext.small_model``):
    None follows the profile. ``benchmarks/generalization.py``,
    ``construction_supersession.py`` and ``supersession_replay.py`` compare them on and off
    (``--no-cues``; the figures in docs/benchmarks/index.md)."""
    owner_rules: bool | None = None
    """The small-model profile's English owner rules alone: None follows the profile.
    ``benchmarks/construction_quality.py`` (``--set owner_rules=false``,
    ``benchmarks/construction_quality_owner_rules.json``) and ``generalization.py``
    (``--no-owner-rules``) compare them on and off."""

    derived_share: float = 0.2
    """Share of the context budget facts, episodes and scenes may take; the rest is kept
    for raw turns, which are the evidence (unused derived room goes to raw turns).
    ``benchmarks/context_answer_recall.py`` compares it with 0 (raw turns only)."""
    source_weight: float = 0.0
    """Weight, in the fusion of the raw-turn rankings, of the ranking made of the source
    turns of the best facts, episodes and scenes (0: off; 1: as much as the question's own
    search). Off: on memory the local 1.5B model built, that ranking displaced evidence the
    question's own search had found (``benchmarks/built_recall.py``; figures in
    ``benchmarks/RECALL_RESULTS.md``)."""
    context_kinds: tuple[DerivedKind, ...] = DERIVED_KINDS
    """The derived kinds that may take context lines (within the derived share of the
    budget). A kind left out is still searched: scenes still lend their member episodes to
    the episode ranking (``SCENE_TOP``). ``()`` shows raw turns only. Every kind stays the
    default: facts only won on two of the three held-out conversations and lost on the
    third, and pooled over the three it was +0.013 [-0.040, +0.068]
    (``benchmarks/budget_answers.py --arm facts:context_kinds=["fact"]``;
    docs/benchmarks/index.md)."""
    aggregation_kinds: tuple[DerivedKind, ...] = ("fact",)
    """The derived kinds an aggregation question may show: a question for a list, a count
    or what two people share ("What hobbies does Lena have?", "How many pets...", "both"),
    unless it is about time. Facts, each about one person, are what such a question gathers
    across sessions; the episodes' longer accounts of one session crowd them out of the
    derived room. ``DERIVED_KINDS`` shows every kind for every question. Chosen with the
    local Qwen 1.5B on held-out conversations (docs/benchmarks/index.md, issue 31)."""
    premise_search: bool = True
    """When the turns best matching the question's topic are all about someone other than
    the person it names, and the draft does not confirm it, search the namespace's raw
    turns for the topic (BM25, no LLM, ``agents.recall.premise_search``); if none ties the
    person to it, the answer is a refusal. On the 8 calibration conversations (raw context,
    ``benchmarks/premise_check.py``, ``unlifted``): 171 of 375 adversarial questions, 41 of
    1,305 answerable ones."""

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
