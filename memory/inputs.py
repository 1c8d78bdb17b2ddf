"""Check what callers hand to the ``Memory`` facade, and turn ``add`` input into turns.

``add`` accepts a plain string, a LangChain message, a dict (OpenAI style
``role``/``content`` or :class:`TurnInput` fields), a :class:`TurnInput`, or a list of
these. Every check raises before anything is stored, with a message that names the type
it got and the types it accepts.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, TypedDict

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import ValidationError

from ..core.state import TurnInput
from ..errors import InvalidInputError, InvalidTypeError, NamespaceError
from ..records.model import (
    ROLE_KEY,
    MetadataValue,
    require_encodable,
    utc_now,
    validate_namespace,
)
from ..stores.filters import TimeWindow

MessageLike = str | BaseMessage | Mapping[str, Any] | TurnInput
AddInput = MessageLike | Sequence[MessageLike]

ADD_ACCEPTS = (
    "a str, a LangChain message, a dict with role/content (or TurnInput fields), "
    "a TurnInput, or a list of these"
)
_BINARY = (bytes, bytearray, memoryview)


class AddOptions(TypedDict, total=False):
    """The keyword arguments of ``Memory.add`` besides ``namespace`` (``aadd`` takes them too)."""

    session_id: str | None
    at: datetime | None
    speaker: str | None
    session_closed: bool
    metadata: Mapping[str, MetadataValue] | None
    infer: bool
    instructions: str | None
    consolidate: Literal["inline", "background"]
    expires_at: datetime | None
    ttl: timedelta | float | None


def call_context(options: Mapping[str, object]) -> dict[str, object]:
    """The MemoryContext overrides an ``add`` call gives (its own ``instructions``)."""
    given = options.get("instructions")
    return {} if given is None else {"instructions": given}


def require_add_options(options: Mapping[str, object]) -> None:
    """Reject a keyword ``add`` does not take (``aadd`` gathers them in ``**options``)."""
    unknown = sorted(set(options) - AddOptions.__optional_keys__)
    if unknown:
        raise InvalidTypeError(
            f"unexpected keyword argument {unknown[0]!r}: add() and aadd() take namespace, "
            f"{', '.join(sorted(AddOptions.__optional_keys__))}"
        )


def first_problem(error: ValidationError) -> str:
    """The first problem pydantic found, as one line: ``field.path: what is wrong``."""
    first = error.errors()[0]
    place = ".".join(str(p) for p in first.get("loc", ())) or "value"
    return f"{place}: {first.get('msg', 'invalid')}"


def type_name(value: object) -> str:
    """The type of ``value`` as a user reads it: ``bytes``, ``int``, ``NoneType``."""
    return type(value).__name__


def require_namespace(namespace: object) -> str:
    """A well-formed namespace, or NamespaceError naming what was passed instead."""
    if isinstance(namespace, str) and not namespace.strip():
        raise NamespaceError(
            "namespace is an empty string; pass the scope to read or write, e.g. 'user:alice'"
        )
    return validate_namespace(namespace)


def require_text(name: str, value: object) -> str:
    """A non-blank str, or an error naming the type received."""
    if isinstance(value, _BINARY):
        raise InvalidTypeError(
            f"{name} must be a str, got {type_name(value)}; decode it first, "
            "e.g. value.decode('utf-8', errors='replace')"
        )
    if not isinstance(value, str):
        raise InvalidTypeError(f"{name} must be a str, got {type_name(value)}")
    if not value.strip():
        raise InvalidInputError(f"{name} is an empty string; pass some text")
    return value


def require_query(name: str, value: object) -> str:
    """A non-blank str that is valid text (no lone surrogate), before any search runs."""
    return require_encodable(name, require_text(name, value))


def optional_text(name: str, value: object) -> str | None:
    """None, or a non-blank str."""
    return None if value is None else require_text(name, value)


def require_aware(name: str, value: object) -> datetime | None:
    """None, or a timezone-aware datetime."""
    if value is None:
        return None
    if not isinstance(value, datetime):
        raise InvalidTypeError(
            f"{name} must be a timezone-aware datetime or None, got {type_name(value)}"
        )
    if value.tzinfo is None or value.utcoffset() is None:
        raise InvalidInputError(
            f"{name} is a naive datetime; pass a timezone-aware one, "
            "e.g. datetime.now(timezone.utc)"
        )
    return value


MAX_TTL = timedelta(days=365 * 1000)
"""The longest TTL taken (a thousand years); leave the TTL out for memories that never expire."""


def require_ttl(name: str, ttl: object) -> timedelta:
    """``ttl`` (a timedelta, or seconds) as a positive timedelta.

    Raises:
        InvalidTypeError: Not a timedelta or a number.
        InvalidInputError: Not positive (a memory that has already expired is not
            stored), not finite, or longer than :data:`MAX_TTL`.
    """
    if isinstance(ttl, bool) or not isinstance(ttl, timedelta | int | float):
        raise InvalidTypeError(
            f"{name} must be a timedelta or a number of seconds, got {type_name(ttl)}"
        )
    try:
        seconds = ttl.total_seconds() if isinstance(ttl, timedelta) else float(ttl)
    except OverflowError:  # an int beyond any float: further than MAX_TTL either way
        seconds = math.inf if ttl > 0 else -math.inf  # type: ignore[operator]
    if not seconds > 0:
        raise InvalidInputError(
            f"{name} must be positive, got {seconds:g} s: a memory that has already "
            f"expired is not stored (leave {name} out for one that never expires)"
        )
    if not seconds <= MAX_TTL.total_seconds():
        raise InvalidInputError(
            f"{name} of {seconds:g} s is longer than {MAX_TTL.days} days; leave {name} out "
            "for memories that never expire"
        )
    return timedelta(seconds=seconds)


def require_expiry(expires_at: object, ttl: object, now: datetime | None = None) -> datetime | None:
    """When the memories of an ``add`` expire: ``expires_at``, or now plus ``ttl``.

    Raises:
        InvalidInputError: Both given, a naive ``expires_at``, or a time not in the
            future (an expired memory is refused, not stored as expired).
        InvalidTypeError: ``ttl`` is not a timedelta or a number of seconds.
    """
    if expires_at is not None and ttl is not None:
        raise InvalidInputError("give expires_at= or ttl=, not both")
    at = now or datetime.now(UTC)
    if ttl is not None:
        return at + require_ttl("ttl", ttl)
    when = require_aware("expires_at", expires_at)
    if when is not None and when <= at:
        raise InvalidInputError(
            f"expires_at {when.isoformat()} is not in the future (now is "
            f"{at.isoformat(timespec='seconds')}): a memory that has already expired is not "
            "stored; give a later time, or leave expires_at out for one that never expires"
        )
    return when


def require_bool(name: str, value: object) -> bool:
    """A bool (not 0/1 or a string)."""
    if not isinstance(value, bool):
        raise InvalidTypeError(f"{name} must be a bool, got {type_name(value)}")
    return value


def require_positive_int(name: str, value: object) -> int:
    """An int >= 1 (not a bool)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidTypeError(f"{name} must be an int, got {type_name(value)}")
    if value < 1:
        raise InvalidInputError(f"{name} must be a positive int, got {value}")
    return value


