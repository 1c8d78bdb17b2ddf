"""Read the JSON object out of a model's reply: strictly, or repaired, never a fragment.

A reply is scanned for top-level JSON values (an object or array with balanced brackets,
outside strings). Each is tried strictly first; if none decodes, the first that
``json-repair`` can fix is used (single quotes, unquoted keys, trailing commas, missing
commas, comments). A value that is still open when the reply ends was cut off: it is
rejected as truncated, and nothing inside it is ever returned on its own, so
``{"facts": [{"text": "a"}, {"text": "b"`` is a truncated reply, not ``{"text": "a"}``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import json_repair

MAX_REPLY_CHARS = 1_000_000
"""Longer replies are rejected unparsed (a runaway generation, not an answer)."""
MAX_REPAIR_CHARS = 200_000
"""Longer candidate values are not handed to json-repair (pure Python, slow on megabytes)."""
MAX_CANDIDATES = 64
"""How many top-level values of one reply are tried."""
__all__ = [
    "MAX_CANDIDATES",
    "MAX_REPAIR_CHARS",
    "MAX_REPLY_CHARS",
    "ParsedReply",
    "TruncatedReplyError",
    "parse_json_payload",
    "read_reply",
    "scrub",
]

_OPENERS = {"{": "}", "[": "]"}
_CLOSERS = frozenset("}]")
_QUOTE_AFTER = frozenset("{[,:")
"""A single quote opens a string only where a key or value may start."""


class TruncatedReplyError(ValueError):
    """The reply's JSON value was cut off before it closed (e.g. at the token limit)."""


@dataclass(frozen=True)
class ParsedReply:
    """A decoded JSON value and whether ``json-repair`` had to fix its syntax."""

    value: Any
    repaired: bool = False


def _spans(text: str) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of each top-level bracketed value of ``text``, in order.

    ``end`` is exclusive, -1 for a value that never closed, which ends the scan.
    """
    depth, start, quote, escaped = 0, -1, "", False
    last = ""  # the last non-space character outside strings
    for i, char in enumerate(text):
        if quote:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote, last = "", char
            continue
        if depth and (char == '"' or (char == "'" and last in _QUOTE_AFTER)):
            quote = char
            continue
        if char in _OPENERS:
            if depth == 0:
                start = i
            depth += 1
        elif char in _CLOSERS and depth:
            depth -= 1
            if depth == 0:
                yield start, i + 1
        if not char.isspace():
            last = char
    if depth:
        yield start, -1


def _strict(text: str) -> Any:
    """``json.loads`` with lone surrogates scrubbed; ValueError on any failure."""
    try:
        return scrub(json.loads(text))
    except RecursionError as e:
        raise ValueError("the reply is nested too deeply to decode") from e


def _repair(text: str) -> Any:
    """``json-repair``'s reading of one bracketed value, or ValueError."""
    if len(text) > MAX_REPAIR_CHARS:
        raise ValueError(f"the value has {len(text)} characters, too long to repair")
    try:
        value = json_repair.loads(text)
    except (RecursionError, ValueError, TypeError, IndexError) as e:
        raise ValueError(f"json-repair could not fix it ({type(e).__name__})") from e
    if not isinstance(value, dict | list) or (value in ({}, []) and len(text.strip()) > 2):
        raise ValueError("json-repair found no object in it")
    return scrub(value)


def read_reply(text: str) -> ParsedReply:
    """Return the reply's JSON value, noting whether it had to be repaired.

    Accepts a bare value, one inside a code fence, or one surrounded by prose. Lone
    UTF-16 surrogates (JSON escapes in D800-DFFF) in decoded strings become U+FFFD, so
    a reply can never smuggle in text that cannot be stored as UTF-8.

    Raises:
        TruncatedReplyError: The reply's first unclosed value was cut off.
        ValueError: No JSON value can be decoded or repaired, the reply is longer than
            :data:`MAX_REPLY_CHARS`, or it is nested too deeply to decode.
    """
    stripped = text.strip()
    if not stripped:
        raise ValueError("the reply was empty")
    if len(stripped) > MAX_REPLY_CHARS:
        raise ValueError(f"the reply has {len(stripped)} characters (limit {MAX_REPLY_CHARS})")
    try:
        return ParsedReply(_strict(stripped))
    except json.JSONDecodeError:
        pass
    closed: list[str] = []
    for n, (start, end) in enumerate(_spans(stripped)):
        if end < 0:  # never read what is inside a cut-off value on its own
            raise TruncatedReplyError(
                f"the reply was cut off inside a JSON value: ...{stripped[-120:]!r}"
            )
        candidate = stripped[start:end]
        try:
            return ParsedReply(_strict(candidate))
        except json.JSONDecodeError:
            closed.append(candidate)
        if n + 1 >= MAX_CANDIDATES:
            break
    for candidate in closed[:8]:
        try:
            return ParsedReply(_repair(candidate), repaired=True)
        except ValueError:
            continue
    raise ValueError(f"no JSON object found in the reply: {stripped[:200]!r}")


def parse_json_payload(text: str) -> Any:
    """Return the JSON value of a reply (see :func:`read_reply`), repaired if need be."""
    return read_reply(text).value


def scrub(value: Any) -> Any:
    """Replace lone surrogates in every decoded string with U+FFFD."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        return value
    if isinstance(value, list):
        return [scrub(v) for v in value]
    if isinstance(value, dict):
        return {scrub(k): scrub(v) for k, v in value.items()}
    return value
