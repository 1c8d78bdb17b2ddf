"""A note that tells of two people is split into one note per person."""

from __future__ import annotations

from lamina.agents.ingest.extraction.split_notes import split_note
from lamina.agents.ingest.schemas import FactLine

PEOPLE = ["John", "Maria"]


def _note(statement: str, subject: str = "John") -> FactLine:
    return FactLine(kind="fact", source="t3", subject=subject, statement=statement)


def test_a_sentence_that_opens_with_another_person_becomes_their_note() -> None:
    notes = split_note(
        _note(
            "John suggested going into policymaking. Maria was considering going into "
            "policymaking. She liked the idea."
        ),
        PEOPLE,
    )
    assert [(n.subject, n.statement, n.source, n.kind) for n in notes] == [
        ("John", "John suggested going into policymaking.", "t3", "fact"),
        (
            "Maria",
            "Maria was considering going into policymaking. She liked the idea.",
            "t3",
            "fact",
        ),
    ]


def test_pronouns_the_same_person_and_short_sentences_stay_together() -> None:
    for text in [
        "John saw a sad girl. He sat with her for an hour.",
        "John's family cheers him on. John loves them for it.",
        "John thanked Maria for the card. Maria agreed.",  # too short to stand alone
        "John met a coach. Coach Lee runs the gym.",  # not a known person
    ]:
        assert split_note(_note(text), PEOPLE) == [_note(text)]


def test_a_possessive_opening_names_the_person_and_the_models_subject_stays_first() -> None:
    notes = split_note(
        _note("Maria volunteers at a shelter. John's family enjoys game nights.", "Maria"),
        ["John Smith", "Maria"],
    )
    assert [n.subject for n in notes] == ["Maria", "John Smith"]