def require_window(value: object) -> TimeWindow | None:
    """None or a :class:`TimeWindow`."""
    if value is not None and not isinstance(value, TimeWindow):
        raise InvalidTypeError(
            f"window must be a TimeWindow (TimeWindow.between/before_/after_) or None, "
            f"got {type_name(value)}"
        )
    return value


def require_lines(name: str, value: object) -> list[str]:
    """A str or a sequence of str (recent conversation lines)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, _BINARY) or not isinstance(value, Sequence):
        raise InvalidTypeError(
            f"{name} must be a list of str (recent conversation lines), got {type_name(value)}"
        )
    for n, line in enumerate(value):
        if not isinstance(line, str):
            raise InvalidTypeError(f"{name}[{n}] must be a str, got {type_name(line)}")
        require_encodable(f"{name}[{n}]", line)
    return list(value)


def require_ids(value: object) -> list[str]:
    """A non-empty list of non-blank id strings."""
    if isinstance(value, str):
        raise InvalidTypeError(
            f"memory_ids must be a list of str, got a single str; pass [{value!r}]"
        )
    if isinstance(value, _BINARY) or not isinstance(value, Sequence):
        raise InvalidTypeError(f"memory_ids must be a list of str, got {type_name(value)}")
    return [require_query(f"memory_ids[{n}]", v) for n, v in enumerate(value)]


_ROLES = {"human": "user", "user": "user", "ai": "assistant", "assistant": "assistant"}
ROLE_SPEAKERS = frozenset({*_ROLES.values(), "system", "tool"})
"""Speaker labels ``add`` gives a message by its role when it has no name: not a person."""
_TURN_FIELDS = frozenset(TurnInput.model_fields)


def message_text(content: object) -> str:
    """The text of a message's content (a string or a list of content blocks)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, Mapping) and block.get("type") == "text":
                parts.append(str(block.get("text", "")))
        return "\n".join(p for p in parts if p)
    raise InvalidTypeError(f"message content must be text, got {type(content).__name__}")


