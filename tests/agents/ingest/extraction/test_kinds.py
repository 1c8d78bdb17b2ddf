"""A note's kind follows its wording when the model's tag contradicts it."""

import pytest

from lamina.agents.ingest.extraction.kinds import checked_kind, looks_ahead, states_a_like


@pytest.mark.parametrize(
    ("tagged", "statement", "stored"),
    [
        # a plan tag on a past event or a description: a fact
        ("foresight", "Noor baked a lemon cake for the school fair.", "fact"),
        ("foresight", "Noor's sister is her biggest support.", "fact"),
        # a plan tag on a like: a preference
        ("foresight", "Noor is a big fan of trail running.", "preference"),
        ("foresight", "Noor usually swims before work.", "preference"),
        # a preference tag on an event: a fact
        ("preference", "Noor joined a choir in March 2024.", "fact"),
        # anything that looks ahead is a plan, whatever its tag
        ("preference", "Noor will move to Porto in June.", "foresight"),
        ("fact", "Noor is going to sell her old bike.", "foresight"),
        ("fact", "Noor plans to visit her grandmother next month.", "foresight"),
        ("fact", "Noor's gonna run the half marathon.", "foresight"),
        ("preference", "Noor would love to learn the cello one day.", "foresight"),
        ("foresight", "Noor is moving to Ghent in September for a new job.", "foresight"),
        ("fact", "Noor's flying to Oslo on Friday.", "foresight"),
        # a plausible tag stays
        ("fact", "Noor thanked Ilse, who loves pottery.", "fact"),
        ("preference", "Noor loves pottery.", "preference"),
        ("foresight", "Noor hopes to adopt a dog.", "foresight"),
    ],
)
def test_the_kind_follows_the_wording(tagged: str, statement: str, stored: str) -> None:
    kind, corrected = checked_kind(tagged, statement)  # type: ignore[arg-type]
    assert kind == stored
    assert corrected == (tagged != stored)


@pytest.mark.parametrize(
    "statement",
    [
        "Noor planned to visit Rome but stayed home.",  # a plan in the past
        "Noor wanted to quit, then stayed.",
        "Noor's brother was going to call.",
        "Noor went into the shop.",
        "The next day Noor felt better.",
        "Noor is still painting every day.",  # a progressive with no time to come
        "Noor was moving boxes in September.",
        "Noor is painting again. Her show opened in May.",  # the time is another sentence's
    ],
)
def test_past_plans_and_common_words_do_not_look_ahead(statement: str) -> None:
    assert not looks_ahead(statement)


def test_a_like_a_dislike_or_a_habit_is_read_as_such() -> None:
    assert states_a_like("Noor can't stand loud bars.")
    assert states_a_like("Noor goes climbing every weekend.")
    assert states_a_like("Noor is really into jazz.")
    assert not states_a_like("Noor moved into a new flat.")
