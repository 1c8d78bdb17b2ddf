"""Relative dates in the languages lamina has words for, and chat forms of English."""

from __future__ import annotations

from datetime import date

import pytest

from lamina.agents.common.lexicon import LEXICONS
from lamina.agents.common.timeparse import resolve_times

THURSDAY = date(2024, 3, 14)

CASES = [
    ("El martes pasado empecé en la agencia.", "El martes pasado", "2024-03-12", "2024-03-12"),
    ("hace tres días fui al médico", "hace tres días", "2024-03-11", "2024-03-11"),
    ("Nos vemos el próximo lunes", "el próximo lunes", "2024-03-18", "2024-03-18"),
    ("el finde pasado fuimos a la playa", "el finde pasado", "2024-03-09", "2024-03-10"),
    ("Ich war vorgestern beim Arzt.", "vorgestern", "2024-03-12", "2024-03-12"),
    ("Letzten Freitag hab ich gekündigt", "Letzten Freitag", "2024-03-08", "2024-03-08"),
    ("vor zwei Wochen sind wir umgezogen", "vor zwei Wochen", "2024-02-26", "2024-03-03"),
    ("la semaine dernière j'ai commencé", "la semaine dernière", "2024-03-04", "2024-03-10"),
    ("il y a deux jours", "il y a deux jours", "2024-03-12", "2024-03-12"),
    ("On se voit samedi prochain ?", "samedi prochain", "2024-03-16", "2024-03-16"),
    ("na sexta passada eu pedi demissão", "na sexta passada", "2024-03-08", "2024-03-08"),
    ("há 3 dias chegou o gatinho", "há 3 dias", "2024-03-11", "2024-03-11"),
    ("o mês passado foi corrido", "o mês passado", "2024-02-01", "2024-02-29"),
    ("lol yday was wild", "yday", "2024-03-13", "2024-03-13"),
    ("moved in like 2 wks ago", "2 wks ago", "2024-02-26", "2024-03-03"),
    ("see u next fri", "next fri", "2024-03-15", "2024-03-15"),
]


@pytest.mark.parametrize(("text", "expression", "start", "end"), CASES)
def test_a_relative_date_resolves_in_any_language(
    text: str, expression: str, start: str, end: str
) -> None:
    (ref,) = resolve_times(text, THURSDAY)
    assert ref.expression == expression and text[ref.offset :].startswith(expression)
    assert (ref.start.isoformat(), ref.end.isoformat()) == (start, end)


@pytest.mark.parametrize(
    "text",
    [
        "Guten Morgen! Wie geht's?",  # morning, not tomorrow
        "Me levanto temprano por la mañana.",
        "I'll be on the 8:15 train, the sun is out",
        "A cat named Mon sat on the mat",
    ],
)
def test_words_that_only_look_like_dates_stay_text(text: str) -> None:
    assert resolve_times(text, THURSDAY) == []


def test_a_mixed_language_turn_resolves_both() -> None:
    refs = resolve_times("Yesterday I landed; mañana empiezo el curso.", THURSDAY)
    assert [(r.expression, r.start.isoformat()) for r in refs] == [
        ("Yesterday", "2024-03-13"),
        ("mañana", "2024-03-15"),
    ]


def test_each_lexicon_names_seven_days_and_twelve_months() -> None:
    assert [lex.code for lex in LEXICONS] == ["en", "es", "de", "fr", "pt"]
    for lex in LEXICONS:
        assert len(lex.weekdays) == 7 and len(lex.months) == 12
        assert lex.compiled  # every phrase compiles
