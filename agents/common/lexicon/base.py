"""The shape of one language's words: dates, times, relations and pets."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property

from ....records.timerefs import MONTH_NAMES, SEASON_NAMES

WEEKDAYS_EN = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
MONTHS_EN = tuple(m.casefold() for m in MONTH_NAMES)
SEASONS_EN: Mapping[str, int] = {**{n: m for m, n in SEASON_NAMES.items()}, "fall": 9}
"""Each English season -> the month it starts in (the meteorological seasons)."""
UNITS_EN = ("day", "week", "weekend", "month", "year")
PARTNERS_EN = frozenset(
    "partner boyfriend girlfriend husband wife spouse fiance fiancee fiancé fiancée".split()
)
"""The English relations that are a person's partner: one at a time, so a new one updates."""
HOUSEMATES_EN = frozenset({"roommate", "flatmate"})
"""The English relations that say where a person lives."""
WORKMATES_EN = frozenset({"boss", "colleague", "coworker", "co-worker"})
"""The English relations that say where a person works."""


def forms(names: str) -> tuple[tuple[str, ...], ...]:
    """Per weekday or month, in order, its forms: ``", "`` between names, ``/`` between forms."""
    return tuple(tuple(name.split("/")) for name in names.split(", "))


def counted(numbers: str) -> dict[str, int]:
    """Number words from one up: ``", "`` between numbers, ``/`` between forms of one."""
    return {w: n for n, name in enumerate(numbers.split(", "), start=1) for w in name.split("/")}


def words(table: Mapping[str, str]) -> dict[str, str]:
    """Each word -> its English meaning, from English meaning -> its words (``", "`` between)."""
    return {word: means for means, spelled in table.items() for word in spelled.split(", ")}


@dataclass(frozen=True)
class Phrase:
    """A relative-time pattern and the English phrase it means.

    ``pattern`` is a regular expression that may hold ``{num}``, ``{unit}``, ``{wd}`` and
    ``{month}``; ``means`` is an English phrase of the date resolver's grammar with the
    same placeholders ("{num} {unit} ago", "last {wd}").
    """

    pattern: str
    means: str


@dataclass(frozen=True)
class Lexicon:
    """One language's words for dates and times.

    ``weekdays`` and ``months`` hold, per day or month in English order, the words that
    name it (several forms: "mardi", "martes", "terça-feira", "terca"); ``numbers`` and
    ``units`` map words to a number or an English unit. ``relations`` and ``pets`` map
    the words for a relative, friend or partner ("hermana", "Schwester") and for an
    animal kept ("chaton", "Hund") to the English word a fact uses ("sister", "dog");
    ``possessives`` are the speaker's own ("my", "nuestra", "meine"), which make
    "meine Schwester Lena" a relation of the speaker's; ``naming`` are the words that
    give a name ("is called", "se llama", "heißt"); ``homographs`` are its words that
    English writes with another meaning (the French "chat"), which only count where the
    language's own grammar frames them ("mon chat Minou"). ``slot_cues`` and
    ``slot_phrases`` are the words and phrases that put a statement in an attribute
    slot of its person (``residence``: "lives", "moved"; ``partner``: "broke up"), for
    the update pre-filter (:mod:`lamina.agents.ingest.supersession.slots`).
    """

    code: str
    weekdays: tuple[tuple[str, ...], ...]
    months: tuple[tuple[str, ...], ...]
    numbers: Mapping[str, int] = field(default_factory=dict)
    units: Mapping[str, str] = field(default_factory=dict)
    phrases: tuple[Phrase, ...] = ()
    relations: Mapping[str, str] = field(default_factory=dict)
    pets: Mapping[str, str] = field(default_factory=dict)
    possessives: tuple[str, ...] = ()
    naming: tuple[str, ...] = ()
    homographs: frozenset[str] = frozenset()
    slot_cues: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    slot_phrases: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if len(self.weekdays) != 7 or len(self.months) != 12:
            raise ValueError(f"{self.code}: 7 weekdays and 12 months are needed")
        if any(u not in UNITS_EN for u in self.units.values()):
            raise ValueError(f"{self.code}: units must map to one of {UNITS_EN}")

    @cached_property
    def _words(self) -> dict[str, dict[str, str]]:
        """Placeholder -> word (casefolded) -> its English meaning."""
        return {
            "wd": {w.casefold(): WEEKDAYS_EN[n] for n, ws in enumerate(self.weekdays) for w in ws},
            "month": {w.casefold(): MONTHS_EN[n] for n, ms in enumerate(self.months) for w in ms},
            "num": {w.casefold(): str(v) for w, v in self.numbers.items()},
            "unit": {w.casefold(): u for w, u in self.units.items()},
        }

    @cached_property
    def compiled(self) -> tuple[tuple[re.Pattern[str], str], ...]:
        """Each phrase as a compiled pattern (named groups per placeholder) and its meaning."""

        def group(name: str, n: int) -> str:
            words = sorted(self._words[name], key=len, reverse=True)
            alternatives = [re.escape(w) for w in words]
            if name == "num":
                alternatives.insert(0, r"\d{1,3}")
            return f"(?P<{name}{'_' * n}>" + "|".join(alternatives) + ")"

        out = []
        for phrase in self.phrases:
            pattern = phrase.pattern
            for name in ("num", "unit", "wd", "month"):
                parts = pattern.split("{" + name + "}")
                pattern = parts[0] + "".join(
                    group(name, n) + part for n, part in enumerate(parts[1:])
                )
            rx = re.compile(r"(?<![\w-])" + pattern + r"(?![\w-])", re.IGNORECASE)
            out.append((rx, phrase.means))
        return tuple(out)

    def meaning(self, match: re.Match[str], means: str) -> str:
        """The English phrase a match of a phrase pattern means."""
        values = {}
        for key, value in match.groupdict().items():
            name = key.rstrip("_")
            if value is not None and name in self._words:
                raw = value.casefold()
                values[name] = raw if raw.isdigit() else self._words[name].get(raw, raw)
        return means.format(**values)
