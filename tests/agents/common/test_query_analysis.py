"""Deterministic query analysis: time windows, people, question types; never an LLM."""

from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lamina.agents.common.names import match_speakers, with_speaker_names, without_speakers
from lamina.agents.common.query_analysis import analyze_question, question_type
from lamina.errors import InvalidInputError

REF = datetime(2023, 10, 20, 15, 0, tzinfo=UTC)  # a Friday
SPEAKERS = ["Caroline", "Melanie"]


def window(question: str, reference: datetime | None = REF) -> tuple[date | None, date | None]:
    a = analyze_question(question, reference=reference, speakers=SPEAKERS)
    return (a.after.date() if a.after else None, a.before.date() if a.before else None)


@pytest.mark.parametrize(
    ("question", "after", "before"),
    [
        ("What did Caroline do in May 2023?", date(2023, 5, 1), date(2023, 6, 1)),
        ("What did Jon find on 1 February, 2023?", date(2023, 2, 1), date(2023, 2, 2)),
        ("What movie did Joanna watch on October 6, 2022?", date(2022, 10, 6), date(2022, 10, 7)),
        ("Did James have a girlfriend during April 2022?", date(2022, 4, 1), date(2022, 5, 1)),
        ("What did Melanie paint in 2022?", date(2022, 1, 1), date(2023, 1, 1)),
        ("What did John and Max enjoy last summer?", date(2023, 6, 1), date(2023, 9, 1)),
        ("What happened in summer 2022?", date(2022, 6, 1), date(2022, 9, 1)),
        ("What did Melanie say two weeks ago?", date(2023, 10, 2), date(2023, 10, 9)),
        ("What did Caroline do last month?", date(2023, 9, 1), date(2023, 10, 1)),
        ("What did Caroline do in May?", date(2023, 5, 1), date(2023, 6, 1)),
        ("What did she plan in November?", date(2022, 11, 1), date(2022, 12, 1)),
        ("What did Melanie paint before 2022?", None, date(2022, 1, 1)),
        ("What did Melanie paint after 2022?", date(2023, 1, 1), None),
        ("How many pets did Andrew have, as of September 2023?", None, date(2023, 10, 1)),
        (
            "Where was Calvin in the last week of October 2023?",
            date(2023, 10, 1),
            date(2023, 11, 1),
        ),
    ],
)
def test_time_windows(question: str, after: date | None, before: date | None) -> None:
    assert window(question) == (after, before)


@pytest.mark.parametrize(
    "question",
    [
        "May I ask what Caroline likes?",  # a modal verb, not a month
        "When did James try Cyberpunk 2077?",  # a title, too far from the reference year
        "What does Melanie do to relax?",
        "Did Caroline fall in love?",  # "fall" is a verb here
    ],
)
def test_no_window_where_there_is_no_date(question: str) -> None:
    assert window(question) == (None, None)


def test_event_relative_and_vague_times_stay_text() -> None:
    a = analyze_question(
        "What did Mel do before the trip and recently?", reference=REF, speakers=SPEAKERS
    )
    assert a.window() is None
    assert a.unresolved == ["before the trip", "recently"]


def test_without_a_reference_only_dated_expressions_are_read() -> None:
    a = analyze_question("What happened last week, in May 2023?", reference=None)
    assert (a.after, a.before) == (
        datetime(2023, 5, 1, tzinfo=UTC),
        datetime(2023, 6, 1, tzinfo=UTC),
    )
    assert a.unresolved == ["last week"] and a.reference is None


def test_window_days_are_read_in_the_time_zone() -> None:
    tokyo = ZoneInfo("Asia/Tokyo")
    a = analyze_question("What happened on 8 May 2023?", reference=REF, tz=tokyo)
    assert a.after == datetime(2023, 5, 8, tzinfo=tokyo)
    assert a.before == datetime(2023, 5, 9, tzinfo=tokyo)


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What did Caroline do?", ["Caroline"]),
        ("what did caroline do?", ["Caroline"]),  # case
        ("What is Melanie's hobby?", ["Melanie"]),  # possessive
        ("What did Mel and Caroline paint?", ["Melanie", "Caroline"]),  # short form, order
        ("Where did Carolin go?", ["Caroline"]),  # one typo in a long name
        ("Can Melanie swim?", ["Melanie"]),  # "Can" is no short form of anyone
        ("What did the melody sound like?", []),  # lowercase words need an exact match
        ("What did John say?", []),
    ],
)
def test_person_names_match_speaker_labels_leniently(question: str, expected: list[str]) -> None:
    assert match_speakers(question, SPEAKERS) == expected


