"""The run-time context of the memory graphs: identity, thresholds and budgets.

Nodes read these through ``runtime.context`` (via :func:`context_of`); nothing inside a
node reads the environment. Defaults follow the papers (RecMem theta_sim 0.7 /
theta_count 5, EverMemOS scene tau 0.7 and 7-day max gap).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ..errors import InvalidInputError
from .namespace import validate_namespace

if TYPE_CHECKING:  # an annotation only: importing lamina.core loads no LangGraph
    from langgraph.runtime import Runtime

TriggerPolicy = Literal["eager", "recurrence", "boundary", "session"]
TRIGGER_POLICIES: tuple[TriggerPolicy, ...] = ("eager", "recurrence", "boundary", "session")
DEFAULT_TRIGGER_POLICY: TriggerPolicy = "boundary"
"""The library's trigger policy (see ``MemoryContext.trigger_policy``)."""
ConstructionFormat = Literal["lines", "json"]
DerivedKind = Literal["fact", "episode", "scene"]
DERIVED_KINDS: tuple[DerivedKind, ...] = ("fact", "episode", "scene")
MAX_INSTRUCTIONS = 2000
"""The longest ``MemoryContext.instructions`` (characters): a rule list, not a document."""
SMALL_MODEL_PROFILE: Mapping[str, Any] = MappingProxyType({"small_model": True})
"""The context of the small-model profile (``MemoryContext.small_model``): the repairs a
small local model needs and a capable one must not pay for. The facade applies it when it
runs the offline model (``MemoryConfig.memory_context``); a graph built by hand takes
``MemoryContext(**SMALL_MODEL_PROFILE, ...)`` for a small model of its own."""

RETIRED: Mapping[str, str] = MappingProxyType(
    {
        **dict.fromkeys(
            ("theta_sim", "theta_count", "neighbour_k", "merge_threshold", "boundary_gap_minutes"),
            "a constant of lamina.agents.ingest.nodes.episode_trigger",
        ),
        "boundary_llm_check": "removed: the eager policy asks the boundary judge, the "
        "boundary policy never does",
        **dict.fromkeys(
            (
                "construction_max_items",
                "construction_extra_items",
                "construction_max_tokens",
                "construction_tokens_per_item",
                "construction_frequency_penalty",
            ),
            "a constant of lamina.agents.ingest.extraction.drafting",
        ),
        "skip_trivial_turns": "removed: trivial turns always stay raw only",
        "duplicate_threshold": "a constant of lamina.agents.common.refinement",
        **dict.fromkeys(
            ("conflict_k", "conflict_pairs_per_fact", "conflict_max_pairs"),
            "a constant of lamina.agents.ingest.nodes.conflicts",
        ),
        **dict.fromkeys(
            ("scene_tau", "scene_max_gap_days"), "a constant of lamina.agents.ingest.nodes.scenes"
        ),
        "profile_scenes": "removed: nothing read it",
        "extra": "removed: nothing read it (no audit entry recorded its tags)",
        "max_llm_attempts": "MemoryConfig's attempts per structured call (the graph "
        "option max_attempts)",
        "max_retrieval_rounds": "a constant of lamina.graphs.recall",
        **dict.fromkeys(
            ("scene_top", "neighbour_turns", "max_candidates"),
            "a constant of lamina.agents.recall.retriever",
        ),
        **dict.fromkeys(
            ("k_min", "raw_depth", "derived_depth"),
            "a constant of lamina.agents.recall.retriever",
        ),
        "attribution_check": "removed: recall always refuses a draft resting on another "
        "person's words",
        **dict.fromkeys(
            ("update_cues", "owner_rules"),
            "part of small_model, the small-model profile; lamina-bench varies it alone "
            "as a research arm (ResearchArms from lamina.graphs)",
        ),
        "judge_max_tokens": "a constant of lamina.agents.recall.judge",
        "rewrite_max_tokens": "a constant of lamina.agents.recall.rewriter",
        "answer_max_tokens": "a constant of lamina.agents.recall.answer",
        "refresh_max_tokens": "a constant of lamina.agents.recall.refresher",
        "insufficient_answer": "removed: an answer still judged insufficient after the "
        "last round is refused",
        **dict.fromkeys(
            (
                "boundary_max_tokens",
                "construction_format",
                "derived_share",
                "source_weight",
                "aggregation_kinds",
                "premise_search",
                "context_kinds",
            ),
            "a research arm of lamina-bench: a graph builder's arms=ResearchArms(...), "
            "ResearchArms from lamina.graphs",
        ),
    }
)
"""Former :class:`MemoryContext` fields and where each went, for a fix-it error."""


