"""An episode title gives each person's possessive to whom its turns say."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from lamina.agents.ingest.titles import owned_title, voiced_summary
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
