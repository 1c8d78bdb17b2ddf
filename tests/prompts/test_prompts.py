"""Each prompt template takes exactly the variables its node supplies."""

import pytest
from langchain_core.prompts import ChatPromptTemplate

from lamina.prompts import construction

EXPECTED = {
    "BOUNDARY": {"history", "new"},
    "CONSTRUCT_LINES": {"known", "turns", "max_items"},
    "CONSTRUCT_JSON": {"known", "turns", "max_items"},
    "UPDATE_CHECK": {"pairs"},
}
DATA_BLOCKS = {
    "BOUNDARY": 2,
    "CONSTRUCT_LINES": 1,
    "CONSTRUCT_JSON": 1,
    "UPDATE_CHECK": 1,
}
"""``<data>`` blocks in the template itself (a known episode brings its own block)."""


@pytest.mark.parametrize(("name", "variables"), sorted(EXPECTED.items()))
def test_template_variables(name: str, variables: set[str]) -> None:
    template = getattr(construction, name)
    assert isinstance(template, ChatPromptTemplate)
    assert set(template.input_variables) == variables


def test_every_template_is_covered_and_marks_data() -> None:
    templates = {
        n for n in dir(construction) if isinstance(getattr(construction, n), ChatPromptTemplate)
    }
    assert templates == set(EXPECTED)
    for name in templates:
        template = getattr(construction, name)
        system = template.messages[0].prompt.template  # type: ignore[union-attr]
        human = template.messages[1].prompt.template  # type: ignore[union-attr]
        assert construction.DATA_RULE in system
        assert human.count("<data>") == human.count("</data>") == DATA_BLOCKS[name]


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("2023-07-10", "10 July 2023"),
        ("in 2023-05, then on 2023-06-01", "in May 2023, then on 1 June 2023"),
        ("2019-20", "2019-20"),  # a year range
        ("2023-02-30", "2023-02-30"),  # no calendar day
        ("2023-13", "2023-13"),
        ("10 July 2023", "10 July 2023"),
    ],
)
def test_natural_dates_writes_iso_dates_as_memories_do(text: str, written: str) -> None:
    from lamina.agents.common.formatting import natural_dates

    assert natural_dates(text) == written


@pytest.mark.parametrize(
    ("text", "said"),
    [
        # a model's loop, cut by the answer's length limit mid-item (conv-30's "destress")
        ("Dance, destress, destress, destress, destr", "Dance, destress"),
        ("Parade, art show, parade, Support group", "Parade, art show, Support group"),
        ("pottery, painting, camping", "pottery, painting, camping"),  # nothing repeats
        ("7 May 2023", "7 May 2023"),
        ("Yes, yes", "Yes"),
        (", ,", ""),
        # only the answer's last item can be a cut-off repeat
        ("hiking in the woods, camping, hiking, camping", "hiking in the woods, camping, hiking"),
    ],
)  # fmt: skip
def test_distinct_items_says_a_repeated_item_once(text: str, said: str) -> None:
    from lamina.agents.common.formatting import distinct_items

    assert distinct_items(text) == said


def test_an_answer_that_loops_is_read_with_each_item_once() -> None:
    from lamina.agents.recall.schemas import DraftFirst

    draft = DraftFirst.model_validate(
        {"answer": "painting, " + "hiking, running, " * 40, "sufficient": True}
    )
    assert draft.answer == "painting, hiking, running"
