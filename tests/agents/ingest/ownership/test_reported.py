"""A summary's reported speech is told by whom its turns say the news is about."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from lamina.agents.ingest.ownership.reported import owned_summary, reported_teller, told_by
from lamina.records.model import RawTurn

PEOPLE = ["Maya", "Theo"]


def _turn(n: int, speaker: str, text: str, caption: str | None = None) -> RawTurn:
    return RawTurn(id=f"t{n}", namespace="demo:maya", speaker=speaker, text=text,
                   occurred_at=datetime(2024, 3, 16, 9, n, tzinfo=UTC),
                   session_id="s1", turn_index=n, media_caption=caption)  # fmt: skip


TURNS = [
    _turn(0, "Theo", "The bank approved my bakery loan yesterday!"),
    _turn(1, "Maya", "Congratulations Theo! I ran the Porto half marathon last weekend."),
    _turn(2, "Theo", "Amazing! Here is the shop.", caption="a bakery counter with bread loaves"),
    _turn(3, "Maya", "Looks cosy. I adopted a grey kitten called Pixel."),
]


@pytest.mark.parametrize(
    ("sentence", "retold"),
    [
        # the model put Maya's news in Theo's mouth: the names trade, the pronoun follows
        (
            "Theo told Maya that he ran the Porto half marathon last weekend.",
            "Maya told Theo that Maya ran the Porto half marathon last weekend.",
        ),
        (
            "Maya mentioned that she got a bakery loan approved by the bank.",
            "Theo mentioned that Theo got a bakery loan approved by the bank.",
        ),
        # the possessive after the verb was the old teller's: dropped
        (
            "Theo shared his grey kitten called Pixel with Maya.",
            "Maya shared grey kitten called Pixel with Theo.",
        ),
        # a shared image's words are in its caption, whose sender is the teller
        (
            "Maya shared a photo of a bakery counter with bread loaves.",
            "Theo shared a photo of a bakery counter with bread loaves.",
        ),
    ],
)
def test_a_reversed_report_is_told_by_the_one_it_is_about(sentence: str, retold: str) -> None:
    assert owned_summary(sentence, TURNS, PEOPLE) == (retold, 1)


@pytest.mark.parametrize(
    "sentence",
    [
        "Maya told Theo that she ran the Porto half marathon last weekend.",  # already right
        "Maya congratulated Theo on the bakery loan.",  # an act towards the other, no report
        "Theo told Maya that he loves surfing in winter.",  # no turn says it
        "Sam told Maya that he adopted a grey kitten called Pixel.",  # not a speaker
        "The bakery loan was approved.",  # no one tells anything
        "Theo mentioned the kitten.",  # one word to go by: too little to decide
    ],
)
def test_other_sentences_stay_as_written(sentence: str) -> None:
    assert reported_teller(sentence, TURNS, PEOPLE) is None
    assert owned_summary(sentence, TURNS, PEOPLE) == (sentence, 0)


def test_an_excerpt_with_a_third_speaker_decides_nothing() -> None:
    turns = [*TURNS, _turn(4, "Lena", "I sign my lease on Friday.")]
    sentence = "Theo told Maya that he ran the Porto half marathon last weekend."
    assert reported_teller(sentence, turns, [*PEOPLE, "Lena"]) is None


def test_dates_in_brackets_do_not_count_against_the_turn() -> None:
    sentence = "Theo told Maya that he ran the Porto half marathon last weekend (9-10 March 2024)."
    assert reported_teller(sentence, TURNS, PEOPLE) == "Maya"


def test_only_the_reversed_sentences_of_a_summary_change() -> None:
    summary = (
        "Theo told Maya that his bakery loan was approved. "
        "Theo told Maya that he adopted a grey kitten called Pixel."
    )
    assert owned_summary(summary, TURNS, PEOPLE) == (
        "Theo told Maya that his bakery loan was approved. "
        "Maya told Theo that Maya adopted a grey kitten called Pixel.",
        1,
    )


def test_names_trade_as_the_sentence_writes_them() -> None:
    people = ["Melanie Ortiz", "Caroline Hale"]
    sentence = "Mel told Caroline that she ran the Porto half marathon."
    assert told_by(sentence, "Caroline Hale", people) == (
        "Caroline told Mel that Caroline ran the Porto half marathon."
    )


def test_told_by_keeps_a_sentence_that_is_no_report() -> None:
    assert told_by("Maya congratulated Theo.", "Theo", PEOPLE) == "Maya congratulated Theo."
