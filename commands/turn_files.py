"""Read conversation files for ``lamina ingest``: JSONL, one turn per line.

The whole file is read and validated before anything is stored, so a bad line or
field is reported with its position and nothing from the file is half-written.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import groupby
from pathlib import Path

from pydantic import ValidationError

from ..core.state import TurnInput
from ..errors import InvalidInputError
from ..records.model import validate_namespace
from .checks import input_file, json_object

JSONL_FIELDS = ("speaker", "text", "occurred_at", "session_id")
"""Fields every JSONL line needs (``turn_index``, ``media_caption``, ``metadata`` are optional)."""


@dataclass
class NamespaceTurns:
    """Everything one namespace receives from a file, in file order."""

    namespace: str
    turns: list[TurnInput] = field(default_factory=list)

    def sessions(self) -> Iterator[list[TurnInput]]:
        """The turns in runs of one session each (a new run where the session id changes)."""
        for _, run in groupby(self.turns, key=lambda turn: turn.session_id):
            yield list(run)


def load_turn_file(path: str | Path, *, namespace: str | None) -> NamespaceTurns:
    """Read and validate the JSONL file ``path``; return its turns for ``namespace``.

    The turns go to ``namespace`` (``"default"`` when None).

    Raises:
        InvalidInputError: the file is missing, a folder, unreadable, not JSONL (a JSON
            list is refused with how to convert it), or a line or field is malformed;
            the message names the line or field.
    """
    path = input_file(Path(path), "the file to ingest: JSONL, one turn per line")
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
        raise InvalidInputError(
            f"{path}: a JSON list is not a file of turns; `lamina ingest` reads JSONL, one "
            "turn object per line (a benchmark's data set converts with `lamina-bench turns`)"
        )
    _not_a_memory_file(path, whole, text)
    return _jsonl(path, text, namespace or "default")


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


def _jsonl(path: Path, text: str, namespace: str) -> NamespaceTurns:
    target = NamespaceTurns(_namespace(path, namespace))
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        item = json_object(
            line,
            where,
            hint="expected JSONL with one turn object per line",
            shape=f"a turn object with {', '.join(JSONL_FIELDS)}",
        )
        missing = [f for f in JSONL_FIELDS if f not in item]
        if missing:
            raise InvalidInputError(f"{where}: missing field {', '.join(map(repr, missing))}")
        try:
            target.turns.append(TurnInput.model_validate(item))
        except ValidationError as e:
            raise InvalidInputError(f"{where}: {_first_error(e)}") from e
    if not target.turns:
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
