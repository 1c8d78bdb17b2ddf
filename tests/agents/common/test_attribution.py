"""The deterministic attribution checks: whose words a draft answer rests on."""

from __future__ import annotations

from datetime import UTC, datetime

from lamina.agents.common.attribution import mentions, ungrounded_person, unsupported_person
from lamina.agents.common.query_analysis import QueryAnalysis
from lamina.core.state import Candidate

WHEN = datetime(2023, 5, 20, tzinfo=UTC)


def turn(text: str, speaker: str, id_: str = "") -> Candidate:
    return Candidate(
        granularity="raw", id=id_ or text[:12], text=text, speaker=speaker,
        occurred_at=WHEN, score=1.0,
    )  # fmt: skip


def fact(text: str) -> Candidate:
    return Candidate(granularity="fact", id=text[:12], text=text, occurred_at=WHEN, score=1.0)


MELANIE = QueryAnalysis(persons=["Melanie"])
RACE = turn("I ran the charity race and realized self-care really matters", "Caroline")
REPLY = turn("Wow, that sounds amazing, well done!", "Melanie")


def test_an_answer_taken_from_another_persons_story_is_ungrounded() -> None:
    # the model may cite Melanie's reply; the answer's words are Caroline's
    assert unsupported_person(MELANIE, [REPLY]) is None
    assert ungrounded_person(MELANIE, "that self-care matters", [RACE, REPLY]) == "Melanie"


def test_the_named_persons_words_or_a_memory_naming_them_ground_the_answer() -> None:
    own = turn("After my race I realized self-care matters", "Melanie")
    assert ungrounded_person(MELANIE, "self-care matters", [RACE, own]) is None
    about = fact("Melanie realized self-care matters after a charity race")
    assert ungrounded_person(MELANIE, "self-care matters", [RACE, about]) is None
    # a tie between someone else's memory and one of hers is not a refusal
    tie = turn("Melanie says self-care matters!", "Caroline")
    assert ungrounded_person(MELANIE, "self-care matters", [RACE, tie]) is None


def test_the_best_match_decides_not_any_match() -> None:
    weak = turn("Matters of the heart are hard", "Melanie")
    assert ungrounded_person(MELANIE, "self-care matters", [RACE, weak]) == "Melanie"


def test_the_grounding_check_does_not_apply_without_evidence_of_whose_story_it_is() -> None:
    # no single named person
    assert ungrounded_person(QueryAnalysis(), "self-care", [RACE]) is None
    both = QueryAnalysis(persons=["Melanie", "Caroline"])
    assert ungrounded_person(both, "self-care", [RACE]) is None
    # an answer sharing no term with any memory (a date, "yes"), or only stop words
    assert ungrounded_person(MELANIE, "20 May 2023", [RACE, REPLY]) is None
    assert ungrounded_person(MELANIE, "yes, it was", [RACE, REPLY]) is None
    # the person's own name is not evidence
    assert ungrounded_person(MELANIE, "Melanie", [turn("Melanie!", "Caroline")]) is None
    assert ungrounded_person(MELANIE, "self-care", []) is None


def test_a_name_said_to_someone_is_not_a_mention_of_them() -> None:
    for addressed in (
        "Thanks, Melanie! This necklace is from my grandma",
        "Wow, Melanie, that is great",
        "That is great, Melanie.",
        "Hey Mel! How are you?",
    ):
        assert not mentions(addressed, "Melanie"), addressed
    for named in ("I told Melanie about it.", "Melanie said yes", "I went with Melanie."):
        assert mentions(named, "Melanie"), named
    # her grandma's necklace, told to her by Caroline, is not her story
    necklace = turn("Thanks, Melanie! This necklace is from my grandma in Sweden", "Caroline")
    assert unsupported_person(MELANIE, [necklace]) == "Melanie"
    assert ungrounded_person(MELANIE, "Sweden", [necklace, REPLY]) == "Melanie"
