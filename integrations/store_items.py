"""LangGraph store items as lamina raw records, and LangGraph's filters on their values.

An item is one raw record whose text is the item's value as JSON, verbatim. Raw is the
layer lamina never rewrites (only an explicit forget removes a raw record), and the
records are marked trivial, so consolidation never reads them. Each indexed field that
is not the whole value (``"$"``) gets one more raw record holding that field's text, so
an item can have several vectors; search keeps each item's best one, as LangGraph does.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from langgraph.store.base import Item, get_text_at_path, tokenize_path

from ..errors import InvalidInputError, InvalidTypeError
from ..records.model import MemoryRecord, RawTurn, require_encodable, stable_id
from ..stores.base import Where

STORE_SPEAKER = "langgraph-store"
"""The speaker of every record a :class:`LaminaStore` writes."""

STORE_SESSION = STORE_SPEAKER
"""The session id of every record a :class:`LaminaStore` writes."""

ROLE, KEY, PATH, VECTOR, VECTORS = "lg_role", "lg_key", "lg_path", "lg_vector", "lg_vectors"
"""Metadata keys: the record's role, the item key, the field path, whether the record is
one of the item's search vectors, and how many vectors the item has."""

ITEM, FIELD, NAMESPACE = "item", "field", "namespace"
"""Record roles: an item, one indexed field of an item, a namespace registry entry."""

ITEMS: Where = {f"metadata.{ROLE}": ITEM}
"""The store filter of item records."""

WHOLE = "$"
"""The index path of the whole value."""

_OPERATORS = frozenset({"$eq", "$ne", "$gt", "$gte", "$lt", "$lte"})

IndexPaths = list[tuple[str, list[str] | str]]
"""``(path, tokenized path)`` pairs; the whole value is ``("$", "$")``."""


def index_paths(fields: Sequence[str]) -> IndexPaths:
    """Tokenize index field paths once (``"$"`` stays whole).

    Raises:
        InvalidTypeError: if ``fields`` is not a list of strings.
        InvalidInputError: if a path is empty.
    """
    if isinstance(fields, str) or not isinstance(fields, Sequence):
        raise InvalidTypeError(
            f"index fields must be a list of paths such as ['content'], got {type(fields).__name__}"
        )
    out: IndexPaths = []
    for path in fields:
        if not isinstance(path, str):
            raise InvalidTypeError(f"index field paths must be strings, got {path!r}")
        if not path.strip():
            raise InvalidInputError("index field paths must not be empty; use '$' for the value")
        out.append((path, path) if path == WHOLE else (path, tokenize_path(path)))
    return out


def item_id(key: str) -> str:
    """The record id of an item (keys may hold any character; ids may not)."""
    return stable_id("langgraph-item", key)


def field_id(key: str, label: str) -> str:
    """The record id of one indexed field of an item."""
    return stable_id("langgraph-field", key, label)


def fields_of(keys: list[str]) -> Where:
    """The store filter of the indexed-field records of the items ``keys``."""
    return {f"metadata.{ROLE}": FIELD, f"metadata.{KEY}": keys}


def registry_id(namespace: str) -> str:
    """The record id of a namespace's registry entry."""
    return stable_id("langgraph-namespace", namespace)


def _problem(value: object, where: str) -> str | None:
    """The first part of ``value`` that strict JSON cannot hold, described, or None."""
    if value is None or isinstance(value, str | bool | int):
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else f"{where} is {value!r}, which JSON cannot hold"
    if isinstance(value, Mapping):
        for k, v in value.items():
            if not isinstance(k, str):
                return f"{where} has the key {k!r} ({type(k).__name__}); JSON keys are strings"
            found = _problem(v, f"{where}[{k!r}]")
            if found:
                return found
        return None
    if isinstance(value, list | tuple):
        for n, v in enumerate(value):
            found = _problem(v, f"{where}[{n}]")
            if found:
                return found
        return None
    return f"{where} is a {type(value).__name__}, which JSON cannot hold"


