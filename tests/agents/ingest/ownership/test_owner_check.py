"""checked_owner: what construction files a fact under, and how it restates it."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from lamina.agents.common.deps import NodeDeps, StepLog
from lamina.agents.ingest.ownership.owner_check import checked_owner
from lamina.llm.structured import StructuredCaller
from lamina.records.model import RawTurn
from lamina.stores import ChromaMemoryStore
from lamina.testing import FakeEmbeddings, SchemaChatModel

PEOPLE = ["Deborah", "Jolene"]


def _check(
    statement: str, named: str, spoken: str, speaker: str = "Deborah", caption: str | None = None
) -> tuple[str, ...]:
    """(text, owner, check, counts...) of ``statement`` drawn from ``speaker``'s turn."""
    other = next(p for p in PEOPLE if p != speaker)
    turns = [
        RawTurn(id=f"t{n}", namespace="team:a", speaker=who, text=text,
                occurred_at=datetime(2024, 5, 1, 9, n, tzinfo=UTC), session_id="s1", turn_index=n,
                media_caption=caption if n else None)
        for n, (who, text) in enumerate([(other, "How have you been?"), (speaker, spoken)])
    ]  # fmt: skip
    store = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    log = StepLog("constructor", NodeDeps(store=store, caller=StructuredCaller(SchemaChatModel())))
    return (*checked_owner(log, statement, named, [turns[1]], turns, PEOPLE), *log.checks)


def test_a_relative_as_owner_is_the_speakers_relative() -> None:
    out = _check("Mom passed away a few years ago.", "Mom", "She passed away a few years ago.")
    assert out == (
        "Deborah's mom passed away a few years ago.",
        "Deborah",
        "corrected",
        "owner_corrected",
    )


def test_a_relative_who_did_something_with_the_speaker_stays_the_doer() -> None:
    out = _check("Mom visited Deborah last week.", "Mom", "My mom visited me last week!")
    assert out[:3] == ("Deborah's mom visited Deborah last week.", "Deborah", "corrected")


def test_a_relative_of_the_one_addressed_is_theirs() -> None:
    out = _check("Mom called last night.", "Mom", "Your mom called me last night!")
    assert out[:3] == ("Jolene's mom called last night.", "Jolene", "corrected")


def test_a_subordinate_clause_does_not_outvote_the_main_one() -> None:
    # "when you come to Boston" is the visit's clause; "show" is Deborah's
    spoken = "Can't wait to show you some when you come to Boston!"
    statement = "Deborah plans to show Jolene some cars when she comes to Boston."
    assert _check(statement, "Deborah", spoken)[:3] == (statement, "Deborah", "agreed")


def test_a_statement_with_both_people_swapped_gets_both_back() -> None:
    spoken = "Last week I visited a place full of memories. It was my mother's old house."
    out = _check("Jolene saw her mother's old house with Deborah.", "Jolene", spoken)
    assert out[:3] == ("Deborah saw her mother's old house with Jolene.", "Deborah", "corrected")


@pytest.mark.parametrize(
    ("statement", "spoken", "text"),
    [
        # the speaker met a third person: the speaker's, the two names traded back
        ("Anna met Deborah at yoga in the park.", "I met my new neighbor Anna yesterday!",
         "Deborah met Anna at yoga in the park."),
        # a third person's own news stays theirs
        ("Anna got a new job at the harbor.", "My friend Anna got a new job at the harbor!",
         None),
    ],
)  # fmt: skip
def test_a_third_person_keeps_a_fact_unless_the_speaker_is_in_it(
    statement: str, spoken: str, text: str | None
) -> None:
    out = _check(statement, "Anna", spoken)
    if text is None:
        assert out[:2] == (statement, "Anna")
    else:
        assert out[:3] == (text, "Deborah", "corrected")


def test_what_a_shared_image_shows_is_the_sharers() -> None:
    caption = "a photography of a city skyline with a boat in the water"
    spoken = "I'll show you around town and all the cool spots!"
    out = _check("He shared a photo of a city skyline with a boat.", "Jolene", spoken,
                 caption=caption)  # fmt: skip
    assert out == ("He shared a photo of a city skyline with a boat.", "Deborah", "corrected",
                   "owner_corrected")  # fmt: skip
    # a statement the turn's words say is read from the words
    assert _check("Jolene will see the town.", "Jolene", spoken, caption=caption)[1] == "Jolene"


@pytest.mark.parametrize(
    ("statement", "named", "spoken", "text", "owner"),
    [
        # the model's own spelling of the speaker: filed and restated under the label
        ("Deb adopted a puppy.", "Deb", "I adopted a puppy last week!", "Deborah adopted a puppy.",
         "Deborah"),
        ("Debora's puppy is called Max.", "Debora", "My puppy is called Max.",
         "Deborah's puppy is called Max.", "Deborah"),
        # a person the turn names so may be someone else, and keeps the name
        ("Debo got the job.", "Debo", "Debo got the job! I'm so happy for her.",
         "Debo got the job.", "Debo"),
    ],
)  # fmt: skip
def test_a_speaker_spelled_the_models_way_gets_the_label(
    statement: str, named: str, spoken: str, text: str, owner: str
) -> None:
    out = _check(statement, named, spoken)
    assert out[:2] == (text, owner)
    assert ("owner_respelled" in out) is (owner != named)


def test_names_the_turns_first_person_put_in_are_not_traded_back() -> None:
    # the model's "Jolene told Deborah" trades to "Deborah told Jolene"; the turn's "I" and
    # "my" are Deborah's and stay hers, not Jolene's after the trade
    spoken = "As a kid I lived above my uncle's bakery in Leeds."
    statement = "Jolene told Deborah that as a kid, I lived above my uncle's bakery in Leeds."
    out = _check(statement, "Jolene", spoken)
    assert out[:3] == (
        "Deborah told Jolene that as a kid, Deborah lived above Deborah's uncle's bakery in Leeds.",
        "Deborah",
        "corrected",
    )
