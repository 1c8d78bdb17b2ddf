"""Turn what callers hand to ``Memory.add`` into :class:`TurnInput` objects.

Accepted: a plain string, a LangChain message, a dict (OpenAI style ``role``/``content``
or :class:`TurnInput` fields), a :class:`TurnInput`, or a list of these.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import ValidationError

from .errors import InvalidInputError, InvalidTypeError
from .graphs.state import TurnInput
from .stores.records import utc_now

MessageLike = str | BaseMessage | Mapping[str, Any] | TurnInput
AddInput = MessageLike | Sequence[MessageLike]

_ROLES = {"human": "user", "user": "user", "ai": "assistant", "assistant": "assistant"}
_TURN_FIELDS = frozenset(TurnInput.model_fields)


def default_session_id(namespace: str, at: datetime) -> str:
    """The session of turns sent without one: one per namespace and UTC day."""
    return f"{namespace}:{at.astimezone(UTC).date().isoformat()}"


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
        return {"speaker": _speaker_of_message(item), "text": message_text(item.content)}
    if isinstance(item, Mapping):
        data = dict(item)
        if "role" in data or "content" in data:
            role = str(data.pop("role", speaker))
            name = data.pop("name", None)
            data.setdefault("speaker", name or _ROLES.get(role, role))
            data.setdefault("text", message_text(data.pop("content", "")))
        unknown = sorted(set(data) - _TURN_FIELDS)
        if unknown:
            raise InvalidInputError(
                f"unknown turn field(s) {unknown}; use role/content or {sorted(_TURN_FIELDS)}"
            )
        return data
    raise InvalidTypeError(
        "add() takes a string, a LangChain message, a dict with role/content, a TurnInput, "
        f"or a list of these; got {type(item).__name__}"
    )


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
    if at is not None and (at.tzinfo is None or at.utcoffset() is None):
        raise InvalidInputError(
            "at is a naive datetime; pass a timezone-aware one, e.g. datetime.now(timezone.utc)"
        )
    items: list[object]
    if isinstance(messages, str | BaseMessage | Mapping | TurnInput):
        items = [messages]
    elif isinstance(messages, Sequence):
        items = list(messages)
    else:
        raise InvalidTypeError(
            f"add() takes a message or a list of messages, got {type(messages).__name__}"
        )
    if not items:
        raise InvalidInputError("add() needs at least one message")
    base = at or utc_now()
    turns = []
    for n, item in enumerate(items):
        data = _as_fields(item, speaker or "user")
        data.setdefault("occurred_at", base + timedelta(microseconds=n))
        when = data["occurred_at"]
        if isinstance(when, str):
            when = data["occurred_at"] = _parse_time(when, n)
        if isinstance(when, datetime):
            data.setdefault("session_id", session_id or default_session_id(namespace, when))
        elif session_id is not None:
            data.setdefault("session_id", session_id)
        if not str(data.get("text", "")).strip():
            raise InvalidInputError(f"message #{n} has no text")
        try:
            turns.append(TurnInput.model_validate(data))
        except ValidationError as e:
            raise InvalidInputError(f"message #{n} is not a valid turn: {e}") from e
    return turns


def _parse_time(value: str, n: int) -> datetime:
    try:
        return datetime.fromisoformat(value)
    except ValueError as e:
        raise InvalidInputError(
            f"message #{n}: occurred_at {value!r} is not an ISO 8601 time such as "
            "'2024-05-08T18:20:00+00:00'"
        ) from e
