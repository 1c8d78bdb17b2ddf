"""A note that kept its turn's voice is told again in the third person, with the turn's subject."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from lamina.agents.common.deps import NodeDeps, StepLog
from lamina.agents.ingest.ownership.named import person_named
from lamina.agents.ingest.ownership.owner_check import checked_owner
from lamina.agents.ingest.ownership.voice import in_third_person, spoken_subject, told_subject
from lamina.llm.structured import StructuredCaller
from lamina.records.model import RawTurn
from lamina.stores import ChromaMemoryStore
from lamina.testing import FakeEmbeddings, SchemaChatModel

LOAN = "The bank approved my bakery loan yesterday (15 March 2024)!"


@pytest.mark.parametrize(
    ("statement", "turn", "restored"),
    [
        ("Theo approved my bakery loan yesterday.", LOAN,
         "The bank approved my bakery loan yesterday."),
        ("Theo's kind words mean a lot.", "Thanks, Maya! Your kind words mean a lot.",
         "Maya's kind words mean a lot."),
        ("Theo made dinner for the whole family.", "So my mom made dinner for the whole family",
         "My mom made dinner for the whole family."),
        # the turn's own subject is "I", "you", the name itself or a pronoun: nothing to restore
        ("Theo approved the plan today.", "I approved the plan today.", None),
        ("Theo will sign the lease on Friday.", "You will sign the lease on Friday?", None),
        ("Theo went to the park.", "Theo went to the park with me.", None),
        ("Theo's kids love the park.", "They love the park so much.", None),
        # fewer than three words the turn says word for word: the model's own wording
        ("Theo approved it.", LOAN, None),
        ("Theo is happy about the bakery loan.", LOAN, None),
    ],
)  # fmt: skip
def test_the_subject_the_turn_gives_its_words_comes_back(
    statement: str, turn: str, restored: str | None
) -> None:
    assert told_subject(statement, "Theo", "Maya", turn) == restored


@pytest.mark.parametrize(
    ("statement", "shifted", "changes"),
    [
        ("It reminds me why I love being a mom.", "It reminds Mel why Mel loves being a mom.", 2),
        ("Support I got was helpful; I'm grateful.",
         "Support Mel got was helpful; Mel is grateful.", 2),
        ("I've been busy and I'll rest.", "Mel has been busy and Mel will rest.", 2),
        ("I'd been there before, I really try.", "Mel had been there before, Mel really tries.", 2),
        ("Caro and I love camping.", "Caro and Mel love camping.", 1),
        ("My wife and I love it, and I hope so.",
         "Mel's wife and Mel love it, and Mel hopes so.", 3),
        ("The bank approved my loan.", "The bank approved Mel's loan.", 1),
        ("My dog and I watch TV.", "Mel's dog and Mel watch TV.", 2),
        ("Mel said she and Tom went. Me and Tom had fun.",
         "Mel said she and Tom went. Her and Tom had fun.", 1),
        # a note that leads with the speaker and calls her "she" keeps her pronouns
        ("Mel said she loves my violin and believes in myself.",
         "Mel said she loves her violin and believes in herself.", 2),
        # the name put in front of the turn's words is dropped, not doubled
        ("Mel I'm gonna keep going!", "Mel is gonna keep going!", 1),
        # quotations, captions, "me-time" and a numeral are kept as written
        ('Mel said "I love it" [shared image: my cat]',
         'Mel said "I love it" [shared image: my cat]', 0),
        ("Mel plans some me-time after World War I films.",
         "Mel plans some me-time after World War I films.", 0),
    ],
)  # fmt: skip
def test_first_person_words_become_the_speakers(statement: str, shifted: str, changes: int) -> None:
    assert in_third_person(statement, "Mel") == (shifted, changes)


@pytest.mark.parametrize(
    ("statement", "turn", "told"),
    [
        ("Moving to Lisbon in September.", "I'm moving to Lisbon in September!",
         "Maya is moving to Lisbon in September."),
        ("Went hiking with friends.", "Yesterday I went hiking with friends.",
         "Maya went hiking with friends."),
        ("Finished the marathon.", "I've finally finished the marathon",
         "Maya has finally finished the marathon."),
        # a note with its own subject, a base verb, or words the turn's "I" does not say
        ("Theo went hiking.", "I went hiking", None),
        ("Love is all you need.", "I love that. Love is all you need", None),
        ("Moving is hard.", "Theo is moving next week", None),
    ],
)  # fmt: skip
def test_a_dropped_subject_is_the_turns_i(statement: str, turn: str, told: str | None) -> None:
    assert spoken_subject(statement, "Maya", turn) == told


@pytest.mark.parametrize(
    ("name", "turn", "person"),
    [
        ("Rise", "I sign the lease Friday, and Rise & Crumb opens in May.", False),
        ("Alder", "We toured the Alder Street shop.", False),
        ("Maple", "The Maple Grove Station trail was lovely.", False),
        ("Grace", "I ran into Grace Park at the gym.", True),
        ("Carla", "I met my friend Carla at the cafe.", True),
        ("Carla", "We saw Carla and Jonas downtown.", True),
    ],
)
def test_a_business_or_place_name_is_no_person(name: str, turn: str, person: bool) -> None:
    assert person_named(name, turn, within=True) is person


def _turn(tid: str, speaker: str, text: str, n: int) -> RawTurn:
    return RawTurn(id=tid, namespace="demo:maya", speaker=speaker, text=text,
                   occurred_at=datetime(2024, 3, 16, 9, n, tzinfo=UTC),
                   session_id="s1", turn_index=n)  # fmt: skip


def _log() -> StepLog:
    store = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    return StepLog("constructor", NodeDeps(store=store, caller=StructuredCaller(SchemaChatModel())))


def test_construction_files_the_demos_facts_correctly() -> None:
    """The facts a new user saw from `make demo`: the bank's approval, the bakery's name."""
    turns = [
        _turn("t1", "Theo", LOAN, 0),
        _turn("t2", "Maya", "Congratulations! When do you sign the lease for the shop?", 1),
        _turn("t3", "Theo", "I sign the lease next Friday, and Rise & Crumb opens after "
              "two months of renovation.", 2),
    ]  # fmt: skip
    people = ["Theo", "Maya"]
    log = _log()
    loan = checked_owner(
        log, "Theo approved my bakery loan yesterday.", "Theo", [turns[0]], turns, people
    )
    assert loan == ("The bank approved Theo's bakery loan yesterday.", "Theo", "agreed")
    assert log.checks == ["subject_restored", "first_person_shifted"]
    opening = checked_owner(
        _log(),
        "Rise & Crumb opens after two months of renovation.",
        "Rise",
        [turns[2]],
        turns,
        people,
    )
    assert opening == ("Rise & Crumb opens after two months of renovation.", "Theo", "corrected")