def dump_value(value: object) -> str:
    """The value as JSON text, verbatim (key order kept, non-ASCII unescaped).

    Raises:
        InvalidTypeError: if the value is not a dict, or holds something JSON cannot
            (a datetime, a set, an object, a non-string key, NaN); the message names it.
        InvalidInputError: if a string holds a lone surrogate, which UTF-8 cannot store.
    """
    if not isinstance(value, dict):
        raise InvalidTypeError(
            f"a store value must be a dict (or None to delete), got {type(value).__name__}"
        )
    found = _problem(value, "value")
    if found:
        raise InvalidTypeError(
            f"{found}; store JSON-serializable values only (e.g. a datetime as .isoformat())"
        )
    return require_encodable("the value", json.dumps(value, ensure_ascii=False))


@dataclass(frozen=True)
class ItemTexts:
    """What an item is searched by: the whole value and/or field texts."""

    whole: bool
    """The whole value (the item record itself) is one of the vectors."""
    fields: list[tuple[str, str]]
    """``(path label, text)`` of every other indexed field."""

    @property
    def count(self) -> int:
        """How many vectors represent the item."""
        return int(self.whole) + len(self.fields)


def item_texts(value: dict[str, Any], paths: IndexPaths) -> ItemTexts:
    """The texts an item is indexed by, one per path match (``path.i`` for several)."""
    whole = False
    fields: list[tuple[str, str]] = []
    for path, tokens in paths:
        if path == WHOLE:
            whole = True
            continue
        texts = [t for t in get_text_at_path(value, tokens) if t.strip()]
        if len(texts) == 1:
            fields.append((path, texts[0]))
        else:
            fields.extend((f"{path}.{n}", text) for n, text in enumerate(texts))
    return ItemTexts(whole=whole, fields=fields)


def _turn(
    namespace: str, record_id: str, text: str, at: datetime, updated: datetime, meta: dict[str, Any]
) -> RawTurn:
    return RawTurn(
        id=record_id,
        namespace=namespace,
        text=text,
        speaker=STORE_SPEAKER,
        session_id=STORE_SESSION,
        turn_index=0,
        occurred_at=at,
        recorded_at=updated,
        trivial=True,
        metadata=meta,
    )


def item_records(
    namespace: str,
    key: str,
    text: str,
    texts: ItemTexts,
    *,
    created_at: datetime,
    updated_at: datetime,
) -> list[MemoryRecord]:
    """The item's record (the value, verbatim) and one record per indexed field."""
    records: list[MemoryRecord] = [
        _turn(
            namespace,
            item_id(key),
            text,
            created_at,
            updated_at,
            {ROLE: ITEM, KEY: key, VECTOR: texts.whole, VECTORS: texts.count},
        )
    ]
    for label, field_text in texts.fields:
        meta = {ROLE: FIELD, KEY: key, PATH: label, VECTOR: True}
        records.append(
            _turn(namespace, field_id(key, label), field_text, created_at, updated_at, meta)
        )
    return records


def registry_record(
    registry: str, namespace: str, labels: tuple[str, ...], at: datetime
) -> RawTurn:
    """The registry entry saying that ``labels`` (stored as ``namespace``) holds items."""
    text = json.dumps(list(labels), ensure_ascii=False)
    meta = {ROLE: NAMESPACE, KEY: namespace}
    return _turn(registry, registry_id(namespace), text, at, at, meta)


def registry_labels(record: MemoryRecord) -> tuple[str, ...] | None:
    """The namespace tuple of a registry entry, or None if the record is not one."""
    if record.metadata.get(ROLE) != NAMESPACE:
        return None
    labels = json.loads(record.text)
    return tuple(str(label) for label in labels)


