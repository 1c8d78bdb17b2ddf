"""Deterministic resolution of relative time expressions ("last Friday", "two weeks ago").

A small grammar finds the expressions a person uses about their own past and plans, so
that words like "May I ask" or "now" are never read as dates. The arithmetic of offsets
("three days ago", "next Friday", "last month") is done by ``dateparser``, a maintained
parser; this module adds what it lacks: weekends, seasons, month names, "the week before
last", vague day ranges, and the expansion of a point to the period its unit names
("last week" is a Monday-Sunday week, "last year" a calendar year).

Other languages and chat forms ("hace tres días", "letzten Freitag", "last fri") are
read by each language's phrases (:mod:`.lexicon`), each with the English phrase of this
grammar it means, so the arithmetic is written once.

Expressions that cannot be resolved ("recently", "a few years ago") are left out, so the
text keeps them as written. Nothing here calls an LLM or raises on odd input.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from ...records.model import TimeGranularity, TimeRef
from .lexicon import ENGLISH, LEXICONS, MONTHS_EN, SEASONS_EN, UNITS_EN, WEEKDAYS_EN

_MAX_YEARS = 200
"""Offsets further than this from the reference day are not resolved."""
_NUMBERS = {**ENGLISH.numbers, "a couple of": 2, "couple of": 2, "a couple": 2}
_NUM = r"(?P<num>\d{1,3}|" + "|".join(sorted(_NUMBERS, key=len, reverse=True)) + ")"
_UNIT = r"(?P<unit>" + "|".join(UNITS_EN) + ")s?"
_WD = r"(?P<wd>" + "|".join(WEEKDAYS_EN) + ")"
_MONTH = r"(?P<month>" + "|".join(MONTHS_EN) + ")"
_SEASON = r"(?P<season>" + "|".join(SEASONS_EN) + ")"
_LAST = r"(?P<rel>last|this past|past|this coming|this|next|coming)"


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(r"(?<![\w-])" + pattern + r"(?![\w-])", re.IGNORECASE)


def _day_ref(anchor: date, days: int) -> tuple[date, date, TimeGranularity]:
    day = anchor + timedelta(days=days)
    return day, day, "day"


def _week_of(day: date) -> tuple[date, date, TimeGranularity]:
    monday = day - timedelta(days=day.weekday())
    return monday, monday + timedelta(days=6), "week"


def _weekend(anchor: date, shift: int) -> tuple[date, date, TimeGranularity]:
    """The Saturday-Sunday ``shift`` weekends from the reference day's own (0: this one).

    "Last weekend" is the one before the reference week's weekend, also when said on a
    Saturday or Sunday; "next weekend" said on a weekday is the coming one.
    """
    saturday = anchor + timedelta(days=5 - anchor.weekday())
    if shift > 0 and anchor.weekday() < 5:
        shift -= 1
    saturday += timedelta(days=7 * shift)
    return saturday, saturday + timedelta(days=1), "weekend"


def month_days(year: int, month: int) -> tuple[date, date]:
    """The first and the last day of a month."""
    nxt = date(year + (month == 12), month % 12 + 1, 1)
    return date(year, month, 1), nxt - timedelta(days=1)


def _month_span(year: int, month: int) -> tuple[date, date, TimeGranularity]:
    return (*month_days(year, month), "month")


def _year_span(year: int) -> tuple[date, date, TimeGranularity]:
    return date(year, 1, 1), date(year, 12, 31), "year"


def season_days(name: str, year: int) -> tuple[date, date]:
    """A meteorological season's first and last day (northern hemisphere).

    ``name`` is an English season, any case; winter ``year`` starts in December.
    """
    start_month = SEASONS_EN[name.lower()]
    end_month = (start_month + 1) % 12 + 1
    return date(year, start_month, 1), month_days(year + (end_month < start_month), end_month)[1]


def _expand(point: date, unit: str) -> tuple[date, date, TimeGranularity]:
    if unit == "week":
        return _week_of(point)
    if unit == "month":
        return _month_span(point.year, point.month)
    if unit == "year":
        return _year_span(point.year)
    return point, point, "day"


def _dateparser_point(phrase: str, anchor: date) -> date | None:
    """``dateparser``'s reading of an offset phrase against ``anchor`` (noon), or None."""
    import dateparser  # deferred: importing it compiles its language data

    base = datetime.combine(anchor, time(12))
    try:
        parsed = dateparser.parse(
            phrase,
            languages=["en"],
            settings={"RELATIVE_BASE": base, "RETURN_AS_TIMEZONE_AWARE": False},
        )
    except (ValueError, OverflowError, ArithmeticError):
        return None
    if not isinstance(parsed, datetime) or abs(parsed.year - anchor.year) > _MAX_YEARS:
        return None
    return parsed.date()


