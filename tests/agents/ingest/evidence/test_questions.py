"""A note only a question supports is not memory; one that reports the asking is."""

from __future__ import annotations

from datetime import UTC, datetime

from lamina.agents.ingest.evidence.questions import answer_to, only_asked, statements
from lamina.records.model import RawTurn

PEOPLE = ["Joanna", "Nate"]


def _turn(speaker: str, text: str, context: str | None = None) -> RawTurn:
    return RawTurn(
        id="t1",
        namespace="u",
        speaker=speaker,
        text=text,
        context=context,
        occurred_at=datetime(2022, 4, 1, 9, tzinfo=UTC),
        session_id="s1",
        turn_index=1,
    )


ASKED = _turn(
    "Nate", "Sounds fun! It's a learning experience. Have you considered going back to acting?"
)


def test_a_question_turned_into_a_fact_is_only_asked() -> None:
    assert only_asked("Joanna has considered going back to acting.", [ASKED], PEOPLE)


def test_a_note_that_reports_the_asking_or_that_a_statement_supports_is_kept() -> None:
    assert not only_asked(
        "Nate asked Joanna if she considered going back to acting.", [ASKED], PEOPLE
    )
    said = _turn("Joanna", "I finished another pottery project - want to see a pic?")
    assert not only_asked("Joanna finished another pottery project.", [said], PEOPLE)
    # "Yes, last week!" answers the question it follows: the answered turn counts
    answer = _turn(
        "Joanna", "Yes, last week!", context="Nate: Did you go camping in the mountains?"
    )
    assert not only_asked("Joanna went camping in the mountains last week.", [answer], PEOPLE)
    # a note no text of the turn supports is the support check's to drop, not this one's
    assert not only_asked("Joanna adopted a parrot.", [ASKED], PEOPLE)


def test_statements_keep_what_a_question_sentence_opens_with() -> None:
    assert (
        statements("I won! Got any plans? I baked a cake - want some?") == "I won! I baked a cake"
    )


def test_the_answer_to_a_question_is_the_next_turn_by_someone_else_that_asserts() -> None:
    def t(n: int, speaker: str, text: str) -> RawTurn:
        return _turn(speaker, text).model_copy(update={"id": f"t{n}", "turn_index": n})

    ask, sure = t(1, "Joanna", "Can you water my plants?"), t(2, "Nate", "Sure, happy to!")
    assert answer_to([ask], [ask, sure]) == sure
    assert answer_to([ask], [ask, t(2, "Nate", "Why?")]) is None  # a question answers nothing
    assert answer_to([ask], [ask, t(2, "Joanna", "Please?")]) is None  # the asker goes on
    assert answer_to([ask], [ask]) is None