def to_item(record: MemoryRecord, namespace: tuple[str, ...]) -> Item | None:
    """The LangGraph item a record holds, or None if it is not an item record."""
    if record.metadata.get(ROLE) != ITEM:
        return None
    return Item(
        value=json.loads(record.text),
        key=str(record.metadata[KEY]),
        namespace=namespace,
        created_at=record.occurred_at,
        updated_at=record.recorded_at,
    )


def check_filter(flt: object) -> dict[str, Any]:
    """Validate a search filter: a dict of field -> value or ``{"$op": value}``.

    Raises:
        InvalidTypeError: if the filter is not a dict.
        InvalidInputError: for an unknown ``$`` operator.
    """
    if flt is None:
        return {}
    if not isinstance(flt, dict):
        raise InvalidTypeError(
            f"filter must be a dict such as {{'kind': 'note'}}, got {type(flt).__name__}"
        )
    _check_operators(flt)
    return flt


def _check_operators(expected: object) -> None:
    if isinstance(expected, dict):
        for name, inner in expected.items():
            if isinstance(name, str) and name.startswith("$") and name not in _OPERATORS:
                raise InvalidInputError(
                    f"unsupported filter operator {name!r}; use one of {sorted(_OPERATORS)}"
                )
            _check_operators(inner)
    elif isinstance(expected, list | tuple):
        for inner in expected:
            _check_operators(inner)


def passes(value: Mapping[str, Any], flt: Mapping[str, Any]) -> bool:
    """Whether an item's value satisfies every condition of ``flt``.

    A filter key names a top-level field; a key with dots that is not itself a field
    follows nested fields (``"user.level"``), as LangGraph's SQL stores do.
    """
    return all(_compare(_lookup(value, name), expected) for name, expected in flt.items())


def _lookup(value: Mapping[str, Any], name: str) -> Any:
    if name in value or "." not in name:
        return value.get(name)
    current: Any = value
    for part in name.split("."):
        if not isinstance(current, Mapping) or part not in current:
            return None
        current = current[part]
    return current


def _equal(actual: object, expected: object) -> bool:
    """JSON equality: ``true`` is not ``1``; ``1`` is ``1.0``; dicts and lists deeply."""
    if isinstance(actual, bool) or isinstance(expected, bool):
        return isinstance(actual, bool) and isinstance(expected, bool) and actual == expected
    if isinstance(actual, Mapping) and isinstance(expected, Mapping):
        return actual.keys() == expected.keys() and all(
            _equal(actual[k], expected[k]) for k in actual
        )
    if isinstance(actual, list | tuple) and isinstance(expected, list | tuple):
        return len(actual) == len(expected) and all(
            _equal(a, e) for a, e in zip(actual, expected, strict=True)
        )
    return actual == expected


def _compare(actual: object, expected: object) -> bool:
    if isinstance(expected, dict):
        if any(isinstance(k, str) and k.startswith("$") for k in expected):
            return all(_apply(actual, op, arg) for op, arg in expected.items())
        if not isinstance(actual, dict):
            return False
        return all(_compare(actual.get(k), v) for k, v in expected.items())
    if isinstance(expected, list | tuple):
        return (
            isinstance(actual, list | tuple)
            and len(actual) == len(expected)
            and all(_compare(a, e) for a, e in zip(actual, expected, strict=True))
        )
    return _equal(actual, expected)


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _apply(actual: object, op: str, arg: object) -> bool:
    """One operator; an ordering between values of different kinds never matches."""
    if op == "$eq":
        return _equal(actual, arg)
    if op == "$ne":
        return not _equal(actual, arg)
    if _number(actual) and _number(arg):
        a, b = float(actual), float(arg)  # type: ignore[arg-type]
    elif isinstance(actual, str) and isinstance(arg, str):
        a, b = actual, arg  # type: ignore[assignment]
    else:
        return False
    if op == "$gt":
        return a > b
    if op == "$gte":
        return a >= b
    if op == "$lt":
        return a < b
    return a <= b  # "$lte"; check_filter rejected anything else
