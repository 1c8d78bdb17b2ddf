"""What the harness needs of a peer memory library, and how turns are handed to one.

A peer writes a batch of turns into its memory of one conversation and searches that
memory; its LLM calls land in its :class:`~.costs.CallLog`. Every peer gets the same
messages: one ``user`` message per turn, ``(8 May 2023, 13:56) Caroline: text``, because
LoCoMo's two speakers are both people (neither is an assistant) and because a peer's own
clock would date the turns today (mem0's open-source ``add`` has no date argument).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol
from zoneinfo import ZoneInfo

from lamina.agents.common.formatting import long_date
from lamina.graphs import TurnInput

from .costs import CallLog

UTC_ZONE = ZoneInfo("UTC")


@dataclass(frozen=True)
class Recalled:
    """One memory a peer's search returned."""

    text: str
    dia_ids: list[str] = field(default_factory=list)
    """The dialogue ids of the batch it was written from (the turns it may come from)."""
    on: datetime | None = None
    """When that batch's session took place."""


class PeerMemory(Protocol):
    """A peer library's memory, one namespace (or user id) per conversation."""

    @property
    def log(self) -> CallLog:
        """Its LLM calls and unusable outputs, taken batch by batch."""
        ...

    def add(self, conversation: str, turns: Sequence[TurnInput]) -> int:
        """Write a batch of turns; return how many memories the peer wrote."""
        ...

    def search(self, conversation: str, query: str, k: int) -> list[Recalled]:
        """The peer's top-``k`` memories of ``conversation`` for ``query``."""
        ...


def turn_message(turn: TurnInput) -> str:
    """``(8 May 2023, 13:56) Caroline: text [shared image: caption]``."""
    local = turn.occurred_at.astimezone(UTC_ZONE)
    line = f"({long_date(local, UTC_ZONE)}, {local:%H:%M}) {turn.speaker}: {turn.text}"
    return line + (f" [shared image: {turn.media_caption}]" if turn.media_caption else "")


def messages_of(turns: Sequence[TurnInput]) -> list[dict[str, str]]:
    """The batch as chat messages, one ``user`` message per turn."""
    return [{"role": "user", "content": turn_message(t)} for t in turns]


def dia_ids_of(turns: Sequence[TurnInput]) -> list[str]:
    """The batch's dialogue ids."""
    return [str(t.metadata["dia_id"]) for t in turns if "dia_id" in t.metadata]


__all__ = ["PeerMemory", "Recalled", "dia_ids_of", "messages_of", "turn_message"]