Span = tuple[date, date, TimeGranularity]
Resolver = Callable[[re.Match[str], date], Span | None]


def _fixed_day(days: int) -> Resolver:
    return lambda m, anchor: _day_ref(anchor, days)


def _vague_days(m: re.Match[str], anchor: date) -> Span:
    return anchor - timedelta(days=5), anchor - timedelta(days=2), "day"


def _before_last(m: re.Match[str], anchor: date) -> Span | None:
    unit = m.group("unit").lower()
    if unit == "weekend":
        return _weekend(anchor, -2)
    if unit == "week":
        return _week_of(anchor - timedelta(days=14))
    if unit == "month":
        year, month = anchor.year, anchor.month - 2
        while month < 1:
            year, month = year - 1, month + 12
        return _month_span(year, month)
    return _year_span(anchor.year - 2)


def _count(m: re.Match[str]) -> int | None:
    raw = m.group("num").lower()
    return int(raw) if raw.isdigit() else _NUMBERS.get(raw)


def _offset(sign: int) -> Resolver:
    def resolve(m: re.Match[str], anchor: date) -> Span | None:
        n, unit = _count(m), m.group("unit").lower()
        if n is None or (unit == "year" and n > _MAX_YEARS) or n > 5000:
            return None
        if unit == "weekend":
            return _weekend(anchor, sign * n)
        plural = unit + ("s" if n != 1 else "")
        phrase = f"{n} {plural} ago" if sign < 0 else f"in {n} {plural}"
        point = _dateparser_point(phrase, anchor)
        return None if point is None else _expand(point, unit)

    return resolve


def _shift(rel: str) -> int:
    rel = rel.lower()
    if rel in ("last", "past", "this past"):
        return -1
    if rel in ("next", "coming", "this coming"):
        return 1
    return 0


def _relative_weekday(m: re.Match[str], anchor: date) -> Span | None:
    shift, wd = _shift(m.group("rel")), m.group("wd").lower()
    target = WEEKDAYS_EN.index(wd)
    if shift == 0:  # "this Friday": that day of the reference day's week
        return _day_ref(anchor, target - anchor.weekday())
    point = _dateparser_point(f"{'last' if shift < 0 else 'next'} {wd}", anchor)
    if point is None or point.weekday() != target or (point < anchor) != (shift < 0):
        return None
    return point, point, "day"


_FUTURE = re.compile(
    r"\b(?:will|won't|shall|going to|gonna|plan(?:ning)? to|hope to|can't wait|"
    r"looking forward|about to)\b|'ll\b",
    re.IGNORECASE,
)
_PAST = re.compile(
    r"\b(?:was|were|went|had|did|got|took|made|came|saw|met|ran|left|gave|found|felt|"
    r"began|bought|brought|caught|told|won|wrote|spent|kept|held|(?!(?:excit|interest|"
    r"tir|scar|bor|need|pleas|amaz|thrill|stress|worri)ed\b)[a-z]{2,}ed)\b",
    re.IGNORECASE,
)
_CLAUSE_END = re.compile(r"[.!?;]")


def _tense(m: re.Match[str]) -> int:
    """-1 if the sentence around the match speaks of the past, 1 of the future, else 0."""
    text = m.string
    starts = [e.end() for e in _CLAUSE_END.finditer(text, 0, m.start())]
    end = _CLAUSE_END.search(text, m.end())
    clause = text[starts[-1] if starts else 0 : end.start() if end else len(text)]
    if _FUTURE.search(clause):
        return 1
    return -1 if _PAST.search(clause) else 0


def _on_weekday(m: re.Match[str], anchor: date) -> Span | None:
    """A bare weekday ("on Friday"), read by the tense of its sentence.

    In the past tense it is the last such day on or before the reference day, in the
    future tense the next one on or after it; unresolved when the tense is unclear.
    """
    tense = _tense(m)
    if tense == 0:
        return None
    back = (anchor.weekday() - WEEKDAYS_EN.index(m.group("wd").lower())) % 7
    return _day_ref(anchor, -back if tense < 0 else (7 - back) % 7)


