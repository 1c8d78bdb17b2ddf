"""Small bundled conversations for the demo and quick experiments."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from importlib import resources
from typing import Any

from ..stores.records import RawTurn


def load_sample(name: str = "sample_conversation.json") -> dict[str, Any]:
    """Return a bundled sample conversation as parsed JSON."""
    text = resources.files(__name__).joinpath(name).read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def sample_turns(namespace: str, data: dict[str, Any] | None = None) -> list[RawTurn]:
    """Turn a sample conversation into raw turns, one minute apart within a session."""
    data = data if data is not None else load_sample()
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


def sample_sessions(
    namespace: str, data: dict[str, Any] | None = None
) -> list[tuple[str, list[dict[str, Any]]]]:
    """The sample's sessions in order, each as ``(session_id, ingest turns)``."""
    sessions: dict[str, list[dict[str, Any]]] = {}
    for t in sample_turns(namespace, data):
        sessions.setdefault(t.session_id, []).append(
            {
                "speaker": t.speaker,
                "text": t.text,
                "occurred_at": t.occurred_at,
                "session_id": t.session_id,
                "turn_index": t.turn_index,
            }
        )
    return list(sessions.items())
