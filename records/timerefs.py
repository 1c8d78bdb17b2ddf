"""Relative time expressions in a text, resolved to calendar dates (no LLM).

A raw turn keeps the :class:`TimeRef` of each expression it contains; its display text
shows the resolved dates in brackets (:func:`annotate_times`).
"""

from __future__ import annotations

import re
from datetime import date
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, StrictStr, model_validator

TimeGranularity = Literal["day", "weekend", "week", "month", "season", "year"]
MONTH_NAMES = (
    "January February March April May June July August September October November December"
).split()
"""The English month names resolved dates are written with; the lexicon's English months
(:mod:`lamina.agents.common.lexicon`) are these, so they are defined once, here, in the
lowest layer that writes them."""
SEASON_NAMES = {3: "spring", 6: "summer", 9: "autumn", 12: "winter"}
"""The month each season starts in -> its name, as resolved dates are written."""


def _day_month(day: date) -> str:
    return f"{day.day} {MONTH_NAMES[day.month - 1]}"


class TimeRef(BaseModel):
    """A relative time expression in a text, resolved to dates against a reference day.

    ``start`` and ``end`` are inclusive calendar days (equal for a single day). They are
    the event time the expression names, which is separate from the record time.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    expression: StrictStr = Field(min_length=1, description="The words as written.")
    offset: int = Field(ge=0, description="Character offset of the expression in the text.")
    start: date
    end: date
    granularity: TimeGranularity

    @model_validator(mode="after")
    def _ordered(self) -> TimeRef:
        if self.end < self.start:
            raise ValueError("end is before start")
        return self

    def label(self) -> str:
        """The resolved dates as people write them: ``14 July 2023``, ``3–9 July 2023``."""
        s, e = self.start, self.end
        if self.granularity == "year":
            return str(s.year)
        if self.granularity == "month":
            return f"{MONTH_NAMES[s.month - 1]} {s.year}"
        if self.granularity == "season":
            return f"{SEASON_NAMES.get(s.month, 'season')} {s.year}"
        if s == e:
            return f"{_day_month(s)} {s.year}"
        if s.year != e.year:
            return f"{_day_month(s)} {s.year} – {_day_month(e)} {e.year}"
        if s.month != e.month:
            return f"{_day_month(s)} – {_day_month(e)} {e.year}"
        return f"{s.day}–{e.day} {MONTH_NAMES[s.month - 1]} {s.year}"


_BRACKET = re.compile(r"\s*\((?=[^()]*\d)[^()]{1,60}\)")
"""A bracket with a digit in it: dates a model wrote after an expression."""


def annotate_times(text: str, refs: list[TimeRef]) -> str:
    """``text`` with each resolved expression followed by its dates in brackets.

    ``"went there last Friday"`` becomes ``"went there last Friday (14 July 2023)"``. A
    bracket that already follows the expression (a model copying, or miscopying, the
    dates) is replaced by the resolved one; an expression its dates already follow
    ("Thursday 22 December 2022") is left as it is. Refs whose expression is no longer at
    their offset are skipped, never misplaced.
    """
    out, cursor = [], 0
    for ref in sorted(refs, key=lambda r: r.offset):
        end = ref.offset + len(ref.expression)
        if ref.offset < cursor or text[ref.offset : end] != ref.expression:
            continue
        if re.match(rf"[\s,]*{re.escape(ref.label())}", text[end:]):
            continue  # "on Thursday 22 December 2022": the dates are written already
        out.append(f"{text[cursor:end]} ({ref.label()})")
        cursor = end
        bracket = _BRACKET.match(text, cursor)
        if bracket is not None:  # a bracket already there (a model's copy) is replaced
            cursor = bracket.end()
    out.append(text[cursor:])
    return "".join(out)


__all__ = [
    "MONTH_NAMES",
    "SEASON_NAMES",
    "TimeGranularity",
    "TimeRef",
    "annotate_times",
]
