"""Deterministic analysis of a recall question: time window, people and question type.

No LLM is called. The analysis steers retrieval (a time-window channel, a speaker
channel, how much room derived memory gets) and the answer's format hint; it never
filters evidence away on its own.

* **Time**: relative expressions ("last summer", "two weeks ago") are resolved by
  :func:`~lamina.agents.timeparse.resolve_times` against a reference time (the latest
  stored turn of the conversation); absolute ones ("in May 2023", "on 1 May, 2023",
  "in 2022") are read by ``dateparser`` with the reference as its base. "before" and
  "after" turn a date into an open window (REMem's operators). An expression that names
  an event instead of a date ("before the trip") stays text in ``unresolved``.
* **People**: words of the question are matched leniently against the speaker labels
  the store knows (:mod:`.names`).
* **Type**: ``temporal`` (when / what year / how long ago), ``aggregation`` (lists,
  counts, "both"), ``yesno`` (starts with an auxiliary verb) or ``other``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, date, datetime, time, timedelta
from typing import Literal
from zoneinfo import ZoneInfo

from pydantic import BaseModel, Field

from ...errors import InvalidInputError
from ...stores.filters import TimeWindow
from .lexicon import ENGLISH, MONTHS_EN, SEASONS_EN
from .names import match_speakers
from .timeparse import month_days, reference_day, resolve_times, season_days

QuestionType = Literal["temporal", "aggregation", "yesno", "other"]

_MAX_YEARS_AWAY = 30
"""A four-digit number further than this from the reference year is not a year."""
_MONTH_FORMS = sorted({m for forms in ENGLISH.months for m in forms}, key=len, reverse=True)
_MONTH = r"(?:" + "|".join(_MONTH_FORMS) + r")\.?"
_DAY = r"\d{1,2}(?:st|nd|rd|th)?"
_YEAR = r"(?:19|20)\d{2}"
_PREP = r"(?P<prep>on|in|during|since|before|after|by|around|from|until|as of)"
_ABSOLUTE = re.compile(
    r"(?<![\w-])(?:" + _PREP + r"\s+(?:the\s+(?:year\s+)?)?)?(?P<date>"
    + _DAY + r"\s+(?:of\s+)?" + _MONTH + r"(?:,?\s+" + _YEAR + r")?"
    + r"|" + _MONTH + r"\s+" + _DAY + r"(?:,?\s+" + _YEAR + r")?(?![\d:])"
    + r"|" + _MONTH + r",?\s+" + _YEAR
    + r"|(?P<season>" + "|".join(SEASONS_EN) + r")(?:\s+of)?\s+" + _YEAR
    + r"|" + _YEAR + r")(?![\w-])",
    re.IGNORECASE,
)  # fmt: skip
"""A date with a day, a month and/or a year, optionally after a preposition."""
_BARE_MONTH = re.compile(
    r"(?<![\w-])(?P<prep>in|during|since|before|after|by|until)\s+(?P<date>"
    + "|".join(MONTHS_EN)
    + r")(?![\w-])",
    re.IGNORECASE,
)
"""A month without day or year needs a preposition ("in May"): "May I" is no date."""
_EVENT_RELATIVE = re.compile(
    r"(?<![\w-])(?:before|after|since|until|during)\s+(?:the|my|his|her|their|our|your|a|an)"
    r"\s+[a-z][\w-]*(?:\s+(?!(?:and|or|but|to|in|on|at|with|for|of|did|was|were)\b)"
    r"[a-z][\w-]*)?",
    re.IGNORECASE,
)
_VAGUE = re.compile(
    r"(?<![\w-])(?:recently|lately|(?:a\s+)?(?:few|couple\s+of|several|many)\s+"
    r"(?:days|weeks|months|years)\s+ago|years\s+ago|long\s+ago)(?![\w-])",
    re.IGNORECASE,
)
_OF = re.compile(r"\s+of\b", re.IGNORECASE)

_TEMPORAL = re.compile(
    r"^\s*(?:when\b|what\s+(?:year|month|date|day|time|week|season)\b|which\s+(?:year|month|"
    r"date|day|week|season)\b|how\s+long\b|how\s+many\s+(?:days|weeks|months|years)\b|"
    r"in\s+what\s+(?:year|month)\b|on\s+what\s+(?:date|day)\b)",
    re.IGNORECASE,
)
_YESNO = re.compile(
    r"^\s*(?:is|are|was|were|do|does|did|has|have|had|can|could|will|would|should|shall|"
    r"might|must|am|isn't|aren't|wasn't|weren't|don't|doesn't|didn't|hasn't|haven't)\b",
    re.IGNORECASE,
)
_AGGREGATION = re.compile(
    r"^\s*(?:how\s+many\b|list\b|name\s+(?:all|the)\b)|\bboth\b|\ball\s+(?:the\s+)?\w+s\b|"
    r"^\s*(?:what|which)\s+(?:are|were|have|has)\b|"
    r"^\s*(?:what|which)\s+(?:kinds?|types?|sorts?)\s+of\b|"
    r"^\s*(?:what|which)\s+(?!is\b|was\b|does\b|has\b|this\b|kind\b|type\b)[a-z]+s\s+"
    r"(?:do|does|did|have|has|had|are|were)\b",
    re.IGNORECASE,
)


class QueryAnalysis(BaseModel):
    """What the question says about time, people and the answer it wants."""

    question_type: QuestionType = "other"
    persons: list[str] = Field(default_factory=list)
    """Speaker labels the question names (as stored, e.g. ``Maxine`` for "Max")."""
    after: datetime | None = None
    """Inclusive lower bound of the question's time window (UTC), if any."""
    before: datetime | None = None
    """Exclusive upper bound of the question's time window (UTC), if any."""
    time_expressions: list[str] = Field(default_factory=list)
    """Time expressions read as dates, as written."""
    unresolved: list[str] = Field(default_factory=list)
    """Time expressions kept as text: event-relative ("before the trip") or vague."""
    reference: datetime | None = None
    """What relative expressions were resolved against (UTC)."""

    def about_time(self) -> bool:
        """Whether the question asks when, or names a date, a period or an event to date by."""
        return self.question_type == "temporal" or bool(self.time_expressions or self.unresolved)

    def gathers(self) -> bool:
        """Whether it asks for a list, a count or what two share, across time (not about time)."""
        return self.question_type == "aggregation" and not self.about_time()

    def window(self) -> TimeWindow | None:
        """The time window, or None when the question names no usable one."""
        if self.after is None and self.before is None:
            return None
        try:
            return TimeWindow(after=self.after, before=self.before)
        except InvalidInputError:
            return None  # inverted by odd input: no window rather than an error