def _encodable(text: str) -> bool:
    """Whether ``text`` can be encoded as UTF-8 (it holds no lone surrogate)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


__all__ = [
    "DEFAULT_TRIGGER_POLICY",
    "DERIVED_KINDS",
    "TRIGGER_POLICIES",
    "ConstructionFormat",
    "DerivedKind",
    "SMALL_MODEL_PROFILE",
    "MemoryContext",
    "RETIRED",
    "TriggerPolicy",
    "context_of",
]


@dataclass(kw_only=True)
class MemoryContext:
    """Identity, thresholds and budgets for one run of a memory graph."""

    namespace: str = "default"
    """Tenant scope (a user, an agent) every read and write of the run is confined to;
    nothing crosses namespaces. ``Memory`` takes it per call (``namespace=``), so a config
    never sets it; "default" serves a graph run with no context at all."""
    timezone: str = "UTC"
    """Time zone in which dates are shown to the model and relative times ("yesterday",
    "last Friday") are resolved. UTC is the default because a library cannot know its
    user's zone and UTC times are never ambiguous; set the user's zone (an IANA name such
    as "Europe/Berlin") so that "yesterday" means the user's yesterday."""

    trigger_policy: TriggerPolicy = DEFAULT_TRIGGER_POLICY
    """When consolidation runs: eager (every turn), recurrence, boundary or session.

    Boundary (with 360-token episodes) is the default: with a small local model it built
    facts from far more of the evidence turns than recurrence."""

    instructions: str | None = None
    """The application's rules for what construction keeps or leaves out ("only the
    user's preferences and plans", "never store health data"), appended to the
    construction call's system message and ranked above its own rules
    (``prompts.construction.APP_RULES``). None
    (the default) leaves the prompt as it is. A model follows them as well as it follows
    its other rules; the raw turns are stored whatever they say."""
    small_model: bool = False
    """The small-model profile: English rules that repair what a small local model gets
    wrong, which a capable model must not pay for. The facade turns it on for the offline
    model only (``MemoryConfig.memory_context``, :data:`SMALL_MODEL_PROFILE`).

    Update check. False (the default): each new fact is checked against its person's
    nearest stored facts by embedding, with no word list, and the model decides every
    pair, in any language. True: pairs come from an English slot pre-filter, a pair whose
    newer fact states the change in English words ("moved to", "quit";
    ``agents.ingest.supersession.update_cues``) is an update without a call, and only
    uncued pairs with a word of change go to the model, because a small local model
    judges pairs poorly.

    Construction. False: the owner the model names for a note stands. True: it is weighed
    against its source turn's English grammar (speaker, "you", pronouns, pets, relatives;
    ``agents.ingest.ownership.owner_check``), which overrules it, and a note the model wrote in the
    first person ("I moved to Berlin") is retold in the third. Either way an owner who is
    not present (a speaker, or a person the excerpt names; ``agents.ingest.ownership.present``) is
    refused for that note, counted ``owner_absent``. The rules fix many of a small model's
    owners but overrule some of a capable model's right ones, so they are the local
    model's profile and not a tax on every model."""

    # ---------------------------------------------------------- recall (pooled evidence)
    context_tokens: int = 1500
    """Recall: token budget of the memories shown to the Judge and the answer. Larger
    budgets cost prompt tokens and time on every question; 1,500 answered better than a
    smaller budget with the local model. It also bounds a question's length with the
    local model."""

    def __post_init__(self) -> None:
        validate_namespace(self.namespace)
        if self.instructions is not None and (
            not isinstance(self.instructions, str) or not self.instructions.strip()
        ):
            raise InvalidInputError("instructions must be non-empty text, or None for none")
        if self.instructions is not None and not _encodable(self.instructions):
            raise InvalidInputError(
                "instructions hold a lone UTF-16 surrogate, which is not valid text; decode "
                "the original bytes with errors='replace' first"
            )
        if self.instructions is not None and len(self.instructions) > MAX_INSTRUCTIONS:
            raise InvalidInputError(
                f"instructions are {len(self.instructions)} characters; at most "
                f"{MAX_INSTRUCTIONS} fit the construction prompt"
            )
        if self.trigger_policy not in TRIGGER_POLICIES:
            raise InvalidInputError(
                f"unknown trigger_policy {self.trigger_policy!r}; use one of {TRIGGER_POLICIES}"
            )
        if self.context_tokens < 1:
            raise InvalidInputError(f"context_tokens must be >= 1, got {self.context_tokens}")
        try:
            ZoneInfo(self.timezone)
        except (ZoneInfoNotFoundError, ValueError) as e:
            raise InvalidInputError(
                f"unknown timezone {self.timezone!r}; use an IANA name like 'Europe/Berlin'"
            ) from e

    @property
    def tz(self) -> ZoneInfo:
        """The context's time zone."""
        return ZoneInfo(self.timezone)


def context_of(runtime: Runtime[MemoryContext] | None) -> MemoryContext:
    """The run's context, or the defaults when the caller passed none."""
    ctx = getattr(runtime, "context", None)
    if isinstance(ctx, MemoryContext):
        return ctx
    if isinstance(ctx, dict):  # e.g. sent as JSON by LangGraph Studio or the HTTP API
        check_fields(ctx)
        return MemoryContext(**ctx)
    return MemoryContext()


def check_fields(values: Mapping[str, Any]) -> None:
    """Raise a fix-it :class:`InvalidInputError` for a name that is no context field.

    A former field (:data:`RETIRED`) is named with where it went.
    """
    known = set(MemoryContext.__dataclass_fields__)
    retired = sorted(set(values) & set(RETIRED))
    if retired:
        where = "; ".join(f"{name}: {RETIRED[name]}" for name in retired)
        raise InvalidInputError(f"MemoryContext has no setting {retired} any more ({where})")
    unknown = sorted(set(values) - known)
    if unknown:
        raise InvalidInputError(f"unknown MemoryContext field(s) {unknown}; known: {sorted(known)}")
