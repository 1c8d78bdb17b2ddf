from datetime import UTC, datetime, timedelta, timezone

import pytest
from pydantic import ValidationError

from lamina.errors import InvalidInputError, NamespaceError
from lamina.records.model import (
    EpisodeRecord,
    FactRecord,
    Granularity,
    RawTurn,
    SceneRecord,
    parse_granularity,
    validate_namespace,
)

T = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)


def raw(**overrides: object) -> RawTurn:
    fields: dict[str, object] = dict(
        namespace="user:a", text="hello", speaker="A", session_id="s1", turn_index=0, occurred_at=T
    )
    fields.update(overrides)
    return RawTurn(**fields)  # type: ignore[arg-type]


def test_times_are_normalised_to_utc() -> None:
    plus2 = timezone(timedelta(hours=2))
    turn = raw(occurred_at=datetime(2024, 3, 1, 14, 0, tzinfo=plus2))
    assert turn.occurred_at == T
    assert turn.occurred_at.utcoffset() == timedelta(0)
    assert turn.recorded_at.tzinfo is not None


@pytest.mark.parametrize("field", ["occurred_at", "recorded_at"])
def test_naive_datetimes_are_rejected(field: str) -> None:
    with pytest.raises(ValidationError, match="timezone"):
        raw(**{field: datetime(2024, 3, 1, 12, 0)})


@pytest.mark.parametrize("text", ["", "   ", "\n\t"])
def test_empty_text_is_rejected(text: str) -> None:
    with pytest.raises(ValidationError, match="empty"):
        raw(text=text)


@pytest.mark.parametrize(
    "overrides",
    [
        {"text": 123},
        {"speaker": None},
        {"turn_index": "first"},
        {"turn_index": -1},
        {"source_ids": "abc"},
        {"metadata": {"k": [1, 2]}},
        {"occurred_at": "yesterday"},
    ],
)
def test_wrong_types_are_rejected(overrides: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        raw(**overrides)


def test_unknown_fields_are_rejected() -> None:
    with pytest.raises(ValidationError, match="extra"):
        raw(mood="happy")


@pytest.mark.parametrize("ns", ["", "a b", "user:a'; DROP", "x" * 300, "-lead", "ns|pipe", "ünï"])
def test_bad_namespaces_are_rejected(ns: str) -> None:
    with pytest.raises(NamespaceError):
        validate_namespace(ns)
    with pytest.raises(ValidationError):
        raw(namespace=ns)


def test_namespace_must_be_a_string() -> None:
    with pytest.raises(NamespaceError, match="must be a str"):
        validate_namespace(42)


def test_raw_turn_id_is_stable_and_scoped() -> None:
    a, b = raw(), raw(text="edited")
    assert a.id == b.id == RawTurn.turn_id("user:a", "s1", 0)
    assert raw(namespace="user:b").id != a.id
    assert raw(turn_index=1).id != a.id
    assert raw(id="explicit").id == "explicit"


def test_ids_cannot_contain_the_row_separator() -> None:
    with pytest.raises(ValidationError, match="'\\|'"):
        raw(id="a|b")


def test_fact_intervals_must_be_ordered() -> None:
    with pytest.raises(ValidationError, match="valid_to"):
        FactRecord(
            namespace="n1", text="x", occurred_at=T, valid_from=T, valid_to=T - timedelta(days=1)
        )
    with pytest.raises(ValidationError, match="end_time"):
        FactRecord(
            namespace="n1", text="x", occurred_at=T, start_time=T, end_time=T - timedelta(days=1)
        )
    fact = FactRecord(namespace="n1", text="x", occurred_at=T, valid_from=T, kind="foresight")
    assert fact.is_valid_at(T + timedelta(days=3))
    assert not fact.is_valid_at(T - timedelta(seconds=1))


def test_fact_kind_is_closed() -> None:
    with pytest.raises(ValidationError):
        FactRecord(namespace="n1", text="x", occurred_at=T, kind="rumour")  # type: ignore[arg-type]


def test_granularities() -> None:
    assert RawTurn.granularity is Granularity.RAW
    assert EpisodeRecord.granularity is Granularity.EPISODE
    assert SceneRecord(namespace="n1", text="s", occurred_at=T).summary == "s"
    assert parse_granularity("fact") is Granularity.FACT
    with pytest.raises(InvalidInputError, match="unknown granularity 'facts'"):
        parse_granularity("facts")
