"""Update cues read in the person's own words when the model's statement lost them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from lamina.agents.common.deps import NodeDeps, StepLog
from lamina.agents.ingest.nodes.conflicts import check_conflicts
from lamina.agents.ingest.supersession.slots import CandidatePair, candidate_pairs
from lamina.agents.ingest.supersession.update_cues import pair_cue, update_cue
from lamina.core.context import MemoryContext
from lamina.llm.structured import StructuredCaller
from lamina.records import FactRecord
from lamina.records.model import RawTurn
from lamina.stores import ChromaMemoryStore
from lamina.testing import FakeEmbeddings, SchemaChatModel

NS = "user:rosa"
T0 = datetime(2025, 5, 1, 9, 0, tzinfo=UTC)
CHECK = "SupersessionCheck"


def fact(fid: str, text: str, days: int = 0, **kw: Any) -> FactRecord:
    when = T0 + timedelta(days=days)
    kw.setdefault("subject", "Rosa")
    return FactRecord(id=fid, namespace=NS, text=text, occurred_at=when, valid_from=when, **kw)


def pair_of(old: str, new: str, **kw: Any) -> CandidatePair:
    (pair,) = candidate_pairs([fact("new", new, days=30, **kw)], [fact("old", old)])
    return pair


@pytest.mark.parametrize(
    ("old", "new", "turn", "kind"),
    [
        # the model kept the plan and lost "Plans changed"
        (
            "Rosa is driving to her parents' place for Christmas.",
            "Rosa's parents are coming for Christmas, so no long drive.",
            "Plans changed: my parents are coming to us for Christmas, so no long drive.",
            "arriving",
        ),
        # the model wrote a preference and lost "replaced ... as my favourite"
        (
            "Rosa's favourite food is sushi.",
            "Rosa says her favourite food is tacos and sushi.",
            "Tacos have replaced sushi as my favourite food.",
            "arriving",
        ),
        # a word of another slot ("house") is the plan's thing
        (
            "Rosa is planning to buy a house next year.",
            "Rosa plans to keep renting the house.",
            "We've decided to keep renting. The house plan is off.",
            "leaving",
        ),
        (
            "Rosa's favourite sport is tennis.",
            "Rosa's favourite sports are padel and tennis.",
            "Padel is my favourite sport now, I barely play tennis anymore.",
            "leaving",
        ),
    ],
)  # fmt: skip
def test_a_change_said_in_the_turn_is_a_cue(old: str, new: str, turn: str, kind: str) -> None:
    pair = pair_of(old, new)
    assert update_cue(pair) is None  # the model's statement alone says no change
    cue = pair_cue(pair, [turn])
    assert cue is not None and cue.kind == kind


@pytest.mark.parametrize(
    ("old", "new", "turn"),
    [
        # about the speaker's brother, not her
        (
            "Rosa lives in Valencia.",
            "Rosa talked about Valencia and Seville.",
            "My brother moved from Valencia to Seville.",
        ),
        # a hypothetical
        (
            "Rosa plans a trip to Lima in May.",
            "Rosa talked about the Lima trip.",
            "If the Lima trip is cancelled, I'll stay home.",
        ),
        # a change of something the older fact does not name
        (
            "Rosa plans a trip to Lima in May.",
            "Rosa is packing for the Lima trip.",
            "Packing for Lima! The dentist appointment is cancelled though.",
        ),
    ],
)  # fmt: skip
def test_no_cue_from_a_turn_about_something_else(old: str, new: str, turn: str) -> None:
    assert pair_cue(pair_of(old, new), [turn]) is None


def test_a_stated_cue_told_of_a_relative_in_the_turn_is_dropped() -> None:
    old, new = "Rosa's email is rosa@mail.org.", "Rosa will send the new email address to you."
    pair = pair_of(old, new, kind="preference")
    assert update_cue(pair) is not None  # the model's wording alone reads as a change
    turn = "My daughter has a new email address, she'll send it to you."
    assert pair_cue(pair, [turn]) is None
    # the speaker's own change in the same words stays one
    assert pair_cue(pair, ["I have a new email address, I'll send it to you."]) is not None


@pytest.mark.parametrize(
    ("new", "cued"),
    [
        ("Rosa's boyfriend is Daniel.", True),
        ("Rosa and Daniel have been dating since spring.", True),
        ("Rosa has no boyfriend.", False),
        ("Rosa's ex-boyfriend Daniel called.", False),
    ],
)
def test_a_named_partner_ends_single(new: str, cued: bool) -> None:
    pairs = candidate_pairs([fact("new", new, days=30)], [fact("old", "Rosa is single.")])
    assert (bool(pairs) and update_cue(pairs[0]) is not None) is cued


def turn(tid: str, speaker: str, text: str, days: int) -> RawTurn:
    return RawTurn(
        id=tid,
        namespace=NS,
        speaker=speaker,
        text=text,
        occurred_at=T0 + timedelta(days=days),
        session_id="s2",
        turn_index=0,
    )


@pytest.mark.parametrize(("speaker", "superseded"), [("Rosa", True), ("Ben", False)])
def test_the_judge_reads_the_new_facts_own_source_turns(speaker: str, superseded: bool) -> None:
    """The person's own turn cues the update without a call; another speaker's does not."""
    store = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    said = "Tacos have replaced sushi as my favourite food."
    store.add(
        NS,
        [
            turn("t1", speaker, said, days=30),
            fact("sushi", "Rosa's favourite food is sushi.", days=-30),
            fact(
                "tacos",
                "Rosa says her favourite food is tacos and sushi.",
                source_ids=["t1"],
                days=30,
            ),
        ],
    )
    model = SchemaChatModel()
    deps = NodeDeps(store=store, caller=StructuredCaller(model, method="json_schema"))
    log = StepLog("judge", deps)
    conflicts = check_conflicts(log, MemoryContext(namespace=NS, small_model=True), ["tacos"])
    assert [(c.old_id, c.new_id) for c in conflicts] == ([("sushi", "tacos")] if superseded else [])
    assert model.count(CHECK) == 0
    assert log.checks == (["update_cue:arriving"] if superseded else ["update_pair_skipped"])


PLAN = "Rosa is planning to buy a house next year."
HEDGED = "Rosa will keep renting the house if she can find a suitable house plan."


@pytest.mark.parametrize(
    ("said", "superseded", "checks"),
    [
        # the hedge is the model's: Rosa's own words end the plan
        ("We've decided to keep renting. The house plan is off.", True, ["update_cue:leaving"]),
        # Rosa said it plainly, but nothing in her words ends the plan
        ("We're renting for now. The garden is lovely.", False, ["update_pair_hedged"]),
        # Rosa's own words are hedged too: a hypothetical is paired with nothing
        ("If we find nothing, the house plan is off.", False, []),
    ],
)  # fmt: skip
def test_a_hedge_only_the_model_wrote_does_not_hide_the_persons_words(
    said: str, superseded: bool, checks: list[str]
) -> None:
    store = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    store.add(
        NS,
        [
            turn("t1", "Rosa", said, days=30),
            fact("plan", PLAN, days=-30, kind="foresight"),
            fact("renting", HEDGED, source_ids=["t1"], days=30, kind="foresight"),
        ],
    )
    model = SchemaChatModel()
    deps = NodeDeps(store=store, caller=StructuredCaller(model, method="json_schema"))
    log = StepLog("judge", deps)
    conflicts = check_conflicts(log, MemoryContext(namespace=NS, small_model=True), ["renting"])
    expected = [("plan", "renting")] if superseded else []
    assert [(c.old_id, c.new_id) for c in conflicts] == expected
    assert model.count(CHECK) == 0  # a hedged fact never goes to the model
    assert log.checks == checks


def test_a_hedged_statement_holds_no_cue_of_its_own() -> None:
    """Paired because its person said it plainly, it is cued by those words only."""
    (pair,) = candidate_pairs(
        [fact("new", "Rosa might quit the bakery.", days=30, source_ids=["t1"])],
        [fact("old", "Rosa works at the bakery.")],
        plain={"new"},
    )
    assert pair_cue(pair, ["I love the bakery."]) is None  # "quit" is only the model's
    assert pair_cue(pair, ["I quit the bakery last week."]) is not None
