"""Metadata a caller attaches to memories, and the ``filters`` that select on it.

Metadata values are JSON scalars (str, int, float, bool): they are stored on the raw
turn and can be filtered on. ``filters`` maps a metadata key to a value (equality), a
list of values (any of them), or ``{"eq": v}`` / ``{"in": [...]}``. The reserved key
``occurred_at`` takes a time range, ``{"gte": start, "lt": end}`` (timezone-aware
datetimes or ISO 8601 strings). All conditions must hold.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from ..errors import InvalidInputError, InvalidTypeError
from ..records.model import MetadataValue, require_encodable
from ..stores.base import Where
from ..stores.filters import TimeWindow
from .inputs import type_name

TIME_KEY = "occurred_at"
"""The filter key of the time range; not allowed as a metadata key."""
MAX_KEY_CHARS = 256
_INT64 = 2**63
_TIME_OPS = {"gte": "after", "lt": "before"}
_VALUE_OPS = ("eq", "in")
_SCALARS = "str, int, float or bool"


def _key(name: str, key: object) -> str:
    if not isinstance(key, str):
        raise InvalidTypeError(f"{name} keys must be str, got {type_name(key)} ({key!r})")
    if not key.strip() or len(key) > MAX_KEY_CHARS:
        raise InvalidInputError(f"{name} keys must be 1-{MAX_KEY_CHARS} characters, got {key!r}")
    return require_encodable(f"{name} key {key!r}", key)


def require_scalar(name: str, value: object) -> MetadataValue:
    """A JSON scalar that the store can keep and filter on, or a fix-it error."""
    if value is None:
        raise InvalidTypeError(
            f"{name} is None; JSON null cannot be stored or filtered on: leave the key out"
        )
    if isinstance(value, str):
        return require_encodable(name, value)
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        if not -_INT64 <= value < _INT64:
            raise InvalidInputError(f"{name} = {value} does not fit in 64 bits; store it as a str")
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidInputError(f"{name} = {value} is not a JSON number; use a finite float")
        return value
    hint = ""
    if isinstance(value, list | tuple | set):
        hint = "; store a list as a comma-separated str or one key per item"
    elif isinstance(value, Mapping):
        hint = "; flatten it into separate keys, e.g. 'address.city'"
    raise InvalidTypeError(f"{name} must be a {_SCALARS}, got {type_name(value)}{hint}")


def require_metadata(value: object) -> dict[str, MetadataValue]:
    """``metadata=`` as a dict of JSON scalars (None gives an empty dict).

    Raises:
        InvalidTypeError: Not a mapping, a non-str key, or a value that is not a scalar.
        InvalidInputError: A blank or over-long key, the reserved key ``occurred_at``,
            a non-finite float or an int beyond 64 bits.
    """
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InvalidTypeError(
            f"metadata must be a dict of str to {_SCALARS}, got {type_name(value)}"
        )
    out: dict[str, MetadataValue] = {}
    for key, item in value.items():
        if _key("metadata", key) == TIME_KEY:
            raise InvalidInputError(
                f"metadata key {TIME_KEY!r} is reserved for the time range of filters; "
                "the memory's time is the at= argument"
            )
        out[key] = require_scalar(f"metadata[{key!r}]", item)
    return out


@dataclass(frozen=True)
class Filters:
    """Parsed ``filters``: store conditions on metadata, and a time window."""

    where: dict[str, list[MetadataValue]] = field(default_factory=dict)
    """``metadata.<key>`` to the values it may take."""
    window: TimeWindow | None = None

    def store_where(self, extra: Mapping[str, MetadataValue] | None = None) -> Where | None:
        """The store's ``where`` for these conditions plus ``extra`` record fields."""
        where: dict[str, MetadataValue | Sequence[MetadataValue]] = {
            key: values[0] if len(values) == 1 else values for key, values in self.where.items()
        }
        where.update(extra or {})
        return where or None

    def with_window(self, window: TimeWindow | None) -> TimeWindow | None:
        """The time window, from ``filters`` or from a ``window=`` argument, not both."""
        if window is not None and self.window is not None:
            raise InvalidInputError(
                f"give the time range once: window= or filters[{TIME_KEY!r}], not both"
            )
        return window if window is not None else self.window


def _time(name: str, value: object) -> datetime:
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError as e:
            raise InvalidInputError(
                f"{name} = {value!r} is not an ISO 8601 time such as '2024-05-08T18:20:00+00:00'"
            ) from e
    if not isinstance(value, datetime):
        raise InvalidTypeError(
            f"{name} must be a timezone-aware datetime or an ISO 8601 str, got {type_name(value)}"
        )
    if value.tzinfo is None or value.utcoffset() is None:
        raise InvalidInputError(f"{name} has no timezone; give one, e.g. '+00:00' or UTC")
    return value


def _window(value: object) -> TimeWindow:
    if not isinstance(value, Mapping) or not value or set(value) - set(_TIME_OPS):
        raise InvalidInputError(
            f"filters[{TIME_KEY!r}] must be a dict with 'gte' (inclusive start) and/or 'lt' "
            f"(exclusive end), got {value!r}"
        )
    bounds = {_TIME_OPS[op]: _time(f"filters[{TIME_KEY!r}][{op!r}]", v) for op, v in value.items()}
    return TimeWindow(**bounds)


def _values(key: str, value: object) -> list[MetadataValue]:
    name = f"filters[{key!r}]"
    if isinstance(value, Mapping):
        if len(value) != 1 or next(iter(value)) not in _VALUE_OPS:
            raise InvalidInputError(
                f"{name} = {dict(value)!r}: the operators are 'eq' and 'in' (a bare value "
                "means eq, a list means in); ne, gt, lt and contains are not supported"
            )
        op, value = next(iter(value.items()))
        if op == "in" and not isinstance(value, list | tuple):
            raise InvalidTypeError(f"{name}['in'] must be a list, got {type_name(value)}")
    if isinstance(value, list | tuple):
        if not value:
            raise InvalidInputError(f"{name} is an empty list; it would match nothing")
        return [require_scalar(f"{name}[{n}]", v) for n, v in enumerate(value)]
    return [require_scalar(name, value)]


def parse_filters(filters: object) -> Filters:
    """``filters=`` as store conditions and a time window (None gives no conditions).

    Raises:
        InvalidTypeError: Not a mapping, or a value of the wrong type.
        InvalidInputError: An unknown operator, an empty list, a bad time range, or a
            logical key (AND/OR/NOT): conditions are combined with AND already.
    """
    if filters is None:
        return Filters()
    if not isinstance(filters, Mapping):
        raise InvalidTypeError(
            f"filters must be a dict of metadata key to value, got {type_name(filters)}"
        )
    where: dict[str, list[MetadataValue]] = {}
    window = None
    for key, value in filters.items():
        if _key("filters", key) == TIME_KEY:
            window = _window(value)
        elif key in ("AND", "OR", "NOT"):
            raise InvalidInputError(
                f"filters[{key!r}]: conditions are always combined with AND; give each "
                "metadata key once (a list of values means any of them)"
            )
        else:
            where[f"metadata.{key}"] = _values(key, value)
    return Filters(where=where, window=window)


def require_threshold(value: object) -> float | None:
    """None, or a minimum cosine similarity between 0 and 1."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidTypeError(f"threshold must be a float between 0 and 1, got {type_name(value)}")
    if not 0.0 <= value <= 1.0:
        raise InvalidInputError(
            f"threshold is a minimum cosine similarity between 0 and 1, got {value}"
        )
    return float(value)
