"""An episode title gives each person's possessive to whom its turns say."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from lamina.agents.ingest.ownership.titles import owned_title, voiced_summary
from lamina.records.model import RawTurn


def _turn(n: int, speaker: str, text: str) -> RawTurn:
    return RawTurn(id=f"t{n}", namespace="demo:maya", speaker=speaker, text=text,
                   occurred_at=datetime(2024, 3, 16, 9, n, tzinfo=UTC),
                   session_id="s1", turn_index=n)  # fmt: skip


TURNS = [
    _turn(0, "Theo", "The bank approved my bakery loan yesterday!"),
    _turn(1, "Maya", "Congratulations! When do you sign the lease for the shop?"),
    _turn(2, "Theo", "I sign the lease next Friday. Thanks for all your support!"),
    _turn(3, "Maya", "I joined a pottery class. Got any weekend plans?"),
]


@pytest.mark.parametrize(
    ("title", "owned", "changed"),
    [
        ("Theo's bakery loan and Maya's lease signing",
         "Theo's bakery loan and Theo's lease signing", 1),
        ("Theo's pottery class", "Maya's pottery class", 1),
        # already right, words of giving, a question's words, words no turn says: kept
        ("Maya's pottery class and Theo's lease signing",
         "Maya's pottery class and Theo's lease signing", 0),
        ("Maya's support", "Maya's support", 0),
        ("Theo's weekend plans", "Theo's weekend plans", 0),
        ("Maya's trip to Porto", "Maya's trip to Porto", 0),
        ("Bakery news", "Bakery news", 0),
    ],
)  # fmt: skip
def test_a_possessive_goes_to_whom_the_turns_say(title: str, owned: str, changed: int) -> None:
    assert owned_title(title, TURNS, ["Theo", "Maya"]) == (owned, changed)


def test_a_summary_is_told_in_the_voice_of_the_turns_it_copies() -> None:
    summary = (
        "Theo approved my bakery loan yesterday. Maya asked when he signs the lease. "
        "I sign the lease next Friday."
    )
    assert voiced_summary(summary, TURNS, ["Theo", "Maya"]) == (
        "The bank approved Theo's bakery loan yesterday. Maya asked when he signs the lease. "
        "Theo signs the lease next Friday.",
        2,
    )


def test_a_place_put_in_a_persons_stead_goes_to_whom_the_turns_say() -> None:
    turns = [
        _turn(0, "Maya", "My job moved to Porto, so I'm moving to Porto."),
        _turn(1, "Theo", "I'll visit Porto once the bakery runs itself."),
    ]
    people = ["Theo", "Maya"]
    assert owned_title("Porto's bakery runs itself", turns, people) == (
        "Theo's bakery runs itself",
        1,
    )
    # the demo's own words: a sentence that opens with the place does not hide it
    demo = [
        _turn(0, "Maya", "Change of plans: my new job is in Porto, so I'm moving to Porto."),
        _turn(1, "Theo", "Porto is lovely. I'll visit once the bakery runs itself."),
    ]
    assert owned_title("Porto's bakery runs itself", demo, people) == (
        "Theo's bakery runs itself",
        1,
    )
    # a person the speakers talk about keeps the title as written
    jen = [_turn(0, "Mel", "Jen got married last week! The wedding was lovely.")]
    assert owned_title("Jen's wedding", jen, ["Mel", "Cara"]) == ("Jen's wedding", 0)
    # a name someone owns things under ("Porto's harbour") is not only a place
    owned = [_turn(0, "Theo", "Porto's harbour is lovely; I'll visit Porto soon.")]
    assert owned_title("Porto's harbour", owned, people) == ("Porto's harbour", 0)


@pytest.mark.parametrize(
    ("name", "texts", "place"),
    [
        ("Porto", ["I'm moving to Porto.", "I'll visit Porto soon."], True),
        ("Lisbon", ["I went back to Lisbon.", "We live in Lisbon."], True),
        ("Jen", ["I talked to Jen."], False),  # a bare "to" or "from" is no going
        ("Jen", ["I got a gift from Jen."], False),
        ("Porto", ["Porto's harbour is lovely. I'll visit Porto."], False),
        ("Porto", ["Nothing of it here."], False),
        # a sentence's first word counts neither way (the demo's "Porto is lovely")
        ("Porto", ["My job is in Porto.", "Porto is lovely. I'll visit soon."], True),
        ("Porto", ["Porto is lovely."], False),
        # one can visit or leave a person: some mention must follow "in" or "moving to"
        ("Jen", ["Jen is back. I visited Jen and left Jen a note."], False),
        ("Jen", ["I moved to Jen's town.", "We live in Jen."], False),
    ],
)  # fmt: skip
def test_a_place_is_a_name_the_turns_only_go_to(name: str, texts: list[str], place: bool) -> None:
    from lamina.agents.ingest.ownership.named import place_only

    assert place_only(name, texts) is place
