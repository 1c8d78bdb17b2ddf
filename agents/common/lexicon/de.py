"""German."""

from __future__ import annotations

from .base import Lexicon, Phrase

GERMAN = Lexicon(
    code="de",
    weekdays=(
        ("montag",),
        ("dienstag",),
        ("mittwoch",),
        ("donnerstag",),
        ("freitag",),
        ("samstag", "sonnabend"),
        ("sonntag",),
    ),
    months=(
        ("januar", "jänner"),
        ("februar",),
        ("märz", "maerz"),
        ("april",),
        ("mai",),
        ("juni",),
        ("juli",),
        ("august",),
        ("september",),
        ("oktober",),
        ("november",),
        ("dezember",),
    ),
    numbers={
        "einem": 1,
        "einer": 1,
        "ein": 1,
        "eine": 1,
        "zwei": 2,
        "drei": 3,
        "vier": 4,
        "fünf": 5,
        "sechs": 6,
        "sieben": 7,
        "acht": 8,
        "neun": 9,
        "zehn": 10,
        "elf": 11,
        "zwölf": 12,
        "ein paar": 3,
    },
    units={
        "tag": "day",
        "tage": "day",
        "tagen": "day",
        "woche": "week",
        "wochen": "week",
        "monat": "month",
        "monate": "month",
        "monaten": "month",
        "jahr": "year",
        "jahre": "year",
        "jahren": "year",
        "wochenende": "weekend",
    },
    phrases=(
        Phrase(r"vorgestern", "the day before yesterday"),
        Phrase(r"übermorgen|uebermorgen", "the day after tomorrow"),
        Phrase(r"gestern(?: abend| nacht)?", "yesterday"),
        Phrase(r"heute", "today"),
        Phrase(r"(?<!guten )(?<!am )(?<!heute )(?<!gestern )(?<!jeden )morgen", "tomorrow"),
        Phrase(r"vor {num} {unit}", "{num} {unit}s ago"),
        Phrase(r"in {num} {unit}", "in {num} {unit}s"),
        Phrase(r"(?:am |den )?(?:letzten|letzter|letztem|vergangenen|vorigen) {wd}", "last {wd}"),
        Phrase(r"(?:am |den )?(?:nächsten|naechsten|kommenden) {wd}", "next {wd}"),
        Phrase(r"(?:diesen|am kommenden) {wd}", "this {wd}"),
        Phrase(
            r"(?:am |im |in der )?(?:letzte|letzten|letztes|vergangene|vergangenen|vergangenes"
            r"|vorige|vorigen|voriges) {unit}",
            "last {unit}",
        ),
        Phrase(
            r"(?:am |im |in der )?(?:nächste|nächsten|nächstes|naechste|naechsten|kommende"
            r"|kommenden|kommendes) {unit}",
            "next {unit}",
        ),
        Phrase(r"(?:diese|diesen|dieses) {unit}", "this {unit}"),
        Phrase(r"(?:im |letzten )?{month} letzten jahres", "last {month}"),
    ),
)
