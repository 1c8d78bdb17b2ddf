"""Read conversation files for ``lamina ingest``: LoCoMo JSON or JSONL of turns.

The whole file is read and validated before anything is stored, so a bad line or
field is reported with its position and nothing from the file is half-written.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..core.state import TurnInput
from ..datasets.locomo import parse_conversation
from ..errors import InvalidInputError
from ..records.model import validate_namespace
from .checks import input_file

JSONL_FIELDS = ("speaker", "text", "occurred_at", "session_id")
"""Fields every JSONL line needs (``turn_index``, ``media_caption``, ``metadata`` are optional)."""


@dataclass
class Session:
    """The turns of one session, in file order."""

    session_id: str
    turns: list[TurnInput] = field(default_factory=list)


@dataclass
class NamespaceTurns:
    """Everything one namespace receives from a file, grouped by session."""

    namespace: str
    sessions: list[Session] = field(default_factory=list)

    @property
    def turn_count(self) -> int:
        """How many turns the namespace receives."""
        return sum(len(s.turns) for s in self.sessions)

    def add(self, turn: TurnInput) -> None:
        """Append ``turn`` to its session (a new session if the id changes)."""
        if not self.sessions or self.sessions[-1].session_id != turn.session_id:
            self.sessions.append(Session(turn.session_id))
        self.sessions[-1].turns.append(turn)


def load_turn_file(
    path: str | Path,
    *,
    namespace: str | None,
    conversations: Sequence[str] | None = None,
) -> tuple[str, list[NamespaceTurns]]:
    """Read and validate ``path``; return its format (``locomo`` / ``jsonl``) and turns.

    LoCoMo samples go to ``namespace`` (one sample) or ``<namespace>:<sample_id>``
    (several), or to their ``sample_id`` when no namespace is given. JSONL turns go to
    ``namespace`` (``"default"`` when None).

    Raises:
        InvalidInputError: the file is missing, a folder, unreadable, not JSON/JSONL, or a
            sample, line or field is malformed; the message names the line or field.
    """
    path = input_file(Path(path), "the file to ingest: JSONL of turns, or LoCoMo JSON")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise InvalidInputError(f"{path}: cannot read the file as UTF-8 text ({e})") from e
    if not text.strip():
        raise InvalidInputError(f"{path}: the file is empty")
    try:
        whole = json.loads(text)
    except json.JSONDecodeError:
        whole = None
    if isinstance(whole, list):
        return "locomo", _locomo(path, whole, namespace, conversations)
    _not_a_memory_file(path, whole, text)
    if conversations:
        raise InvalidInputError(f"{path}: --conversations applies to LoCoMo JSON files only")
    return "jsonl", [_jsonl(path, text, namespace or "default")]


def _not_a_memory_file(path: Path, whole: object, text: str) -> None:
    """Refuse, with the command that reads it, a file lamina wrote about memory, not turns."""
    if isinstance(whole, dict) and "granularities" in whole:
        raise InvalidInputError(
            f"{path}: this is a `lamina inspect --json` report, which is for reading, not "
            "turns to ingest; to move memory between stores use `lamina export -n NS -o FILE` "
            "and `lamina import FILE`"
        )
    first = text.lstrip().split("\n", 1)[0]
    try:
        head = json.loads(first)
    except json.JSONDecodeError:
        return
    if isinstance(head, dict) and head.get("format") == "lamina-export":
        raise InvalidInputError(
            f"{path}: this is a `lamina export` file, memory rather than turns: load it "
            f"with `lamina import {path}`"
        )


def _locomo(
    path: Path, samples: list[Any], namespace: str | None, wanted: Sequence[str] | None
) -> list[NamespaceTurns]:
    for n, sample in enumerate(samples):
        if not isinstance(sample, dict) or not isinstance(sample.get("conversation"), dict):
            raise InvalidInputError(
                f"{path}: item {n} of the JSON list is not a LoCoMo sample (an object with "
                "'sample_id' and a 'conversation' object); for turns use JSONL, one per line"
            )
    ids = [str(s.get("sample_id", n)) for n, s in enumerate(samples)]
    chosen = list(range(len(samples)))
    if wanted:
        missing = [w for w in wanted if w not in ids]
        if missing:
            raise InvalidInputError(
                f"{path}: no conversation {', '.join(missing)}; the file has {', '.join(ids)}"
            )
        chosen = [n for n in chosen if ids[n] in set(wanted)]
    out = []
    for n in chosen:
        ns = ids[n] if namespace is None else namespace
        if namespace is not None and len(chosen) > 1:
            ns = f"{namespace}:{ids[n]}"
        target = NamespaceTurns(_namespace(path, ns))
        for turn in _locomo_turns(path, samples[n], ids[n]):
            target.add(turn)
        out.append(target)
    return out


def _locomo_turns(path: Path, sample: dict[str, Any], sample_id: str) -> Iterable[TurnInput]:
    where = f"{path}: sample {sample_id!r}"
    try:
        conv = parse_conversation(sample, categories=())
    except KeyError as e:
        raise InvalidInputError(f"{where}: missing field {e.args[0]!r}") from e
    except (TypeError, ValueError) as e:
        raise InvalidInputError(f"{where}: malformed conversation ({e})") from e
    if not conv.turns:
        raise InvalidInputError(f"{where}: the conversation has no session_N turns")
    for turn in conv.turns:
        try:
            yield turn.as_turn_input()
        except ValidationError as e:
            raise InvalidInputError(f"{where}: turn {turn.dia_id}: {_first_error(e)}") from e


def _jsonl(path: Path, text: str, namespace: str) -> NamespaceTurns:
    target = NamespaceTurns(_namespace(path, namespace))
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            item = json.loads(line)
        except json.JSONDecodeError as e:
            raise InvalidInputError(
                f"{where}: not valid JSON ({e.msg}); expected a LoCoMo JSON file or JSONL "
                "with one turn object per line"
            ) from e
        if not isinstance(item, dict):
            raise InvalidInputError(
                f"{where}: expected a turn object with {', '.join(JSONL_FIELDS)}, "
                f"got {type(item).__name__}"
            )
        missing = [f for f in JSONL_FIELDS if f not in item]
        if missing:
            raise InvalidInputError(f"{where}: missing field {', '.join(map(repr, missing))}")
        try:
            target.add(TurnInput.model_validate(item))
        except ValidationError as e:
            raise InvalidInputError(f"{where}: {_first_error(e)}") from e
    if not target.sessions:
        raise InvalidInputError(f"{path}: no turns found")
    return target


def _namespace(path: Path, namespace: str) -> str:
    try:
        return validate_namespace(namespace)
    except InvalidInputError as e:
        raise InvalidInputError(f"{path}: {e}") from e


def _first_error(error: ValidationError) -> str:
    """One line for the first validation problem: the field and what is wrong with it."""
    first = error.errors()[0]
    loc = ".".join(str(p) for p in first["loc"]) or "value"
    message = first["msg"]
    if first["type"] == "timezone_aware":
        message += " (give an offset, e.g. 2024-05-08T18:20:00+00:00)"
    elif first["type"] == "extra_forbidden":
        message = "unknown field; allowed: " + ", ".join(TurnInput.model_fields)
    return f"field {loc!r}: {message}"
