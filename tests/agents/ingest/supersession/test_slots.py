"""Slots and the update check's pre-filter: which stored facts a new fact may update."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from lamina.agents.ingest.supersession.slots import (
    candidate_pairs,
    hedged,
    names_in,
    same_person,
    slots_of,
)
from lamina.records.model import FactRecord

NS = "user:ana"
T0 = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)


def fact(text: str, subject: str | None = "Ana", days: int = 0, **kw: Any) -> FactRecord:
    when = T0 + timedelta(days=days)
    return FactRecord(
        id=kw.pop("id", f"f-{abs(hash((text, subject, days))) % 10**8}"),
        namespace=NS,
        text=text,
        subject=subject,
        occurred_at=when,
        valid_from=when,
        **kw,
    )


@pytest.mark.parametrize(
    ("text", "kind", "slot"),
    [
        ("Ana lives in Lisbon.", "fact", "residence"),
        ("Ana moved to Porto last week.", "fact", "residence"),
        ("Ana relocated to Berlin for good.", "fact", "residence"),
        ("Ana quit her job at the bakery.", "fact", "work"),
        ("Ana was promoted to head nurse.", "fact", "work"),
        ("Ana got laid off from the agency.", "fact", "work"),
        ("Ana switched her major to biology.", "fact", "study"),
        ("Ana and Leo broke up in May.", "fact", "partner"),
        ("Ana is engaged to Sam.", "fact", "partner"),
        ("Ana renamed her puppy Biscuit.", "fact", "pet"),
        ("Ana renamed her puppy Biscuit.", "fact", "name"),
        ("Ana has a new phone number.", "fact", "contact"),
        ("Ana sold her car.", "fact", "possession"),
        ("Ana went vegan in January.", "fact", "diet"),
        ("Ana's favourite band is Muse.", "fact", "favourite"),
        ("Ana's favorite band is Muse.", "fact", "favourite"),
        ("Ana will hike in Peru in June.", "foresight", "plans"),
        ("Ana cancelled the Rome trip.", "fact", "plans"),
    ],
)
def test_a_fact_is_in_the_slot_its_cue_words_name(text: str, kind: str, slot: str) -> None:
    assert slot in slots_of(text, kind)


def test_a_fact_without_cue_words_has_no_slot() -> None:
    assert slots_of("Ana thinks the sunset was beautiful.") == frozenset()
    assert slots_of("Ana baked bread with Leo.") == frozenset()


def test_a_plan_is_always_in_the_plans_slot() -> None:
    assert slots_of("Ana meets Leo on Friday.", "foresight") == {"plans"}
    assert "plans" not in slots_of("Ana met Leo on Friday.")


def test_hypotheticals_and_wishes_are_hedged() -> None:
    assert hedged("Ana might move to Berlin if she gets the job.")
    assert hedged("Ana is thinking about moving to Berlin.")
    assert not hedged("Ana moved to Berlin.")


def test_people_match_leniently_and_a_missing_subject_matches_nobody() -> None:
    assert same_person("Kate", "Katherine") and same_person("Ana", "Ana Lopez")
    assert same_person("ana", "Ana")
    assert not same_person("Ana", "Leo")
    assert not same_person(None, "Ana") and not same_person("Ana", "  ")


def test_a_new_fact_is_paired_with_the_same_persons_same_slot_only() -> None:
    lisbon = fact("Ana lives in Lisbon.", days=-30)
    job = fact("Ana works at the bakery.", days=-30)
    leo_home = fact("Leo lives in Madrid.", subject="Leo", days=-30)
    porto = fact("Ana moved to Porto.")
    pairs = candidate_pairs([porto], [lisbon, job, leo_home])
    assert [(p.new.id, p.old.id, p.slots) for p in pairs] == [
        (porto.id, lisbon.id, frozenset({"residence"}))
    ]
    assert pairs[0].person == "Ana" and pairs[0].slot_words() == "where they live"


def test_no_pair_for_a_hypothetical_a_repeat_an_older_statement_or_history() -> None:
    lisbon = fact("Ana lives in Lisbon.", days=-30)
    maybe = fact("Ana might move to Berlin next year.")
    repeat = fact("Ana lives in  lisbon.", days=1, id="f-repeat")
    older = fact("Ana lived in Rome.", days=-60)
    closed = fact("Ana lives in Faro.", days=-90, superseded_by="f-x", valid_to=T0)
    assert candidate_pairs([maybe, repeat, older], [lisbon]) == []
    assert candidate_pairs([fact("Ana moved to Porto.")], [closed]) == []


def test_a_subjectless_stored_fact_is_matched_by_the_name_in_its_text() -> None:
    old = fact("Ana lives in Lisbon.", subject=None, days=-30)
    other = fact("Leo lives in Madrid.", subject=None, days=-30)
    pairs = candidate_pairs([fact("Ana moved to Porto.")], [old, other])
    assert [p.old.id for p in pairs] == [old.id]


def test_pairs_keep_the_stored_order_and_the_per_fact_cap() -> None:
    stored = [fact(f"Ana lived in flat {n}.", days=-n) for n in range(1, 6)]
    new = fact("Ana moved to Porto.")
    pairs = candidate_pairs([new], stored, per_fact=2)
    assert [p.old.id for p in pairs] == [stored[0].id, stored[1].id]


def test_a_new_fact_of_the_same_batch_is_never_its_own_candidate() -> None:
    a = fact("Ana moved to Porto.")
    b = fact("Ana lives in a flat near the river.", days=0)
    assert candidate_pairs([a, b], [a, b]) == []


def test_names_other_than_people_are_found_and_people_are_not() -> None:
    assert names_in("Tom left Westside last Friday.", ["Tom"]) == {"Westside"}
    assert names_in("Ana adopted a greyhound named Rocket in May.", ["Ana"]) == {"Rocket"}
    assert names_in("Ana moved. Big news for Ana!", ["Ana"]) == frozenset()


def test_a_shared_name_pairs_facts_without_a_cue_word() -> None:
    old = fact("Tom is a teacher at Westside.", subject="Tom", days=-30)
    new = fact("Tom handed in his notice at Westside.", subject="Tom")
    (pair,) = candidate_pairs([new], [old])
    assert "name:Westside" in pair.slots and "Westside" in pair.slot_words()


def test_a_plan_said_earlier_for_a_later_date_can_be_replaced() -> None:
    said = T0 - timedelta(days=30)
    plan = fact("Ken will run the Berlin marathon.", subject="Ken", days=200, kind="foresight")
    new = fact("Ken pulled out of the Berlin marathon.", subject="Ken")
    assert candidate_pairs([new], [plan]) == []  # by event time: the plan is later
    (pair,) = candidate_pairs([new], [plan], said_at=lambda f: said)
    assert pair.old.id == plan.id