@pytest.mark.parametrize(
    ("question", "speakers", "expected"),
    [
        ("Where did Kate go hiking?", ["Marco", "Katherine"], ["Katherine"]),  # nickname
        ("Did Bob call?", ["Robert", "Ann"], ["Robert"]),
        ("What did Robert say?", ["Bob", "Ann"], ["Bob"]),  # the other way round
        ("What is Jose cooking?", ["José"], ["José"]),  # accents dropped
        ("what did zoe paint", ["Zoë"], ["Zoë"]),  # also in lower case: the same name
        ("Will you come?", ["William"], []),  # a stop word is nobody's short form
        ("And then?", ["Andrew"], []),
        ("what did kate do?", ["Katherine"], []),  # nicknames only for capitalised words
        ("Did Kathy call?", ["Kate"], []),  # two nicknames of one name are not linked
    ],
)
def test_nicknames_and_spellings_of_a_name_match_its_label(
    question: str, speakers: list[str], expected: list[str]
) -> None:
    assert match_speakers(question, speakers) == expected


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("Where did Kate go hiking?", "Where did Kate go hiking? (Katherine)"),
        ("What did Mel and Kate paint?", "What did Mel and Kate paint? (Melanie, Katherine)"),
        ("Where did Katherine go?", "Where did Katherine go?"),  # written as stored
        ("where did katherine go", "where did katherine go"),
        ("What did Kate tell Melanie?", "What did Kate tell Melanie? (Katherine)"),
        ("What did John say?", "What did John say?"),  # no speaker named
    ],
)
def test_a_query_gets_the_labels_it_names_only_in_another_form(query: str, expected: str) -> None:
    assert with_speaker_names(query, ["Katherine", "Melanie", "Marco"]) == expected


@pytest.mark.parametrize(
    ("query", "speakers", "expected"),
    [
        ("Why did Gina shut down her bank?", ["Gina", "Jon"], "Why did shut down her bank?"),
        ("What is Melanie's hobby?", ["Melanie"], "What is hobby?"),  # possessive
        ("What did Mel and Caroline paint?", ["Melanie", "Caroline"], "What did and paint?"),
        ("Where did Kate go hiking?", ["Katherine"], "Where did go hiking?"),  # nickname
        ("What did the melody sound like?", ["Melanie"], "What did the melody sound like?"),
        ("What did Dr. Smith advise?", ["Dr. Jane Smith"], "What did advise?"),
        ("Gina?", ["Gina"], "Gina?"),  # nothing else left: the query as it is
    ],
)
def test_a_query_loses_the_names_of_the_speakers_it_is_searched_among(
    query: str, speakers: list[str], expected: str
) -> None:
    assert without_speakers(query, speakers) == expected


def test_multi_word_labels_match_on_any_part() -> None:
    assert match_speakers("What did Dr. Smith advise?", ["Dr. Jane Smith", "user"]) == [
        "Dr. Jane Smith"
    ]


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("When did Caroline go to the support group?", "temporal"),
        ("What year did Melanie start painting?", "temporal"),
        ("How long ago was Caroline's birthday?", "temporal"),
        ("Would Caroline likely pursue writing?", "yesno"),
        ("Did Melanie go camping?", "yesno"),
        ("What books has Melanie read?", "aggregation"),
        ("What activities does Melanie partake in?", "aggregation"),
        ("How many children does Melanie have?", "aggregation"),
        ("Which city have both Jean and John visited?", "aggregation"),
        ("What are Caroline's hobbies?", "aggregation"),
        ("What is Caroline's identity?", "other"),
        ("Where did Melanie camp?", "other"),
    ],
)
def test_question_types(question: str, kind: str) -> None:
    assert question_type(question) == kind


@pytest.mark.parametrize(
    ("question", "timed"),
    [
        ("When did Caroline go to the support group?", True),
        ("How long has Melanie been painting?", True),
        ("What did Melanie paint last week?", True),
        ("Where did Melanie camp in June 2023?", True),
        ("What did Caroline do after the parade?", True),
        ("What did Caroline do recently?", True),
        ("What books has Melanie read?", False),
        ("Where did Melanie camp?", False),
        ("Did Melanie go camping?", False),
    ],
)
def test_a_question_is_about_time_when_it_asks_when_or_names_a_time(
    question: str, timed: bool
) -> None:
    assert analyze_question(question, reference=REF).about_time() is timed


@pytest.mark.parametrize("question", ["", "   ", "\n\t"])
def test_an_empty_question_is_a_clear_error(question: str) -> None:
    with pytest.raises(InvalidInputError, match="non-empty"):
        analyze_question(question, reference=REF)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=120))
def test_any_text_is_analysed_without_crashing(text: str) -> None:
    if not text.strip():
        return
    a = analyze_question(text, reference=REF, speakers=SPEAKERS)
    w = a.window()
    if w is not None and w.after is not None and w.before is not None:
        assert w.after < w.before
