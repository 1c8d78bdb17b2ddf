"""Relations a speaker names in passing ("my boyfriend Luke") read from the turn."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from lamina.agents.ingest.ownership.relations import named_relations, pet_keepers, relation_records
from lamina.records.model import FactRecord, RawTurn


def said(text: str, speaker: str = "Jen") -> RawTurn:
    return RawTurn(
        id="r1",
        namespace="user:jen",
        speaker=speaker,
        text=text,
        occurred_at=datetime(2024, 3, 1, tzinfo=UTC),
        session_id="s1",
        turn_index=0,
    )


@pytest.mark.parametrize(
    ("text", "statements"),
    [
        ("My boyfriend Luke and I are taking a cooking class.", ["Jen's boyfriend is Luke."]),
        ("That's Daniel, my boyfriend! Together since spring.", ["Jen's boyfriend is Daniel."]),
        ("My kitten is called Pepper and she is pure chaos.", ["Jen's kitten is Pepper."]),
        ("Our dog Rex is getting old.", ["Jen's dog is Rex."]),
        ("I went with my best friend Anna Smith.", ["Jen's friend is Anna Smith."]),
        ("My ex-boyfriend Tom called.", ["Jen's ex-boyfriend is Tom."]),
        # no name, a word that is no name, a possessive that is not the speaker's
        ("My friend and I went hiking.", []),
        ("My sister Sunday cooked for us.", []),
        ("Your dog Rex is so cute!", []),
    ],
)  # fmt: skip
def test_the_turns_own_words_name_the_relation(text: str, statements: list[str]) -> None:
    assert [r.statement() for r in named_relations([said(text)])] == statements


def test_a_role_label_speaker_is_written_as_a_role() -> None:
    (relation,) = named_relations([said("My sister Ana moved to Porto.", speaker="user")])
    assert relation.statement() == "The user's sister is Ana."


@pytest.mark.parametrize(
    "text",
    [
        "Yeah, my mom really loved flowers.",  # an interjection before "my mom"
        "Thankfully, my son's ok.",
        "My girlfriend, Toby and I are going camping.",  # a list, not an apposition
        "We had to rehome Clover, my son turned out to be allergic.",  # two clauses
    ],
)
def test_a_word_before_or_after_a_comma_is_no_name(text: str) -> None:
    assert named_relations([said(text)]) == []


@pytest.mark.parametrize(
    ("text", "statements"),
    [
        ("Email me at sue.park@mailbox.com, thanks.", ["Jen's email is sue.park@mailbox.com."]),
        ("I changed my email, it's Sue.Art@Mail.com now.", ["Jen's email is sue.art@mail.com."]),
        ("My new email: a.b@c.co.uk. Thanks!", ["Jen's email is a.b@c.co.uk."]),
        # someone else's address
        ("Email my sister at jo@x.org.", []),
        ("My sister's email is jo@x.org.", []),
    ],
)  # fmt: skip
def test_the_speakers_own_email_address_is_read(text: str, statements: list[str]) -> None:
    assert [r.statement() for r in named_relations([said(text)])] == statements


def test_pet_keepers_come_from_the_turns_and_from_earlier_relation_facts() -> None:
    at = datetime(2024, 3, 1, tzinfo=UTC)
    earlier = relation_records("user:jen", [said("My rabbit Clover lives in the garden.")], at)
    model_note = FactRecord(namespace="user:jen", text="Sam's dog is Rex.", subject="Sam",
                            occurred_at=at)  # fmt: skip
    now = named_relations([said("Our kitten is called Pepper.", speaker="Sam")])
    # the model's own "Sam's dog is Rex." is no relation fact; a brother is no pet
    brother = relation_records("user:jen", [said("My brother Theo is here.")], at)
    assert pet_keepers(now, [*earlier, model_note, *brother]) == {"Clover": "Jen", "Pepper": "Sam"}
    # a name two people keep is nobody's
    twice = named_relations([said("My dog Max is old.", speaker="Sam"), said("My cat Max naps.")])
    assert pet_keepers(twice) == {}
