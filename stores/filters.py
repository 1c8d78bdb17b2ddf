"""One filter spec, compiled to a Chroma ``where`` clause and to a Python predicate.

Both search channels (dense in Chroma, lexical in the BM25 index) apply the same
:class:`SearchFilter`, so a time window or metadata condition can never hold on one
channel and not on the other.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..errors import InvalidInputError, InvalidTypeError
from ..records.model import Granularity, MetadataValue, validate_namespace

_FILTERABLE: dict[Granularity, frozenset[str]] = {
    Granularity.RAW: frozenset({"speaker", "session_id", "turn_index", "consolidated", "pending"}),
    Granularity.FACT: frozenset({"kind", "subject", "superseded"}),
    Granularity.EPISODE: frozenset(),
    Granularity.SCENE: frozenset(),
}
"""The record fields the codec writes as Chroma metadata, per granularity (and every
record's ``record_id``): what a :class:`SearchFilter` may test."""


OCCURRED_TS = "occurred_ts"
"""Metadata key holding ``occurred_at`` as POSIX seconds, for range filters."""

USER_META_PREFIX = "meta."
"""Metadata key prefix for a record's free-form ``metadata``."""


def value_key(value: Any) -> Any:
    """``value`` as filters compare it: a bool never equals a number, ``1`` equals ``1.0``.

    So the Python side of a filter matches what Chroma's ``where`` and Postgres's jsonb
    match, where Python alone has ``True == 1``.
    """
    return (bool, value) if isinstance(value, bool) else value


def _aware(value: datetime | None, name: str) -> datetime | None:
    if value is None:
        return None
    if not isinstance(value, datetime):
        raise InvalidTypeError(f"{name} must be a datetime, got {type(value).__name__}")
    if value.tzinfo is None or value.utcoffset() is None:
        raise InvalidInputError(
            f"{name} is a naive datetime; pass a timezone-aware one, e.g. "
            "datetime(2023, 5, 8, tzinfo=timezone.utc)"
        )
    return value


@dataclass(frozen=True)
class TimeWindow:
    """A half-open window on ``occurred_at``: ``after <= occurred_at < before``.

    Either bound may be omitted. Use :meth:`before_`, :meth:`after_` and
    :meth:`between` for the REMem operators.
    """

    after: datetime | None = None
    """Inclusive lower bound (aware)."""
    before: datetime | None = None
    """Exclusive upper bound (aware)."""

    def __post_init__(self) -> None:
        _aware(self.after, "after")
        _aware(self.before, "before")
        if self.after is not None and self.before is not None and self.before <= self.after:
            raise InvalidInputError(
                f"empty time window: before ({self.before.isoformat()}) must be later than "
                f"after ({self.after.isoformat()})"
            )

    @classmethod
    def before_(cls, when: datetime) -> TimeWindow:
        """Everything that happened strictly before ``when``."""
        return cls(before=when)

    @classmethod
    def after_(cls, when: datetime) -> TimeWindow:
        """Everything that happened at or after ``when``."""
        return cls(after=when)

    @classmethod
    def between(cls, start: datetime, end: datetime) -> TimeWindow:
        """Everything in ``[start, end)``."""
        return cls(after=start, before=end)

    def contains(self, ts: float) -> bool:
        """Return True if POSIX time ``ts`` is inside the window."""
        if self.after is not None and ts < self.after.timestamp():
            return False
        return not (self.before is not None and ts >= self.before.timestamp())


def _member(key: str, values: list[Any]) -> dict[str, Any]:
    """Chroma's clause for ``key`` taking one of ``values``: an ``$in`` per value type.

    Chroma refuses an ``$in`` list of mixed types (``["pets", 2]``, ``[1, 1.5]``).
    """
    by_type: dict[type, list[Any]] = {}
    for value in values:
        by_type.setdefault(type(value), []).append(value)
    tests = [
        {key: {"$in": vs}} if len(vs) > 1 else {key: {"$eq": vs[0]}} for vs in by_type.values()
    ]
    return tests[0] if len(tests) == 1 else {"$or": tests}


@dataclass(frozen=True)
class SearchFilter:
    """Namespace plus optional time window and metadata equality conditions.

    ``where`` maps a record field (``speaker``, ``session_id``, ``kind``...) or
    ``metadata.<key>`` to a scalar (equality) or a list of scalars (membership).
    """

    namespace: str
    window: TimeWindow | None = None
    where: Mapping[str, MetadataValue | Sequence[MetadataValue]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        validate_namespace(self.namespace)
        if self.window is not None and not isinstance(self.window, TimeWindow):
            raise InvalidTypeError(f"window must be a TimeWindow, got {type(self.window).__name__}")
        if not isinstance(self.where, Mapping):
            raise InvalidTypeError(f"where must be a mapping, got {type(self.where).__name__}")
        for key, value in self.where.items():
            if not isinstance(key, str) or not key:
                raise InvalidInputError(f"where keys must be non-empty strings, got {key!r}")
            values = value if isinstance(value, list | tuple) else [value]
            if not values:
                raise InvalidInputError(f"where[{key!r}] is an empty list; it would match nothing")
            for v in values:
                if not isinstance(v, str | int | float | bool):
                    raise InvalidTypeError(
                        f"where[{key!r}] must be a str, int, float or bool (or a list of them), "
                        f"got {type(v).__name__}"
                    )

    def metadata_conditions(self, granularity: Granularity) -> list[tuple[str, list[Any]]]:
        """Return ``(metadata_key, allowed_values)`` pairs after validating the keys."""
        allowed = _FILTERABLE[granularity] | {"record_id"}
        out: list[tuple[str, list[Any]]] = []
        for key, value in self.where.items():
            if key.startswith("metadata."):
                meta_key = USER_META_PREFIX + key.removeprefix("metadata.")
            elif key in allowed:
                meta_key = key
            else:
                raise InvalidInputError(
                    f"cannot filter {granularity.value} records on {key!r}; use one of "
                    f"{sorted(allowed)} or 'metadata.<key>'"
                )
            values = list(value) if isinstance(value, list | tuple) else [value]
            out.append((meta_key, values))
        return out

    def to_chroma_where(self, granularity: Granularity) -> dict[str, Any]:
        """Compile to a Chroma ``where`` clause (namespace always included)."""
        clauses: list[dict[str, Any]] = [{"namespace": {"$eq": self.namespace}}]
        if self.window is not None:
            if self.window.after is not None:
                clauses.append({OCCURRED_TS: {"$gte": self.window.after.timestamp()}})
            if self.window.before is not None:
                clauses.append({OCCURRED_TS: {"$lt": self.window.before.timestamp()}})
        for key, values in self.metadata_conditions(granularity):
            clauses.append(_member(key, values))
        return clauses[0] if len(clauses) == 1 else {"$and": clauses}

    def predicate(self, granularity: Granularity) -> Callable[[Mapping[str, Any]], bool]:
        """Compile the same conditions into a test on one record's stored metadata."""
        conditions = [
            (key, [value_key(v) for v in values])
            for key, values in self.metadata_conditions(granularity)
        ]
        namespace, window = self.namespace, self.window

        def test(metadata: Mapping[str, Any]) -> bool:
            if metadata.get("namespace") != namespace:
                return False
            if window is not None and not window.contains(float(metadata[OCCURRED_TS])):
                return False
            return all(value_key(metadata.get(key)) in keys for key, keys in conditions)

        return test
