"""Small bundled conversations for the demo and quick experiments."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from importlib import resources
from typing import Any

from ..errors import InvalidInputError
from ..records.model import RawTurn

QUICK_SAMPLE = "quick_conversation.json"
"""Two short sessions (seven turns): what ``lamina demo`` builds by default."""
FULL_SAMPLE = "sample_conversation.json"
"""Three sessions (twenty turns): what ``lamina demo --full`` builds."""


def load_sample(name: str = FULL_SAMPLE) -> dict[str, Any]:
    """Return a bundled sample conversation as parsed JSON."""
    text = resources.files(__name__).joinpath(name).read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def sample_turns(namespace: str, data: dict[str, Any]) -> list[RawTurn]:
    """Turn a sample conversation into raw turns, one minute apart within a session."""
    turns: list[RawTurn] = []
    for session in data["sessions"]:
        start = datetime.fromisoformat(session["started_at"])
        previous: str | None = None
        for i, (speaker, text) in enumerate(session["turns"]):
            turns.append(
                RawTurn(
                    namespace=namespace,
                    speaker=speaker,
                    text=text,
                    session_id=session["session_id"],
                    turn_index=i,
                    occurred_at=start + timedelta(minutes=i),
                    context=previous,
                )
            )
            previous = f"{speaker}: {text}"
    return turns


def sample_sessions(namespace: str, data: dict[str, Any]) -> list[tuple[str, list[dict[str, Any]]]]:
    """The sample's sessions in order, each as ``(session_id, ingest turns)``."""
    sessions: dict[str, list[dict[str, Any]]] = {}
    for t in sample_turns(namespace, data):
        sessions.setdefault(t.session_id, []).append(
            t.model_dump(include={"speaker", "text", "occurred_at", "session_id", "turn_index"})
        )
    return list(sessions.items())


@dataclass(frozen=True)
class TourUpdate:
    """The demo's update: the fact to supersede and its new text."""

    query: str
    """A question whose answer the update changes (searched before and after)."""
    find: str
    """A word of the fact to update (e.g. the old place)."""
    text: str
    """The fact's new text."""


@dataclass(frozen=True)
class TourForget:
    """The demo's forget: what is forgotten, and a query that finds it."""

    subject: str
    """Every memory mentioning this is forgotten."""
    query: str
    """A search that finds the subject before the forget."""
    why: str
    """Why it is forgotten, as the demo tells it."""


@dataclass(frozen=True)
class SampleTour:
    """What the demo does after building a sample's memory."""

    update: TourUpdate
    forget: TourForget


def sample_tour(data: dict[str, Any]) -> SampleTour:
    """The ``tour`` section of a sample: the demo's update and forget.

    Raises:
        InvalidInputError: The sample has no tour, or a field is missing or empty.
    """
    tour = data.get("tour")
    if not isinstance(tour, dict):
        raise InvalidInputError("this sample has no 'tour' section (update and forget)")
    try:
        update = TourUpdate(**{k: str(tour["update"][k]) for k in ("query", "find", "text")})
        forget = TourForget(**{k: str(tour["forget"][k]) for k in ("subject", "query", "why")})
    except (KeyError, TypeError) as e:
        raise InvalidInputError(f"the sample's tour lacks {e}; it needs update and forget") from e
    for name, value in (*vars(update).items(), *vars(forget).items()):
        if not value.strip():
            raise InvalidInputError(f"the sample's tour has an empty {name!r}")
    return SampleTour(update=update, forget=forget)
