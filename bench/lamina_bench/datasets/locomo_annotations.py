"""LoCoMo's hand-written derived memory: observations, session summaries, event summaries.

Each LoCoMo sample carries, beside its turns, what its annotators wrote about them:

* ``observation``: per session, per person, statements about that person, each with the
  dialogue ids of its evidence turns (``["Caroline attended ...", "D1:3"]``);
* ``session_summary``: one narrative per session;
* ``event_summary``: per session, per person, the events of that person's life.

The evaluation's ``derived-oracle`` system uses them as the fact and episode layers, to
measure how much good derived memory can add on a given model. They are evaluation data
(CC BY-NC), read from the user's copy of the file and never bundled.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lamina.errors import InvalidInputError

from .locomo import parse_evidence

_SESSION_NUMBER = re.compile(r"session_(\d+)")
REQUIRED = ("observation", "session_summary")
"""The annotation keys ``derived-oracle`` cannot do without."""


@dataclass(frozen=True)
class Observation:
    """One annotated statement about one person, with its evidence turns."""

    person: str
    text: str
    session_id: str
    evidence: tuple[str, ...]


@dataclass(frozen=True)
class SessionSummary:
    """The annotators' narrative of one session."""

    session_id: str
    text: str


@dataclass(frozen=True)
class EventSummary:
    """One annotated event in a person's life, said in one session."""

    person: str
    session_id: str
    text: str


@dataclass
class Annotations:
    """Everything annotated about one conversation."""

    sample_id: str
    observations: list[Observation] = field(default_factory=list)
    summaries: list[SessionSummary] = field(default_factory=list)
    events: list[EventSummary] = field(default_factory=list)
    dropped_evidence: int = 0
    """Evidence ids naming no turn of the conversation (left out, counted)."""


def _session_id(key: str) -> str | None:
    match = _SESSION_NUMBER.search(key)
    return f"session_{int(match[1])}" if match else None


def _observations(raw: dict[str, Any], known: set[str], out: Annotations) -> None:
    for key, by_person in raw.items():
        session = _session_id(key)
        if session is None or not isinstance(by_person, dict):
            continue
        for person, items in by_person.items():
            for item in items if isinstance(items, list) else []:
                if not isinstance(item, list) or len(item) != 2 or not str(item[0]).strip():
                    continue  # a malformed entry drops that entry only
                ids = item[1] if isinstance(item[1], list) else [item[1]]
                evidence, dropped = parse_evidence(ids, known)
                out.dropped_evidence += dropped
                out.observations.append(
                    Observation(str(person), str(item[0]).strip(), session, tuple(evidence))
                )


def parse_annotations(sample: dict[str, Any], known: set[str]) -> Annotations:
    """The annotations of one LoCoMo sample; ``known``: its dialogue ids.

    Raises:
        InvalidInputError: if the sample lacks observations or session summaries.
    """
    sample_id = str(sample.get("sample_id"))
    missing = [k for k in REQUIRED if not isinstance(sample.get(k), dict) or not sample[k]]
    if missing:
        raise InvalidInputError(
            f"LoCoMo sample {sample_id} has no {' or '.join(missing)} annotations; "
            "derived-oracle needs the full locomo10.json, which ships them"
        )
    out = Annotations(sample_id)
    _observations(sample["observation"], known, out)
    for key, text in sample["session_summary"].items():
        session = _session_id(key)
        if session is not None and isinstance(text, str) and text.strip():
            out.summaries.append(SessionSummary(session, text.strip()))
    for key, by_person in (sample.get("event_summary") or {}).items():
        session = _session_id(key)
        if session is None or not isinstance(by_person, dict):
            continue
        for person, events in by_person.items():
            if person == "date" or not isinstance(events, list):
                continue
            out.events.extend(
                EventSummary(str(person), session, str(e).strip()) for e in events if str(e).strip()
            )
    return out


def load_annotations(path: str | Path, sample_ids: list[str]) -> dict[str, Annotations]:
    """The annotations of ``sample_ids`` in a LoCoMo file.

    Raises:
        InvalidInputError: if the file cannot be read, a sample is missing, or a sample
            lacks its annotations.
    """
    path = Path(path)
    try:
        samples = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise InvalidInputError(f"cannot read LoCoMo file {path}: {e}") from e
    by_id = {str(s.get("sample_id")): s for s in samples if isinstance(s, dict)}
    out: dict[str, Annotations] = {}
    for sample_id in sample_ids:
        sample = by_id.get(sample_id)
        if sample is None:
            raise InvalidInputError(f"{path} has no LoCoMo sample {sample_id!r}")
        conversation = sample.get("conversation") or {}
        known = {
            str(t.get("dia_id"))
            for key, turns in conversation.items()
            if _SESSION_NUMBER.fullmatch(key) and isinstance(turns, list)
            for t in turns
        }
        out[sample_id] = parse_annotations(sample, known)
    return out
