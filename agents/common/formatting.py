"""Shared helpers that turn records into delimited prompt text."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import date, datetime
from zoneinfo import ZoneInfo

from ...records.model import MemoryRecord, RawTurn

_MAX_FIELD = 4000
_GAP = (
    "[\\s\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f"
    "\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0]*"
)
"""Characters a model may skip over when reading a tag: spaces, zero-width, joiners."""
_DATA_TAG = re.compile(
    "[<\uff1c\ufe64]"
    + _GAP
    + "[/\uff0f]?"
    + _GAP
    + _GAP.join(("[d\uff44]", "[a\uff41]", "[t\uff54]", "[a\uff41]"))
    + _GAP
    + "(?![\\w])",
    re.IGNORECASE,
)
"""An opening or closing ``data`` tag, also with zero-width, fullwidth or case tricks."""
_LINE_BREAK = re.compile("\r\n|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]")
SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+")
"""The space after a sentence's closing mark: ``SENTENCE_BREAK.split(text)`` gives its sentences."""


def clip(text: str, limit: int = _MAX_FIELD) -> str:
    """Shorten ``text`` to ``limit`` characters so one memory cannot flood a prompt."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def as_data(text: str) -> str:
    """Make ``text`` safe inside a ``<data>`` block: it can neither open nor close one.

    The ``<`` of anything a model could read as a ``data`` tag becomes ``&lt;``.
    """
    return _DATA_TAG.sub(lambda m: "&lt;" + m.group()[1:], text)


def data_line(text: str, limit: int = _MAX_FIELD) -> str:
    """One memory field for a labelled line: clipped, delimiter-safe, and indented.

    Continuation lines are indented, so a memory can never start a line that looks
    like another memory's ``[label]``.
    """
    return _LINE_BREAK.sub("\n    ", as_data(clip(text, limit)))


def local_time(when: datetime, tz: ZoneInfo) -> str:
    """Format an aware datetime as ``2023-05-08 13:56 (Mon)`` in ``tz``."""
    return when.astimezone(tz).strftime("%Y-%m-%d %H:%M (%a)")


def long_date(when: datetime, tz: ZoneInfo) -> str:
    """Format an aware datetime's day as ``8 May 2023`` in ``tz``.

    That is how people (and the benchmarks' gold answers) write dates, so an answer that copies
    a memory's date reads naturally.
    """
    return _day_text(when.astimezone(tz))


def _day_text(day: date) -> str:
    return f"{day.day} {day:%B %Y}"


_ISO_DAY = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_ISO_MONTH = re.compile(r"\b(\d{4})-(\d{2})\b(?!-\d)")


def _iso_day(m: re.Match[str]) -> str:
    try:
        day = date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    except ValueError:  # not a calendar day: leave it as written
        return m.group()
    return _day_text(day)


def _iso_month(m: re.Match[str]) -> str:
    month = int(m.group(2))
    return f"{date(2000, month, 1):%B} {m.group(1)}" if 1 <= month <= 12 else m.group()


def natural_dates(text: str) -> str:
    """``text`` with ISO dates written as the memories write them.

    ``2023-07-10`` becomes ``10 July 2023`` and ``2023-07`` becomes ``July 2023``, as
    :func:`long_date` writes them; a year range (``2019-20``) or a number that is no
    calendar date stays as written. A small model asked for structured output sometimes
    answers in ISO form although its instructions show ``7 May 2023``.
    """
    return _ISO_MONTH.sub(_iso_month, _ISO_DAY.sub(_iso_day, text))


def distinct_items(text: str) -> str:
    """``text`` as a list said once: a comma-separated item that repeats is kept once.

    A small model that lists things sometimes loops ("Pride event, Pride event, Pride
    event, ...") until its length limit cuts the answer, leaving a last item cut short;
    that one goes too when it begins an item already kept (only the answer's last item:
    "hiking" said after "hiking in the forest" and before a repeat stays). An answer with
    no repeated item is returned as it is.
    """
    items = [part.strip() for part in text.split(",")]
    keys = [item.casefold() for item in items]
    if len(set(keys)) == len(keys):
        return text
    kept: dict[str, str] = {}  # each item's first spelling, by its folded form
    for item, key in zip(items, keys, strict=True):
        if item:
            kept.setdefault(key, item)
    last = keys[-1]
    if list(kept)[-1:] == [last] and any(k.startswith(last) and k != last for k in kept):
        del kept[last]  # the answer's last item, said first there: a repeat cut off
    return ", ".join(kept.values())


def said_line(speaker: str, text: str, caption: str | None) -> str:
    """``speaker: text``, with the caption of the image the speaker shared."""
    line = f"{data_line(speaker, 200)}: {data_line(text)}"
    return f"{line} [shared image: {data_line(caption, 300)}]" if caption else line


def format_turns(
    turns: Sequence[RawTurn], tz: ZoneInfo, prefix: str = "t"
) -> tuple[str, dict[str, str]]:
    """Render turns one per line with short labels; return the text and label -> id."""
    lines, labels = [], {}
    for n, turn in enumerate(turns, start=1):
        label = f"{prefix}{n}"
        labels[label] = turn.id
        said = said_line(turn.speaker, turn.text, turn.media_caption)
        lines.append(f"[{label}] {local_time(turn.occurred_at, tz)} {said}")
    return "\n".join(lines), labels


def format_excerpt(turns: Sequence[RawTurn], tz: ZoneInfo) -> tuple[str, dict[str, str]]:
    """Render turns compactly for construction: a date line per day, then labelled turns.

    Each turn shows its resolved times ("last Friday (14 July 2023)"), so the model copies
    dates instead of computing them. Returns the text and label -> id.
    """
    lines, labels, day = [], {}, None
    for n, turn in enumerate(turns, start=1):
        local = turn.occurred_at.astimezone(tz)
        if local.date() != day:
            day = local.date()
            lines.append(f"({local:%A} {long_date(turn.occurred_at, tz)})")
        label = f"t{n}"
        labels[label] = turn.id
        lines.append(
            f"[{label}] {said_line(turn.speaker, turn.display_text(), turn.media_caption)}"
        )
    return "\n".join(lines), labels


def format_record(record: MemoryRecord, tz: ZoneInfo) -> str:
    """Render one episode or scene as ``title (date): text``."""
    title = data_line(getattr(record, "title", "") or record.granularity.value, 300)
    return f"{title} ({record.occurred_at.astimezone(tz):%Y-%m-%d}): {data_line(record.text)}"


def approx_tokens(text: str) -> int:
    """A token estimate (words x 1.3), for a model whose tokenizer is unknown.

    Budgets count with the served model's own tokenizer where lamina can run it
    (:func:`lamina.llm.tokens.token_counter_for`); this is the labelled fallback.
    """
    return int(len(text.split()) * 1.3) + 1