def question_type(question: str) -> QuestionType:
    """``temporal``, ``aggregation``, ``yesno`` or ``other``, by the question's wording."""
    if _TEMPORAL.search(question):
        return "temporal"
    if _YESNO.search(question):
        return "yesno"
    if _AGGREGATION.search(question):
        return "aggregation"
    return "other"


def _start_of(day: date, tz: ZoneInfo) -> datetime:
    return datetime.combine(day, time(), tz).astimezone(UTC)


def _absolute_span(text: str, season: str | None, anchor: date) -> tuple[date, date] | None:
    """Inclusive days an absolute date expression names, or None if it is no date."""
    if season:
        year = int(re.findall(_YEAR, text)[-1])
        return season_days(season, year)
    if re.fullmatch(_YEAR, text.strip()):
        year = int(text)
        if abs(year - anchor.year) > _MAX_YEARS_AWAY:
            return None
        return date(year, 1, 1), date(year, 12, 31)
    from dateparser.date import DateDataParser  # deferred: it compiles language data

    base = datetime.combine(anchor, time(12))
    settings = {"RELATIVE_BASE": base, "PREFER_DATES_FROM": "past"}
    try:
        data = DateDataParser(languages=["en"], settings=settings).get_date_data(text)
    except (ValueError, OverflowError, ArithmeticError, TypeError):
        return None
    point = data.date_obj
    if point is None or abs(point.year - anchor.year) > _MAX_YEARS_AWAY:
        return None
    if data.period == "year":
        return date(point.year, 1, 1), date(point.year, 12, 31)
    if data.period == "month":
        return month_days(point.year, point.month)
    return point.date(), point.date()


