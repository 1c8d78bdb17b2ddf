"""Notes copied from the construction prompt's example: found without an LLM."""

from lamina.agents.ingest.extraction.example_leaks import (
    copies_example,
    cut_unsaid_relations,
    example_notes,
)

PEOPLE = ["Caroline", "Melanie"]


def test_the_example_notes_are_read_from_the_prompt_itself() -> None:
    notes = example_notes()
    assert len(notes) == 3  # the example's F, L and P notes
    assert {"cousin", "chess", "club"} <= notes[0] and notes[1] == {"love", "chess"}
    assert not any({"omar", "priya", "jona"} & n for n in notes)  # names left out


def test_an_unsaid_relation_is_cut_and_a_said_one_kept() -> None:
    said = ["We went camping with the kids last week!"]
    assert cut_unsaid_relations("Melanie, Caroline's cousin, went camping.", said) == (
        "Melanie went camping.",
        1,
    )
    assert cut_unsaid_relations("Gina, Jon's best friend, danced.", ["I danced"]) == (
        "Gina danced.",
        1,
    )
    kept = "Omar, Priya's cousin, joined a chess club."
    assert cut_unsaid_relations(kept, ["My cousin Omar joined a chess club"]) == (kept, 0)
    plain = "Melanie, a painter, went camping."  # not a relation to a named person
    assert cut_unsaid_relations(plain, said) == (plain, 0)


def test_a_note_that_only_repeats_an_example_note_unsaid_is_a_copy() -> None:
    adoption = ["It's been a dream to adopt and provide a safe, loving home for kids."]
    assert copies_example("Caroline loves chess.", PEOPLE, adoption)
    assert not copies_example("Caroline loves chess.", PEOPLE, ["I love playing chess!"])
    assert not copies_example("Caroline loves pottery.", PEOPLE, ["pottery is my thing"])
    assert not copies_example("Caroline loves adoption and chess.", PEOPLE, adoption)
    assert not copies_example("Caroline.", PEOPLE, adoption)  # nothing but a name
