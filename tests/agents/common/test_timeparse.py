from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo

import pytest

from lamina.agents.common.timeparse import reference_day, resolve_times
from lamina.records.model import RawTurn, TimeRef, annotate_times

SAT = date(2023, 7, 15)  # a Saturday
FRI = date(2023, 7, 14)


def only(text: str, anchor: date) -> TimeRef:
    refs = resolve_times(text, anchor)
    assert len(refs) == 1, refs
    return refs[0]


@pytest.mark.parametrize(
    ("text", "anchor", "start", "end", "granularity"),
    [
        ("Yesterday I painted.", FRI, date(2023, 7, 13), date(2023, 7, 13), "day"),
        ("I ran last Friday.", FRI, date(2023, 7, 7), date(2023, 7, 7), "day"),
        ("I ran last Friday.", SAT, date(2023, 7, 14), date(2023, 7, 14), "day"),
        ("See you next Monday", FRI, date(2023, 7, 17), date(2023, 7, 17), "day"),
        ("this Tuesday was hard", FRI, date(2023, 7, 11), date(2023, 7, 11), "day"),
        ("I met her last week", date(2023, 6, 9), date(2023, 5, 29), date(2023, 6, 4), "week"),
        ("two weeks ago", SAT, date(2023, 6, 26), date(2023, 7, 2), "week"),
        ("the week before last", SAT, date(2023, 6, 26), date(2023, 7, 2), "week"),
        ("last weekend", SAT, date(2023, 7, 8), date(2023, 7, 9), "weekend"),
        ("last weekend", date(2023, 7, 12), date(2023, 7, 8), date(2023, 7, 9), "weekend"),
        ("two weekends ago", date(2023, 7, 17), date(2023, 7, 8), date(2023, 7, 9), "weekend"),
        ("next month", FRI, date(2023, 8, 1), date(2023, 8, 31), "month"),
        ("last month", date(2023, 1, 10), date(2022, 12, 1), date(2022, 12, 31), "month"),
        ("in two years", FRI, date(2025, 1, 1), date(2025, 12, 31), "year"),
        ("10 years ago", FRI, date(2013, 1, 1), date(2013, 12, 31), "year"),
        ("last year", FRI, date(2022, 1, 1), date(2022, 12, 31), "year"),
        ("last summer", FRI, date(2022, 6, 1), date(2022, 8, 31), "season"),
        ("last summer", date(2023, 10, 2), date(2023, 6, 1), date(2023, 8, 31), "season"),
        ("last May", FRI, date(2023, 5, 1), date(2023, 5, 31), "month"),
        ("a few days ago", FRI, date(2023, 7, 9), date(2023, 7, 12), "day"),
        ("tonight", FRI, FRI, FRI, "day"),
        ("the day before yesterday", FRI, date(2023, 7, 12), date(2023, 7, 12), "day"),
    ],
)
def test_expressions_resolve_against_the_reference_day(text, anchor, start, end, granularity):
    ref = only(text, anchor)
    assert (ref.start, ref.end, ref.granularity) == (start, end, granularity)
    assert text[ref.offset : ref.offset + len(ref.expression)] == ref.expression


@pytest.mark.parametrize(
    "text",
    [
        "May I ask you something?",
        "I love it now.",
        "It happened recently.",
        "A few years ago I moved.",
        "the next step is hard",
        "I'll do it in 500 years",
        "On 31 February we met.",
        "",
    ],
)
def test_vague_or_non_time_words_stay_text(text):
    assert resolve_times(text, FRI) == []


def test_longest_expression_wins_and_order_follows_the_text():
    refs = resolve_times("The week before last and yesterday", FRI)
    assert [r.expression for r in refs] == ["The week before last", "yesterday"]


def test_extreme_reference_days_never_raise():
    assert resolve_times("yesterday, last week, in 3 years", date(1, 1, 1)) is not None
    assert resolve_times("tomorrow and next year", date(9999, 12, 31)) is not None


def test_annotation_puts_the_dates_after_the_expression():
    text = "We raced last Saturday and camp next month."
    refs = resolve_times(text, SAT)
    assert annotate_times(text, refs) == (
        "We raced last Saturday (8 July 2023) and camp next month (August 2023)."
    )


def test_labels_cross_month_and_year_boundaries():
    week = TimeRef(
        expression="last week",
        offset=0,
        start=date(2022, 12, 26),
        end=date(2023, 1, 1),
        granularity="week",
    )
    assert week.label() == "26 December 2022 – 1 January 2023"
    assert only("last week", date(2023, 6, 9)).label() == "29 May – 4 June 2023"


def test_an_expression_whose_dates_follow_it_is_not_annotated_twice():
    text = "We raced last Saturday, 8 July 2023, and camp next month."
    assert annotate_times(text, resolve_times(text, SAT)) == (
        "We raced last Saturday, 8 July 2023, and camp next month (August 2023)."
    )


def test_an_annotation_whose_expression_moved_is_skipped():
    ref = only("yesterday", FRI)
    assert annotate_times("something else entirely", [ref]) == "something else entirely"


def test_reference_day_uses_the_time_zone():
    late = datetime(2023, 7, 14, 23, 30, tzinfo=UTC)
    assert reference_day(late, ZoneInfo("Europe/Berlin")) == date(2023, 7, 15)


def test_raw_turn_keeps_the_verbatim_text_and_displays_the_dates():
    turn = RawTurn(
        namespace="u",
        speaker="Maya",
        text="The bank approved the loan yesterday!",
        session_id="s1",
        turn_index=0,
        occurred_at=datetime(2023, 7, 14, 12, tzinfo=UTC),
        time_refs=resolve_times("The bank approved the loan yesterday!", FRI),
    )
    assert turn.text == "The bank approved the loan yesterday!"
    assert turn.display_text() == "The bank approved the loan yesterday (13 July 2023)!"
    assert RawTurn.model_validate_json(turn.model_dump_json()) == turn


def test_a_bracketed_date_after_the_expression_is_replaced_not_doubled():
    text = "Melanie painted a lake sunrise last year (2021)!"
    refs = resolve_times(text, FRI)
    assert annotate_times(text, refs) == "Melanie painted a lake sunrise last year (2022)!"
    words = "I went there yesterday (my birthday)!"
    assert annotate_times(words, resolve_times(words, FRI)) == (
        "I went there yesterday (13 July 2023) (my birthday)!"
    )
