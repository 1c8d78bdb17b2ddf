"""The conversation as text for the baselines: a truncated transcript and fixed-size chunks.

Tokens are counted with the answer model's own tokenizer when it is a local GGUF model
(:class:`lamina.llm.tokens.GGUFTokenizer`); for other endpoints they are estimated
offline with the bundled bert-base-uncased WordPiece vocabulary, and labelled so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from importlib import resources
from typing import Any, Protocol
from zoneinfo import ZoneInfo

from lamina.agents.common.formatting import as_data, long_date

from ..datasets.locomo import Conversation, Turn

UTC_ZONE = ZoneInfo("UTC")
"""LoCoMo stamps are read as UTC; dates are shown as written (``8 May 2023``)."""


class TokenCounter(Protocol):
    """Counts tokens of a text."""

    def count(self, text: str) -> int:
        """Tokens of ``text``."""
        ...


class WordPieceCounter:
    """An estimate with the bundled WordPiece vocabulary (no download); loaded on first use.

    It is not the served model's tokenizer, so its counts are labelled estimated.
    """

    name = "estimated: bert-base-uncased WordPiece (bundled vocabulary, not the model's own)"
    estimated = True

    def __init__(self) -> None:
        self._tokenizer: Any = None

    def count(self, text: str) -> int:
        """Tokens of ``text`` without the [CLS]/[SEP] markers."""
        if self._tokenizer is None:
            from tokenizers import BertWordPieceTokenizer

            vocab = resources.files("lamina.embedders.resources").joinpath("vocab.txt")
            with resources.as_file(vocab) as path:
                self._tokenizer = BertWordPieceTokenizer(str(path), lowercase=True)
        return max(0, len(self._tokenizer.encode(text).ids) - 2)


class WordCounter:
    """A cheap estimate: words x 1.3 (for tests)."""

    name = "estimated: words x 1.3"
    estimated = True

    def count(self, text: str) -> int:
        """Approximate tokens of ``text``."""
        return int(len(text.split()) * 1.3 + 0.999)


def turn_line(turn: Turn) -> str:
    """``Speaker: text [shared image: caption]``."""
    line = f"{turn.speaker}: {turn.text}"
    return line + (f" [shared image: {turn.caption}]" if turn.caption else "")


def session_header(turn: Turn) -> str:
    """The line that opens a session in a transcript: its id and date."""
    when = f"{long_date(turn.occurred_at, UTC_ZONE)}, {turn.occurred_at:%H:%M}"
    return f"--- {turn.session_id}, {when} ---"


@dataclass
class Transcript:
    """The conversation's most recent turns that fit a token budget."""

    text: str
    kept: list[str]
    """Dialogue ids of the turns kept."""
    dropped: int
    """Turns left out (the oldest ones)."""
    tokens: int


def transcript(conv: Conversation, budget: int, counter: TokenCounter) -> Transcript:
    """The dated sessions, oldest first, keeping the most recent turns that fit ``budget``."""
    kept: list[Turn] = []
    used = 0
    sessions: set[str] = set()
    for turn in reversed(conv.turns):
        cost = counter.count(turn_line(turn)) + 1
        if turn.session_id not in sessions:
            cost += counter.count(session_header(turn)) + 1
        if used + cost > budget:
            break
        used += cost
        sessions.add(turn.session_id)
        kept.append(turn)
    kept.reverse()
    lines: list[str] = []
    current = None
    for turn in kept:
        if turn.session_id != current:
            current = turn.session_id
            lines.append(session_header(turn))
        lines.append(turn_line(turn))
    return Transcript(
        text=as_data("\n".join(lines)),
        kept=[t.dia_id for t in kept],
        dropped=len(conv.turns) - len(kept),
        tokens=used,
    )


@dataclass
class Chunk:
    """A fixed-size window of words over the whole transcript."""

    index: int
    text: str
    occurred_at: datetime
    dia_ids: list[str] = field(default_factory=list)


def chunks(conv: Conversation, words: int, overlap: int) -> list[Chunk]:
    """Windows of ``words`` words, each starting ``words - overlap`` after the previous."""
    if words < 1 or not 0 <= overlap < words:
        raise ValueError(f"need words >= 1 and 0 <= overlap < words, got {words}, {overlap}")
    stream: list[tuple[str, Turn]] = []
    current = None
    for turn in conv.turns:
        if turn.session_id != current:
            current = turn.session_id
            stream.extend((w, turn) for w in session_header(turn).split())
        stream.extend((w, turn) for w in turn_line(turn).split())
    out: list[Chunk] = []
    step = words - overlap
    for start in range(0, max(1, len(stream) - overlap), step):
        window = stream[start : start + words]
        if not window:
            break
        ids = list(dict.fromkeys(t.dia_id for _, t in window))
        out.append(
            Chunk(
                index=len(out),
                text=" ".join(w for w, _ in window),
                occurred_at=window[0][1].occurred_at,
                dia_ids=ids,
            )
        )
    return out