def _speaker_of_message(message: BaseMessage) -> str:
    if message.name:
        return message.name
    if isinstance(message, HumanMessage):
        return "user"
    if isinstance(message, AIMessage):
        return "assistant"
    if isinstance(message, SystemMessage):
        return "system"
    return _ROLES.get(message.type, message.type)


def _as_fields(item: object, speaker: str) -> dict[str, Any]:
    """One input item as a partial TurnInput dict (no time or session yet)."""
    if isinstance(item, TurnInput):
        return item.model_dump(exclude_none=True)
    if isinstance(item, str):
        return {"speaker": speaker, "text": item}
    if isinstance(item, BaseMessage):
        fields: dict[str, Any] = {
            "speaker": _speaker_of_message(item),
            "text": message_text(item.content),
        }
        if isinstance(item, AIMessage):
            fields["metadata"] = {ROLE_KEY: "assistant"}
        return fields
    if isinstance(item, Mapping):
        data = dict(item)
        if "role" in data or "content" in data:
            role = str(data.pop("role", speaker))
            name = data.pop("name", None)
            data.setdefault("speaker", name or _ROLES.get(role, role))
            data.setdefault("text", message_text(data.pop("content", "")))
            if _ROLES.get(role) == "assistant":
                data["metadata"] = {**dict(data.get("metadata") or {}), ROLE_KEY: "assistant"}
        unknown = sorted(set(data) - _TURN_FIELDS)
        if unknown:
            raise InvalidInputError(
                f"unknown turn field(s) {unknown}; use role/content or {sorted(_TURN_FIELDS)}"
            )
        return data
    raise InvalidTypeError(f"add() takes {ADD_ACCEPTS}; got {type_name(item)}{_hint(item)}")


def _hint(item: object) -> str:
    if isinstance(item, _BINARY):
        return " (decode it first, e.g. data.decode('utf-8', errors='replace'))"
    return ""


def to_turns(
    messages: object,
    *,
    namespace: str,
    session_id: str | None = None,
    at: datetime | None = None,
    speaker: str | None = None,
) -> list[TurnInput]:
    """Normalise ``messages`` to turns.

    Turns without a time get ``at`` (default now, UTC); several such turns in one call are
    spaced a microsecond apart so their order survives. Turns without a session get
    ``session_id`` or the per-day default session.

    Raises:
        InvalidInputError: Nothing to add, an empty text, a naive ``at``, or a bad field.
        InvalidTypeError: An item of an unsupported type.
    """
    require_aware("at", at)
    optional_text("session_id", session_id)
    optional_text("speaker", speaker)
    items: list[object]
    if isinstance(messages, str | BaseMessage | Mapping | TurnInput):
        items = [messages]
    elif isinstance(messages, Sequence) and not isinstance(messages, _BINARY):
        items = list(messages)
    else:
        raise InvalidTypeError(
            f"add() takes {ADD_ACCEPTS}; got {type_name(messages)}{_hint(messages)}"
        )
    if not items:
        raise InvalidInputError(f"add() got an empty list; pass {ADD_ACCEPTS}")
    base = at or utc_now()
    turns = []
    for n, item in enumerate(items):
        data = _as_fields(item, speaker or "user")
        data.setdefault("occurred_at", base + timedelta(microseconds=n))
        when = data["occurred_at"]
        if isinstance(when, str):
            try:
                when = data["occurred_at"] = datetime.fromisoformat(when)
            except ValueError as e:
                raise InvalidInputError(
                    f"message #{n}: occurred_at {when!r} is not an ISO 8601 time such as "
                    "'2024-05-08T18:20:00+00:00'"
                ) from e
        if isinstance(when, datetime):  # default: one session per namespace and UTC day
            day = when.astimezone(UTC).date().isoformat()
            data.setdefault("session_id", session_id or f"{namespace}:{day}")
        elif session_id is not None:
            data.setdefault("session_id", session_id)
        if not str(data.get("text", "")).strip():
            raise InvalidInputError(f"message #{n} has no text (got an empty string)")
        try:
            turns.append(TurnInput.model_validate(data))
        except ValidationError as e:
            raise InvalidInputError(f"message #{n} is not a valid turn: {e}") from e
    return turns
