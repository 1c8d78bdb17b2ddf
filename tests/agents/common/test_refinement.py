"""Two facts of one turn that say one thing are one fact."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from lamina.agents.common.refinement import repeats
from lamina.records.model import FactRecord


def _fact(text: str, subject: str = "Caroline", sources: tuple[str, ...] = ("t1",)) -> FactRecord:
    return FactRecord(namespace="n", text=text, subject=subject, source_ids=list(sources),
                      occurred_at=datetime(2023, 5, 8, tzinfo=UTC))  # fmt: skip


@pytest.mark.parametrize(
    ("later", "earlier", "same"),
    [
        (_fact("Caroline is thrilled to make a family for kids who need one."),
         _fact("Caroline will make a family for kids who need one."), True),
        (_fact("Caroline has a dog named Max."), _fact("Caroline has a dog."), True),
        # other words, another person, another turn: two facts
        (_fact("Caroline asked Melanie about her mentorship program."),
         _fact("Caroline joined a mentorship program."), False),
        (_fact("Melanie has a dog named Max.", "Melanie"), _fact("Caroline has a dog named Max."),
         False),
        (_fact("Caroline has a dog named Max.", sources=("t2",)),
         _fact("Caroline has a dog named Max."), False),
    ],
)  # fmt: skip
def test_a_repeat_is_the_same_person_turn_and_words(
    later: FactRecord, earlier: FactRecord, same: bool
) -> None:
    assert repeats(later, earlier) is same


def test_a_relation_read_from_the_turn_is_no_repeat() -> None:
    relation = _fact("Caroline's cat is Tom.").model_copy(
        update={"metadata": {"derived_by": "relations"}}
    )
    assert not repeats(relation, _fact("Caroline's cat Tom sleeps all day."))
    assert not repeats(_fact("Caroline's cat Tom sleeps all day."), relation)