def _relative_unit(m: re.Match[str], anchor: date) -> Span | None:
    rel, unit = m.group("rel").lower(), m.group("unit").lower()
    shift = _shift(rel)
    if unit == "weekend":
        if rel == "this" and anchor.weekday() < 5 and _tense(m) < 0:
            shift = -1  # "we went hiking this weekend", said on a weekday
        return _weekend(anchor, shift)
    if rel == "past" and unit in ("week", "month", "year"):  # "the past week": up to now
        back = {"week": 7, "month": 30, "year": 365}[unit]
        return anchor - timedelta(days=back), anchor, "day"
    if unit == "day":
        return None
    if shift == 0:
        return _expand(anchor, unit)
    point = _dateparser_point(f"{'last' if shift < 0 else 'next'} {unit}", anchor)
    return None if point is None else _expand(point, unit)


def _relative_month(m: re.Match[str], anchor: date) -> Span | None:
    shift, month = _shift(m.group("rel")), MONTHS_EN.index(m.group("month").lower()) + 1
    year = anchor.year
    if shift < 0 and month >= anchor.month:
        year -= 1
    elif shift > 0 and month <= anchor.month:
        year += 1
    return _month_span(year, month)


def _relative_season(m: re.Match[str], anchor: date) -> Span | None:
    shift, name = _shift(m.group("rel")), m.group("season").lower()
    spans = [season_days(name, y) for y in range(anchor.year - 2, anchor.year + 2)]
    if shift < 0:
        chosen = [s for s in spans if s[1] < anchor][-1]
    elif shift > 0:
        chosen = [s for s in spans if s[0] > anchor][0]
    else:
        holding = [s for s in spans if s[0] <= anchor <= s[1]]
        chosen = holding[0] if holding else season_days(name, anchor.year)
    return chosen[0], chosen[1], "season"


_GRAMMAR: list[tuple[re.Pattern[str], Resolver]] = [
    (_rx(r"the day before yesterday"), _fixed_day(-2)),
    (_rx(r"the day after tomorrow"), _fixed_day(2)),
    (_rx(r"the (?P<unit>week|weekend|month|year) before last"), _before_last),
    (_rx(r"(?:a few|a couple of|couple of|few) days ago|the other day"), _vague_days),
    (_rx(_NUM + r" " + _UNIT + r" ago"), _offset(-1)),
    (_rx(r"in " + _NUM + r" " + _UNIT), _offset(1)),
    (_rx(_NUM + r" " + _UNIT + r" from now"), _offset(1)),
    (_rx(_LAST + r" " + _WD), _relative_weekday),
    (_rx(_LAST + r" " + _UNIT), _relative_unit),
    (_rx(r"on " + _WD), _on_weekday),
    (_rx(r"(?P<rel>last|this|next) " + _MONTH), _relative_month),
    (_rx(_LAST + r" " + _SEASON), _relative_season),
    (_rx(r"yesterday|last night"), _fixed_day(-1)),
    (_rx(r"today|tonight|this (?:morning|afternoon|evening)"), _fixed_day(0)),
    (_rx(r"tomorrow"), _fixed_day(1)),
]


def reference_day(when: datetime, tz: ZoneInfo) -> date:
    """The calendar day of ``when`` in ``tz``: what "yesterday" is counted from."""
    return when.astimezone(tz).date()


def _resolve_english(text: str, anchor: date) -> list[TimeRef]:
    """The expressions of the English grammar in ``text`` (longer ones first)."""
    found: list[TimeRef] = []
    taken: list[tuple[int, int]] = []
    for pattern, resolve in _GRAMMAR:
        for m in pattern.finditer(text):
            start, end = m.span()
            if any(start < b and a < end for a, b in taken):
                continue
            try:
                span = resolve(m, anchor)
            except (ValueError, OverflowError, IndexError):
                span = None  # an impossible date: the expression stays text
            if span is None:
                continue
            taken.append((start, end))
            found.append(
                TimeRef(
                    expression=m.group(),
                    offset=start,
                    start=span[0],
                    end=span[1],
                    granularity=span[2],
                )
            )
    return found


def resolve_times(text: str, anchor: date) -> list[TimeRef]:
    """Every resolvable relative time expression in ``text``, in order of appearance.

    The English grammar reads the text first, then every language's phrases; longer
    expressions win over the shorter ones inside them ("the week before last" over
    "last"), and overlapping matches are dropped.
    """
    found = _resolve_english(text, anchor)
    taken = [(r.offset, r.offset + len(r.expression)) for r in found]
    for lexicon in LEXICONS:
        for pattern, means in lexicon.compiled:
            for m in pattern.finditer(text):
                start, end = m.span()
                if any(start < b and a < end for a, b in taken):
                    continue
                english = lexicon.meaning(m, means)
                whole = [r for r in _resolve_english(english, anchor) if r.expression == english]
                if not whole:
                    continue
                taken.append((start, end))
                found.append(whole[0].model_copy(update={"expression": m.group(), "offset": start}))
    return sorted(found, key=lambda r: r.offset)
