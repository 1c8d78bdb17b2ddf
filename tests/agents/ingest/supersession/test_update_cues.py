"""Update cues: a newer fact that states the change in so many words needs no model call."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from lamina.agents.common.deps import NodeDeps, StepLog
from lamina.agents.ingest.nodes.conflicts import check_conflicts
from lamina.agents.ingest.supersession.slots import candidate_pairs
from lamina.agents.ingest.supersession.update_cues import may_change, update_cue
from lamina.core.context import MemoryContext
from lamina.llm.structured import StructuredCaller
from lamina.records import FactRecord
from lamina.stores import ChromaMemoryStore
from lamina.testing import FakeEmbeddings, SchemaChatModel

NS = "user:rosa"
T0 = datetime(2025, 5, 1, 9, 0, tzinfo=UTC)
CHECK = "SupersessionCheck"


def fact(fid: str, text: str, subject: str = "Rosa", days: int = 0, **kw: Any) -> FactRecord:
    when = T0 + timedelta(days=days)
    return FactRecord(
        id=fid, namespace=NS, text=text, subject=subject, occurred_at=when, valid_from=when, **kw
    )


def cue_of(old: str, new: str, **kw: Any) -> Any:
    """The cue of the one pair the pre-filter makes of (old, new), or None without a pair."""
    pairs = candidate_pairs([fact("new", new, days=30, **kw)], [fact("old", old)])
    assert len(pairs) <= 1
    return update_cue(pairs[0]) if pairs else None


@pytest.mark.parametrize(
    ("old", "new", "kind"),
    [
        ("Rosa lives in Valencia.", "Rosa moved to Seville in March.", "arriving"),
        ("Rosa rents a flat near the port.", "Rosa moved out of the flat.", "leaving"),
        ("Rosa works as a pharmacist at Farmacia Sol.", "Rosa quit Farmacia Sol.", "leaving"),
        ("Rosa works at a call centre.", "Rosa started a new job at a library.", "arriving"),
        ("Rosa works at the Grand Hotel.", "Rosa was laid off from the Grand Hotel.", "leaving"),
        ("Rosa is studying law.", "Rosa dropped out of law school.", "leaving"),
        ("Rosa is married to Pablo.", "Rosa and Pablo divorced last year.", "leaving"),
        ("Rosa is single.", "Rosa got engaged to Mateo.", "arriving"),
        ("Rosa's parrot is called Kiwi.", "Rosa's parrot Kiwi died in June.", "leaving"),
        ("Rosa plans a trip to Lima in May.", "Rosa cancelled the Lima trip.", "leaving"),
        ("Rosa plans a trip to Lima in May.", "Rosa postponed the Lima trip to July.", "arriving"),
        ("Rosa owns a blue Fiat.", "Rosa sold the Fiat.", "leaving"),
        ("Rosa eats meat.", "Rosa went vegetarian in January.", "arriving"),
        ("Rosa lives in Valencia.", "Rosa doesn't live in Valencia anymore.", "leaving"),
        # a move with no destination named ends where she lived
        ("Rosa's flat is on Calle Luna.", "Rosa moved house.", "leaving"),
        ("Rosa's flat is on Calle Luna.", "We finally moved!", "leaving"),
        # a contact detail replaced or ended
        (
            "Rosa's mobile number is 600-1234.",
            "Rosa updated her mobile number to 600-9876.",
            "arriving",
        ),
        (
            "Rosa's mobile number is 600-1234.",
            "Rosa's old mobile number is disconnected.",
            "leaving",
        ),
        ("Rosa owns a Seat Ibiza.", "Rosa swapped the Ibiza for a cargo bike.", "leaving"),
        (
            "Rosa works as a freelance translator.",
            "Rosa took a full-time job at a bank.",
            "arriving",
        ),
        # a year of study is a study fact ("sophomore" was in no slot)
        ("Rosa is a sophomore.", "Rosa is transferring from Boston College to UCLA.", "arriving"),
    ],
)
def test_a_stated_change_is_a_cue(old: str, new: str, kind: str) -> None:
    cue = cue_of(old, new)
    assert cue is not None and cue.kind == kind


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # the same value said again, or an added detail
        ("Rosa lives in Valencia.", "Rosa moved to Valencia two years ago."),
        # negated or continuing: nothing ended
        ("Rosa works at Farmacia Sol.", "Rosa didn't quit Farmacia Sol after all."),
        ("Rosa owns a blue Fiat.", "Rosa sold her bike but still drives the Fiat."),
        # a visit, not a move
        ("Rosa lives in Valencia.", "Rosa visited Seville for a weekend."),
        # several plans at once: cancelling one does not end another
        ("Rosa plans a trip to Lima in May.", "Rosa cancelled her gym membership."),
        # a second pet is an addition
        ("Rosa has a parrot called Kiwi.", "Rosa adopted a kitten."),
        # a value beside the old one, not instead of it
        ("Rosa is studying law.", "Rosa is now studying both law and economics."),
        # a plan does not end what holds now
        ("Rosa lives in Valencia.", "Rosa will move to Seville in the autumn."),
        ("Rosa works at Farmacia Sol.", "Rosa will be leaving Farmacia Sol in June."),
    ],
)
def test_no_cue_when_nothing_was_replaced(old: str, new: str) -> None:
    kind = "foresight" if " will " in new else "fact"
    assert cue_of(old, new, kind=kind) is None


def test_a_plan_changes_an_older_plan() -> None:
    old = fact("old", "Rosa will fly to Lima in May.", kind="foresight")
    new = fact("new", "Rosa postponed the Lima flight to July.", days=30, kind="foresight")
    (pair,) = candidate_pairs([new], [old])
    cue = update_cue(pair)
    assert cue is not None and cue.slot == "plans"


def test_a_hypothetical_is_no_pair_at_all() -> None:
    assert (
        candidate_pairs(
            [fact("new", "Rosa might move to Seville someday.", days=30)],
            [fact("old", "Rosa lives in Valencia.")],
        )
        == []
    )


def check(
    store: ChromaMemoryStore, model: SchemaChatModel, new_ids: list[str], **ctx: Any
) -> tuple[list[Any], StepLog]:
    deps = NodeDeps(store=store, caller=StructuredCaller(model, method="json_schema"))
    log = StepLog("judge", deps)
    ctx.setdefault("small_model", True)  # the small-model profile is what these tests test
    return check_conflicts(log, MemoryContext(namespace=NS, **ctx), new_ids), log


@pytest.fixture
def store() -> ChromaMemoryStore:
    return ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())


def test_a_cued_pair_is_superseded_without_a_call_and_counted(store) -> None:  # type: ignore[no-untyped-def]
    store.add(
        NS,
        [
            fact("valencia", "Rosa lives in Valencia.", days=-60),
            fact("seville", "Rosa moved to Seville."),
        ],
    )
    model = SchemaChatModel()
    conflicts, log = check(store, model, ["seville"])
    assert [(c.old_id, c.new_id) for c in conflicts] == [("valencia", "seville")]
    assert "moved to" in conflicts[0].reason
    assert model.count(CHECK) == 0 and log.calls == []
    assert log.checks == ["update_cue:arriving"]


def test_uncued_pairs_still_go_to_the_model(store) -> None:  # type: ignore[no-untyped-def]
    store.add(
        NS,
        [
            fact("valencia", "Rosa lives in Valencia.", days=-60),
            fact("job", "Rosa works at Farmacia Sol.", days=-60),
            fact("seville", "Rosa moved to Seville."),
            fact("shift", "Rosa works the night shift at Farmacia Sol now and then."),
        ],
    )
    model = SchemaChatModel()
    model.script(CHECK, json.dumps({"verdicts": [{"pair": "p1", "outdated": False}]}))
    conflicts, log = check(store, model, ["seville", "shift"])
    assert [c.old_id for c in conflicts] == ["valencia"]
    assert model.count(CHECK) == 1
    asked = "\n".join(str(m.content) for m in model.calls[-1][1])
    assert "night shift" in asked and "Seville" not in asked


def test_with_cues_off_the_model_decides(store) -> None:  # type: ignore[no-untyped-def]
    store.add(
        NS,
        [
            fact("valencia", "Rosa lives in Valencia.", days=-60),
            fact("seville", "Rosa moved to Seville."),
        ],
    )
    model = SchemaChatModel()
    model.script(CHECK, json.dumps({"verdicts": [{"pair": "p1", "outdated": False}]}))
    conflicts, log = check(store, model, ["seville"], small_model=False)
    assert conflicts == [] and model.count(CHECK) == 1 and log.checks == []


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Rosa lives in Valencia.", "Rosa's brother moved to Seville."),
        ("Rosa works at Farmacia Sol.", "Rosa's best friend Lucia got a new job at a bank."),
        ("Rosa is vegetarian.", "Rosa's husband went vegan in May."),
        # a restated owner set off by the relative's appositive
        ("Rosa is vegetarian.", "Pablo, Rosa's husband, went vegan in May."),
    ],
)
def test_a_relatives_change_is_not_the_persons(old: str, new: str) -> None:
    assert cue_of(old, new) is None


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Rosa is single.", "Rosa and Mateo have been together since spring."),
        (
            "Rosa is driving to her parents' place for Christmas.",
            "Rosa won't drive to her parents' place this Christmas.",
        ),
        ("Rosa is vegan.", "Rosa started eating fish again."),
    ],
)
def test_changes_that_keep_the_names(old: str, new: str) -> None:
    assert cue_of(old, new) is not None


def test_a_pair_without_a_word_of_change_is_not_asked_about(store) -> None:  # type: ignore[no-untyped-def]
    store.add(
        NS,
        [
            fact("job", "Rosa works at Farmacia Sol.", days=-60),
            fact("shift", "Rosa works the night shift at Farmacia Sol."),
        ],
    )
    model = SchemaChatModel()
    conflicts, log = check(store, model, ["shift"])
    assert conflicts == [] and model.count(CHECK) == 0
    assert log.checks == ["update_pair_skipped"]
    # without the cues (no word list), the pair goes to the model
    model.script(CHECK, json.dumps({"verdicts": [{"pair": "p1", "outdated": False}]}))
    conflicts, log = check(store, model, ["shift"], small_model=False)
    assert conflicts == [] and model.count(CHECK) == 1 and log.checks == []


def test_a_change_that_names_nothing_new_is_the_models_to_judge() -> None:
    """A promotion at the same firm brings no new name: no cue decides it, the model does."""
    old = fact("old", "Rosa is a junior analyst at Banco Sur.")
    new = fact("new", "Rosa was promoted to team lead at Banco Sur.", days=30)
    (pair,) = candidate_pairs([new], [old])
    assert update_cue(pair) is None and may_change(pair)


def test_a_partner_fact_is_paired_by_its_own_person() -> None:
    """'Jen broke up with Luke' pairs with Jen's partner fact, not with Luke's."""
    new = fact("new", "Jen broke up with Luke last month.", subject="Jen", days=30)
    (pair,) = candidate_pairs([new], [fact("old", "Jen's boyfriend is Luke.", subject="Jen")])
    cue = update_cue(pair)
    assert cue is not None and cue.slot == "partner" and cue.kind == "leaving"
    assert candidate_pairs([new], [fact("old2", "Luke is Jen's boyfriend.", subject="Luke")]) == []


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Rosa lives in Valencia.", "Rosa spent a summer living in Madrid."),
        ("Rosa lives in Valencia.", "Rosa lived in Madrid as a student."),
        ("Rosa works at a bank.", "Rosa worked at a bakery in Madrid for a year."),
    ],
)
def test_a_stay_that_is_over_is_not_asked_about(old: str, new: str) -> None:
    """A past spell elsewhere is not a new value of where she lives or works now."""
    (pair,) = candidate_pairs([fact("new", new, days=30)], [fact("old", old)])
    assert not may_change(pair)
    # the same newer value, told as the present, is asked about
    present = fact("now", "Rosa lives in Madrid.", days=30)
    (pair,) = candidate_pairs([present], [fact("old", "Rosa lives in Valencia.")])
    assert may_change(pair)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Jen's boyfriend is Luke.", "Jen broke up with Luke last month."),
        ("Jen's husband is Carl.", "Jen and Carl are divorced now."),
        ("Jen's kitten is Pepper.", "Jen changed her kitten's name from Pepper to Luna."),
    ],
)
def test_a_relation_read_from_a_turn_is_ended_by_its_change(old: str, new: str) -> None:
    """The facts construction reads from 'my boyfriend Luke' (ownership/relations.py)."""
    pairs = candidate_pairs([fact("new", new, "Jen", days=30)], [fact("old", old, "Jen")])
    assert len(pairs) == 1 and update_cue(pairs[0]) is not None
