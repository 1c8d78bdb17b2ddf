"""Load LoCoMo-format conversations (the file itself is never bundled: CC BY-NC).

A sample has ``conversation`` (``speaker_a``, ``speaker_b``, ``session_N`` turn lists and
``session_N_date_time`` stamps such as ``"1:56 pm on 8 May, 2023"``) and ``qa`` items
(question, answer, evidence dia_ids, category 1-5). Evidence ids are normalised and
checked against the conversation, because the file has joined, zero-padded and
dangling ids.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lamina.errors import InvalidInputError

if TYPE_CHECKING:
    from lamina.graphs import TurnInput

CATEGORIES: dict[int, str] = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}
"""Category names as the LoCoMo code uses them (mem0's paper names 1 and 4 the other way)."""

_SESSION_KEY = re.compile(r"session_(\d+)")
_DIA_ID = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)")


@dataclass(frozen=True)
class Turn:
    """One LoCoMo dialogue turn."""

    dia_id: str
    session_id: str
    turn_index: int
    speaker: str
    text: str
    caption: str | None
    occurred_at: datetime

    def as_turn_input(self) -> TurnInput:
        """This turn as ingest input, its ``dia_id`` kept in the metadata.

        Raises:
            pydantic.ValidationError: if the turn is not valid ingest input.
        """
        from lamina.graphs import TurnInput

        return TurnInput(
            speaker=self.speaker,
            text=self.text,
            occurred_at=self.occurred_at,
            session_id=self.session_id,
            turn_index=self.turn_index,
            media_caption=self.caption,
            metadata={"dia_id": self.dia_id},
        )


@dataclass(frozen=True)
class Question:
    """One question with its gold answer and resolved evidence."""

    conversation: str
    text: str
    answer: str
    category: int
    evidence: frozenset[str]
    sessions: frozenset[str]


@dataclass
class Conversation:
    """One LoCoMo sample: its participants, turns in order, and questions."""

    sample_id: str
    speakers: tuple[str, ...]
    turns: list[Turn]
    questions: list[Question] = field(default_factory=list)
    skipped: int = 0
    """Questions left out because none of their evidence ids exists."""
    dropped_ids: int = 0
    """Evidence ids that do not exist in the conversation."""

    @property
    def namespace(self) -> str:
        """The store namespace this conversation is ingested into."""
        return f"locomo:{self.sample_id}"

    def sessions(self) -> list[str]:
        """Session ids in order."""
        return list(dict.fromkeys(t.session_id for t in self.turns))


def parse_session_date(text: str) -> datetime:
    """Parse a LoCoMo session stamp such as ``"1:56 pm on 8 May, 2023"`` as aware UTC."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def parse_evidence(raw: Iterable[object], known: set[str]) -> tuple[list[str], int]:
    """Return the evidence ids that exist in the conversation, and how many were dropped.

    Entries may hold several ids joined by spaces, commas or semicolons (``"D8:6; D9:17"``),
    zero-padded turns (``"D30:05"``) or a stray colon (``"D:11:26"``); those are normalised.
    """
    kept: list[str] = []
    dropped = 0
    for entry in raw:
        for token in re.split(r"[\s,;]+", str(entry)):
            if not token:
                continue
            match = _DIA_ID.fullmatch(token)
            dia_id = f"D{int(match[1])}:{int(match[2])}" if match else token
            if dia_id in known:
                if dia_id not in kept:
                    kept.append(dia_id)
            else:
                dropped += 1
    return kept, dropped


def _session_turns(conversation: dict[str, Any]) -> Iterable[tuple[int, list[dict[str, Any]]]]:
    keys = [k for k in conversation if _SESSION_KEY.fullmatch(k)]
    for key in sorted(keys, key=lambda k: int(k.split("_")[1])):
        yield int(key.split("_")[1]), conversation[key]


def parse_conversation(
    sample: dict[str, Any], categories: Iterable[int] = (1, 2, 3, 4)
) -> Conversation:
    """Turn one sample into a :class:`Conversation` keeping questions of ``categories``."""
    wanted = set(categories)
    raw = sample["conversation"]
    turns: list[Turn] = []
    for number, session in _session_turns(raw):
        when = parse_session_date(raw[f"session_{number}_date_time"])
        for index, turn in enumerate(session):
            turns.append(
                Turn(
                    dia_id=turn["dia_id"],
                    session_id=f"session_{number}",
                    turn_index=index,
                    speaker=turn["speaker"],
                    text=turn["text"],
                    caption=turn.get("blip_caption") or None,
                    occurred_at=when,
                )
            )
    conv = Conversation(str(sample["sample_id"]), (raw["speaker_a"], raw["speaker_b"]), turns)
    session_of = {t.dia_id: t.session_id for t in turns}
    for qa in sample.get("qa", []):
        category = qa.get("category")
        if category not in wanted:
            continue
        evidence, dropped = parse_evidence(qa.get("evidence") or [], set(session_of))
        conv.dropped_ids += dropped
        if not evidence and category != 5:
            conv.skipped += 1
            continue
        answer = qa.get("answer", qa.get("adversarial_answer", ""))
        conv.questions.append(
            Question(
                conversation=conv.sample_id,
                text=str(qa["question"]),
                answer=str(answer),
                category=int(category),
                evidence=frozenset(evidence),
                sessions=frozenset(session_of[e] for e in evidence),
            )
        )
    return conv


def load_locomo(
    path: str | Path,
    *,
    limit: int | None = None,
    sample_ids: Iterable[str] | None = None,
    categories: Iterable[int] = (1, 2, 3, 4),
) -> list[Conversation]:
    """Load a LoCoMo-format JSON file.

    Raises:
        InvalidInputError: if the file is missing or is not LoCoMo-shaped.
    """
    path = Path(path)
    try:
        samples = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise InvalidInputError(f"cannot read LoCoMo file {path}: {e}") from e
    if not isinstance(samples, list) or not all(
        isinstance(s, dict) and "conversation" in s for s in samples
    ):
        raise InvalidInputError(
            f"{path} is not LoCoMo-format: expected a list of samples with 'conversation'"
        )
    wanted = set(sample_ids) if sample_ids is not None else None
    chosen = [s for s in samples if wanted is None or str(s.get("sample_id")) in wanted]
    categories = tuple(categories)
    return [parse_conversation(s, categories) for s in chosen[:limit]]


def default_locomo_path() -> Path:
    """``../shared/data/locomo/locomo10.json`` next to the repository checkout."""
    return Path(__file__).resolve().parents[4] / "shared" / "data" / "locomo" / "locomo10.json"
