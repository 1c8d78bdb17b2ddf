from datetime import UTC, datetime, timedelta

import pytest

from lamina.errors import InvalidInputError, InvalidTypeError, NamespaceError
from lamina.records.model import Granularity
from lamina.stores.filters import OCCURRED_TS, SearchFilter, TimeWindow

T = datetime(2024, 1, 1, tzinfo=UTC)


def meta(ns: str = "n1", at: datetime = T, **kw: object) -> dict[str, object]:
    return {"namespace": ns, OCCURRED_TS: at.timestamp(), **kw}


def test_window_is_half_open() -> None:
    w = TimeWindow.between(T, T + timedelta(days=1))
    assert w.contains(T.timestamp())
    assert not w.contains((T + timedelta(days=1)).timestamp())
    assert TimeWindow.before_(T).contains((T - timedelta(seconds=1)).timestamp())
    assert not TimeWindow.after_(T).contains((T - timedelta(seconds=1)).timestamp())


def test_window_rejects_naive_and_empty() -> None:
    with pytest.raises(InvalidInputError, match="naive"):
        TimeWindow(after=datetime(2024, 1, 1))
    with pytest.raises(InvalidInputError, match="empty time window"):
        TimeWindow.between(T, T)
    with pytest.raises(InvalidTypeError):
        TimeWindow(after="2024-01-01")  # type: ignore[arg-type]


def test_chroma_where_and_predicate_agree() -> None:
    flt = SearchFilter(
        "n1",
        TimeWindow.between(T, T + timedelta(days=2)),
        {"speaker": ["Ann", "Bo"], "metadata.topic": "pets"},
    )
    where = flt.to_chroma_where(Granularity.RAW)
    assert where == {
        "$and": [
            {"namespace": {"$eq": "n1"}},
            {OCCURRED_TS: {"$gte": T.timestamp()}},
            {OCCURRED_TS: {"$lt": (T + timedelta(days=2)).timestamp()}},
            {"speaker": {"$in": ["Ann", "Bo"]}},
            {"meta.topic": {"$eq": "pets"}},
        ]
    }
    test = flt.predicate(Granularity.RAW)
    assert test(meta(speaker="Bo", **{"meta.topic": "pets"}))
    assert not test(meta(ns="n2", speaker="Bo", **{"meta.topic": "pets"}))
    assert not test(meta(speaker="Cy", **{"meta.topic": "pets"}))
    assert not test(meta(at=T + timedelta(days=2), speaker="Bo", **{"meta.topic": "pets"}))


def test_unknown_filter_fields_are_rejected() -> None:
    with pytest.raises(InvalidInputError, match="cannot filter fact records on 'speaker'"):
        SearchFilter("n1", where={"speaker": "x"}).to_chroma_where(Granularity.FACT)
    with pytest.raises(InvalidTypeError):
        SearchFilter("n1", where={"speaker": {"$ne": "x"}})  # type: ignore[dict-item]
    with pytest.raises(InvalidInputError, match="empty list"):
        SearchFilter("n1", where={"speaker": []})
    with pytest.raises(NamespaceError):
        SearchFilter("bad namespace")
