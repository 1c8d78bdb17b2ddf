"""A statement that named the addressee for both "I" and "you" gets the speaker back."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from lamina.agents.common.deps import NodeDeps, StepLog
from lamina.agents.ingest.ownership.owner_check import checked_owner
from lamina.agents.ingest.ownership.swapped_names import traded, unswapped
from lamina.llm.structured import StructuredCaller
from lamina.records.model import RawTurn
from lamina.stores import ChromaMemoryStore
from lamina.testing import FakeEmbeddings, SchemaChatModel

OFFER = "Sure thing! Any time you need help, don't hesitate to reach out."
TURTLES = "I'll be sure to send you pics of my turtles so you can watch them grow."


@pytest.mark.parametrize(
    ("statement", "turn", "repaired"),
    [
        ("Tim will help Tim if he needs help.", OFFER, "John will help Tim if he needs help."),
        ("Tim will send Tim pics of turtles.", TURTLES, "John will send Tim pics of turtles."),
        # the addressee named once, as a possessive, or in a list: nothing to repair
        ("Tim will reach out if he needs help.", OFFER, None),
        ("Tim will send Tim's sister pics.", TURTLES, None),
        ("Tim, Tim's wife and Ann went out.", TURTLES, None),
        ("Tim bought himself a gift for Tim.", TURTLES, None),
        # a turn that speaks to no one ("you" absent) is not a swap
        ("Tim will help Tim with the move.", "Moving day is Saturday.", None),
        # the speaker's own name twice is not the addressee's
        ("John will help John.", OFFER, None),
    ],
)  # fmt: skip
def test_the_addressee_named_twice_is_repaired(
    statement: str, turn: str, repaired: str | None
) -> None:
    assert unswapped(statement, "John", "Tim", turn) == repaired


@pytest.mark.parametrize(
    ("statement", "turn", "repaired"),
    [
        ("Tim will send John the recipe in a bit.", "Sure, I'll send you the recipe in a bit.",
         "John will send Tim the recipe in a bit."),
        ("Tim sends John photos.", "I send you photos every day!", "John sends Tim photos."),
        ("Tim will call John tonight.", "Let me call you tonight.", "John will call Tim tonight."),
        # the turn gives the addressee the verb: as the model wrote it
        ("Tim will visit John next week.", "You'll visit me next week!", None),
        # another verb, or the speaker only as a possessive: nothing to trade
        ("Tim will send John the recipe.", "I'll make you the recipe.", None),
        ("Tim will send John's dog a toy.", "I'll send you a toy.", None),
    ],
)  # fmt: skip
def test_two_people_the_model_traded_are_put_back(
    statement: str, turn: str, repaired: str | None
) -> None:
    assert traded(statement, "John", "Tim", turn) == repaired


def test_construction_files_a_repaired_statement_under_the_speaker() -> None:
    def said(tid: str, speaker: str, text: str, n: int) -> RawTurn:
        return RawTurn(id=tid, namespace="team:a", speaker=speaker, text=text,
                       occurred_at=datetime(2024, 5, 1, 9, n, tzinfo=UTC),
                       session_id="s1", turn_index=n)  # fmt: skip

    turns = [
        said("t1", "Tim", "Moving next week, so much to pack.", 0),
        said("t2", "John", OFFER, 1),
    ]
    store = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    log = StepLog("constructor", NodeDeps(store=store, caller=StructuredCaller(SchemaChatModel())))
    text, owner, check = checked_owner(
        log, "Tim will help Tim if he needs help.", "Tim", [turns[1]], turns, ["Tim", "John"]
    )
    assert (text, owner, check) == ("John will help Tim if he needs help.", "John", "corrected")
    assert log.checks == ["owner_swap_repaired"]
