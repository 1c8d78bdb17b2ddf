"""Owners constrained to the people present (issue 61, item 2): a speaker, or a name the excerpt
writes."""

import pytest

from lamina.agents.ingest.ownership.present import present_owner

PEOPLE = ["Lucía", "Jonas", "Grace Park"]


@pytest.mark.parametrize(
    ("owner", "excerpt", "expected"),
    [
        ("Lucia", ["me mudé a Valencia"], "Lucía"),  # a speaker, spelled another way
        ("jonas", ["I quit Helio Solar"], "Jonas"),
        ("Grace", ["ran a marathon"], "Grace Park"),
        ("Lisa", ["i handed the under-12 team over to lisa"], "Lisa"),  # named, lowercase
        ("Maya's brother", ["Maya"], None),  # Maya is no speaker and not named mid-sentence
        ("Jonas's brother", ["my brother Theo opened a bakery"], "Jonas's brother"),
        ("Jonas's sister", ["my brother Theo opened a bakery"], None),  # no sister said
        ("Work", ["Work at the bank is exhausting but it pays the bills."], None),
        ("Loves", ["Loves Berlin."], None),
        ("Theo", ["Work is busy. Theo opened a bakery", "so proud of Theo"], "Theo"),
        ("Miso", ["we adopted a beagle puppy"], None),  # nobody the excerpt names
        ("", ["anything"], None),
    ],
)
def test_an_owner_must_be_someone_present(
    owner: str, excerpt: list[str], expected: str | None
) -> None:
    assert present_owner(owner, PEOPLE, excerpt) == expected


def test_a_name_only_at_a_sentence_start_is_present_when_the_model_named_it() -> None:
    excerpt = ["Alfred got the job!", "Work at the bank is exhausting."]
    assert present_owner("Alfred", PEOPLE, excerpt, vouched="Alfred") == "Alfred"
    assert present_owner("Alfred", PEOPLE, excerpt, vouched="Jonas") is None  # a rule's guess
    assert present_owner("Work", PEOPLE, excerpt, vouched="Lucía") is None
    assert present_owner("alfred", PEOPLE, ["alfred got the job"], vouched="alfred") is None
