"""A construction batch's supersessions and its facts' pending flags commit as one unit.

The Constructor writes its facts flagged as unjudged; the Refresher supersedes what the
Judge found and clears the flags in one transaction on Postgres. A failure between two
supersessions leaves no half state there: nothing superseded, no audit entry, the facts
still flagged for the next run. On Chroma each call lands on its own, and the flags still
say what is left to redo.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from lamina.agents.common.deps import NodeDeps, StepLog
from lamina.agents.ingest.nodes.conflicts import PENDING, PENDING_KEY
from lamina.agents.ingest.nodes.refresher import settle
from lamina.core.context import MemoryContext
from lamina.core.nodes import REFRESHER
from lamina.core.state import Conflict
from lamina.errors import StoreUnavailableError
from lamina.llm.structured import StructuredCaller
from lamina.records import FactRecord
from lamina.stores import ChromaMemoryStore
from lamina.testing import SchemaChatModel

NS = "user:settle"
T0 = datetime(2026, 3, 1, 12, tzinfo=UTC)


def fact(fid: str, text: str, days: int, *, flagged: bool = False) -> FactRecord:
    when = T0 + timedelta(days=days)
    return FactRecord(
        id=fid,
        namespace=NS,
        text=text,
        subject="Alice",
        occurred_at=when,
        valid_from=when,
        metadata={PENDING_KEY: PENDING} if flagged else {},
    )


def batch(store: Any) -> list[Conflict]:
    """Two stored facts, a batch of two new (flagged) facts, and the conflicts between them."""
    store.add(
        NS, [fact("boston", "Alice lives in Boston", -90), fact("nurse", "Alice is a nurse", -90)]
    )
    store.add(
        NS,
        [
            fact("denver", "Alice moved to Denver", 0, flagged=True),
            fact("doctor", "Alice became a doctor", 0, flagged=True),
        ],
    )
    return [
        Conflict(old_id="boston", new_id="denver", reason="moved"),
        Conflict(old_id="nurse", new_id="doctor", reason="new job"),
    ]


def refresher_log(store: Any) -> StepLog:
    return StepLog(REFRESHER, NodeDeps(store=store, caller=StructuredCaller(SchemaChatModel())))


def current(store: Any, *ids: str) -> dict[str, bool]:
    return {f.id: f.valid_to is None for f in store.get("fact", NS, list(ids))}


def flags(store: Any) -> dict[str, str | None]:
    return {f.id: f.metadata.get(PENDING_KEY) for f in store.get("fact", NS, ["denver", "doctor"])}


def test_a_failure_between_two_supersessions_leaves_no_half_state(
    empty_store: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, ctx = empty_store, MemoryContext(namespace=NS)
    conflicts = batch(store)
    real, calls = store.mark_superseded, []

    def dies_on_the_second(*args: Any, **kwargs: Any) -> FactRecord:
        calls.append(args)
        if len(calls) == 2:
            raise StoreUnavailableError("the connection was lost between two supersessions")
        return real(*args, **kwargs)  # type: ignore[no-any-return]

    monkeypatch.setattr(store, "mark_superseded", dies_on_the_second)
    log = refresher_log(store)
    written = settle(log, ctx, conflicts, ["denver", "doctor"])
    assert len(calls) == 2 and [f.step for f in log.failures] == ["supersede"]
    assert flags(store) == {"denver": PENDING, "doctor": PENDING}  # the next run checks again
    if isinstance(store, ChromaMemoryStore):  # no transaction: the first one landed alone
        assert [w.id for w in written] == ["boston"]
        assert current(store, "boston", "nurse") == {"boston": False, "nurse": True}
    else:  # one transaction: nothing of it is kept
        assert written == []
        assert current(store, "boston", "nurse") == {"boston": True, "nurse": True}
        assert store.list_audit(NS) == []

    monkeypatch.undo()  # the next run: what is still current is judged again, and settled
    left = [c for c in conflicts if current(store, c.old_id)[c.old_id]]
    again = refresher_log(store)
    settle(again, ctx, left, ["denver", "doctor"])
    assert again.failures == []
    assert current(store, "boston", "nurse") == {"boston": False, "nurse": False}
    assert flags(store) == {"denver": None, "doctor": None}
    assert sorted(e.target_id for e in store.list_audit(NS)) == ["boston", "nurse"]


def test_settling_without_conflicts_clears_only_the_flags(empty_store: Any) -> None:
    store = empty_store
    batch(store)
    log = refresher_log(store)
    assert settle(log, MemoryContext(namespace=NS), [], ["denver"]) == []
    assert flags(store) == {"denver": None, "doctor": PENDING}
    assert current(store, "boston", "nurse", "denver") == dict.fromkeys(
        ["boston", "nurse", "denver"], True
    )
    (denver,) = store.get("fact", NS, ["denver"])
    assert denver.text == "Alice moved to Denver" and log.failures == []