def _bare_month_span(name: str, anchor: date) -> tuple[date, date]:
    """The latest such month on or before the reference day's month."""
    month = MONTHS_EN.index(name.lower()) + 1
    return month_days(anchor.year - (month > anchor.month), month)


class _Window:
    """Collects the spans an analysis finds and turns them into one window."""

    def __init__(self) -> None:
        self.after: date | None = None
        self.before: date | None = None
        """Exclusive."""
        self.bounded = False

    def add(self, start: date, end: date, prep: str | None) -> None:
        prep = (prep or "").lower()
        if prep in ("before", "by", "until", "as of"):
            low, high = None, start if prep == "before" else end + timedelta(days=1)
        elif prep in ("after", "since"):
            low, high = end + timedelta(days=1) if prep == "after" else start, None
        else:
            low, high = start, end + timedelta(days=1)
        if not self.bounded:
            self.after, self.before, self.bounded = low, high, True
            return
        # several expressions: the span that covers them all
        self.after = None if low is None or self.after is None else min(self.after, low)
        self.before = None if high is None or self.before is None else max(self.before, high)


def _time_of(
    question: str, reference: datetime | None, tz: ZoneInfo
) -> tuple[_Window, list[str], list[str]]:
    """The window, the expressions read as dates, and those kept as text.

    Without a reference only dates that carry their year are read; relative
    expressions and bare months are kept as text.
    """
    window, found, unresolved = _Window(), [], []
    taken: list[tuple[int, int]] = []

    def free(start: int, end: int) -> bool:
        return not any(start < b and a < end for a, b in taken)

    anchored = reference is not None
    anchor = reference_day(reference, tz) if reference is not None else date.today()
    for pattern in (_ABSOLUTE, _BARE_MONTH):
        for m in pattern.finditer(question):
            if not free(*m.span()):
                continue
            text = m.group("date")
            if not anchored and not re.search(_YEAR, text):
                continue
            if pattern is _BARE_MONTH:
                span: tuple[date, date] | None = _bare_month_span(text, anchor)
            else:
                span = _absolute_span(text, m.group("season"), anchor)
            if span is None:
                continue
            taken.append(m.span())
            found.append(m.group().strip())
            window.add(span[0], span[1], m.group("prep"))
    for ref in resolve_times(question, anchor):
        start, end = ref.offset, ref.offset + len(ref.expression)
        if not free(start, end) or _OF.match(question, end):
            continue  # "the last week of October 2023" is no offset from the reference
        taken.append((start, end))
        if not anchored:
            unresolved.append(ref.expression)
            continue
        before = question[:start].rstrip().rsplit(" ", 1)[-1].lower()
        found.append(ref.expression)
        window.add(ref.start, ref.end, before if before in ("before", "after") else None)
    for pattern in (_EVENT_RELATIVE, _BARE_MONTH, _VAGUE):
        for m in pattern.finditer(question):
            if free(*m.span()):
                taken.append(m.span())
                unresolved.append(m.group())
    return window, found, unresolved


def analyze_question(
    question: str,
    *,
    reference: datetime | None,
    speakers: Sequence[str] = (),
    tz: ZoneInfo | None = None,
) -> QueryAnalysis:
    """Analyse ``question`` without an LLM.

    Args:
        question: The question as asked.
        reference: What relative expressions are resolved against (usually the latest
            stored turn); without one only dates that carry their year are read.
        speakers: Speaker labels the store knows.
        tz: Time zone the dates are read in (default UTC).

    Raises:
        InvalidInputError: ``question`` is not a non-empty string.
    """
    if not isinstance(question, str) or not question.strip():
        raise InvalidInputError("a question must be a non-empty string")
    zone = tz or ZoneInfo("UTC")
    window, found, unresolved = _time_of(question, reference, zone)
    return QueryAnalysis(
        question_type=question_type(question),
        persons=match_speakers(question, speakers),
        after=_start_of(window.after, zone) if window.after else None,
        before=_start_of(window.before, zone) if window.before else None,
        time_expressions=found,
        unresolved=list(dict.fromkeys(unresolved)),
        reference=reference.astimezone(UTC) if reference is not None else None,
    )


__all__ = [
    "QueryAnalysis",
    "QuestionType",
    "analyze_question",
    "question_type",
]
