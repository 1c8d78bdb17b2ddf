"""The Judge's update check: each new fact paired with its person's nearest facts."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from langchain_core.messages import BaseMessage

from lamina.agents.common.deps import NodeDeps, StepLog
from lamina.agents.ingest.nodes.conflicts import check_conflicts
from lamina.core.context import MemoryContext
from lamina.llm.structured import StructuredCaller
from lamina.records import FactRecord
from lamina.stores import ChromaMemoryStore
from lamina.testing import FakeEmbeddings, SchemaChatModel

NS = "user:alice"
T0 = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)
CHECK = "SupersessionCheck"


@pytest.fixture
def store() -> ChromaMemoryStore:
    return ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())


@pytest.fixture
def model() -> SchemaChatModel:
    return SchemaChatModel()


def fact(fid: str, text: str, subject: str | None = "Alice", days: int = 0) -> FactRecord:
    when = T0 + timedelta(days=days)
    return FactRecord(
        id=fid, namespace=NS, text=text, subject=subject, occurred_at=when, valid_from=when
    )


def check(
    store: ChromaMemoryStore,
    model: SchemaChatModel,
    new_ids: list[str],
    *,
    pairing: dict[str, int] | None = None,
    **ctx: Any,
) -> tuple[list[Any], StepLog]:
    """``pairing``: check_conflicts' ``per_fact`` / ``max_pairs`` (else its constants)."""
    deps = NodeDeps(store=store, caller=StructuredCaller(model, method="json_schema"))
    log = StepLog("judge", deps)
    ctx_ = MemoryContext(namespace=NS, **ctx)
    return check_conflicts(log, ctx_, new_ids, **(pairing or {})), log


def pairs_in(messages: list[BaseMessage]) -> dict[str, tuple[str, str]]:
    """label -> (old text, new text) of each pair the prompt lists."""
    text = "\n".join(str(m.content) for m in messages)
    found = re.finditer(
        r"\[(p\d+)\][^\n]*\n  OLD \([^)]*\): ([^\n]*)\n  NEW \([^)]*\): ([^\n]*)", text
    )
    return {m[1]: (m[2], m[3]) for m in found}


def verdicts(**outdated: bool) -> str:
    return json.dumps({"verdicts": [{"pair": p, "outdated": v} for p, v in outdated.items()]})


def test_only_the_same_persons_nearest_facts_are_asked_about(store, model) -> None:  # type: ignore[no-untyped-def]
    store.add(
        NS,
        [
            fact("boston", "Alice lives in Boston", days=-90),
            fact("bakery", "Alice works at the bakery", days=-90),
            fact("bob", "Bob moved to Denver", subject="Bob", days=-90),  # nearest, not Alice
            fact("denver", "Alice moved to Denver"),
        ],
    )
    model.script(CHECK, verdicts(p1=True, p2=False))
    conflicts, log = check(store, model, ["denver"])
    assert model.count(CHECK) == 1
    (_, prompt) = model.calls[0]
    # no word decides: both of Alice's facts are asked about, Bob's never
    assert sorted(pairs_in(prompt).values()) == [
        ("Alice lives in Boston", "Alice moved to Denver"),
        ("Alice works at the bakery", "Alice moved to Denver"),
    ]
    assert "Bob" not in str(prompt[1].content)
    assert len(conflicts) == 1 and conflicts[0].new_id == "denver"
    assert log.failures == []


def test_a_persons_facts_are_paired_nearest_first_up_to_the_cap(store, model) -> None:  # type: ignore[no-untyped-def]
    store.add(
        NS,
        [
            fact("boston", "Alice lives in Boston near the harbour", days=-90),
            fact("bakery", "Alice works at the bakery", days=-90),
            fact("harbour", "Alice now lives in Denver near the harbour"),
        ],
    )
    model.script(CHECK, verdicts(p1=True))
    conflicts, _ = check(store, model, ["harbour"], pairing={"per_fact": 1})
    assert list(pairs_in(model.calls[0][1]).values()) == [
        ("Alice lives in Boston near the harbour", "Alice now lives in Denver near the harbour")
    ]
    assert [c.old_id for c in conflicts] == ["boston"]


def test_no_call_when_the_person_has_no_other_current_fact(store, model) -> None:  # type: ignore[no-untyped-def]
    old = fact("boston", "Alice lives in Boston", days=-90)
    store.add(
        NS,
        [
            fact("bob", "Bob moved to Denver", subject="Bob", days=-5),  # nearest, someone else
            fact("denver", "Alice moved to Denver"),
            fact("nobody", "Someone moved to Denver", subject=None),
            old.model_copy(update={"superseded_by": "elsewhere"}),  # no longer current
        ],
    )
    conflicts, log = check(store, model, ["denver", "nobody"])
    assert conflicts == [] and model.calls == [] and log.calls == []


def test_only_the_pairs_the_model_confirms_are_returned(store, model) -> None:  # type: ignore[no-untyped-def]
    store.add(
        NS,
        [
            fact("boston", "Alice lives in Boston", days=-90),
            fact("dog", "Alice has a dog named Rex", days=-90),
            fact("denver", "Alice moved to Denver"),
            fact("cat", "Alice adopted a second pet, a cat"),
        ],
    )

    def confirm_the_move(messages: list[BaseMessage]) -> str:
        listed = pairs_in(messages)
        return verdicts(
            **{p: "Boston" in old and "Denver" in new for p, (old, new) in listed.items()}
        )

    model.script(CHECK, confirm_the_move)
    conflicts, _ = check(store, model, ["denver", "cat"])
    assert model.count(CHECK) == 1
    listed = pairs_in(model.calls[0][1]).values()
    assert ("Alice lives in Boston", "Alice moved to Denver") in listed
    assert ("Alice has a dog named Rex", "Alice adopted a second pet, a cat") in listed
    assert [c.old_id for c in conflicts] == ["boston"]


def test_a_failed_check_supersedes_nothing_and_is_recorded(store, model) -> None:  # type: ignore[no-untyped-def]
    store.add(
        NS,
        [
            fact("boston", "Alice lives in Boston", days=-90),
            fact("denver", "Alice moved to Denver"),
        ],
    )
    model.script(CHECK, *["not json"] * 3)
    conflicts, log = check(store, model, ["denver"])
    assert conflicts == []
    assert [f.step for f in log.failures] == ["conflicts"]
    assert len(log.calls) == 3 and not any(c.ok for c in log.calls)


def test_an_unknown_label_or_a_false_verdict_supersedes_nothing(store, model) -> None:  # type: ignore[no-untyped-def]
    store.add(
        NS,
        [
            fact("boston", "Alice lives in Boston", days=-90),
            fact("denver", "Alice moved to Denver"),
        ],
    )
    model.script(CHECK, verdicts(p7=True, p1=False))
    conflicts, _ = check(store, model, ["denver"])
    assert conflicts == []


def test_many_pairs_are_asked_in_capped_batches(store, model) -> None:  # type: ignore[no-untyped-def]
    store.add(
        NS,
        [
            fact("boston", "Alice lives in Boston", days=-90),
            fact("job", "Alice works at the bakery", days=-90),
            fact("denver", "Alice moved to Denver"),
            fact("quit", "Alice quit her job at the bakery"),
        ],
    )
    model.script(CHECK, verdicts(p1=True), verdicts(p1=True))
    conflicts, log = check(store, model, ["denver", "quit"], pairing={"max_pairs": 1})
    assert model.count(CHECK) == 2 and len(log.calls) == 2
    assert sorted(c.old_id for c in conflicts) == ["boston", "job"]


def test_the_ingest_graph_supersedes_only_a_confirmed_pair(store, model) -> None:  # type: ignore[no-untyped-def]
    from lamina.graphs.ingest import build_ingest_graph

    store.add(NS, [fact("boston", "Alice lives in Boston", days=-90)])
    model.script(
        "ConstructionLines",
        "T|Move\nS|Alice moved.\n"
        "F|t1|Alice|Alice moved to Denver.\nF|t1|Alice|Alice visited Boston.\n"
        "F|t1|Alice|Alice baked bread.",
    )

    def confirm_any(messages: list[BaseMessage]) -> str:
        return verdicts(**dict.fromkeys(pairs_in(messages), True))

    model.script(CHECK, confirm_any)
    graph = build_ingest_graph(chat_model=model, store=store).compile()
    said = "I moved to Denver! I visited Boston. I baked bread."
    turn = {"speaker": "Alice", "text": said, "occurred_at": T0, "session_id": "s1"}
    out = graph.invoke(
        {"turns": [turn], "session_closed": True},
        context=MemoryContext(namespace=NS, trigger_policy="session"),
    )
    # the stored fact is paired with the first new fact that reaches it, and the model
    # (not a word list) decides
    assert [c.old_id for c in out["conflicts"]] == ["boston"]
    asked = [new for _, new in pairs_in(model.calls[-1][1]).values()]
    assert len(asked) == 1 and asked[0] in {"Alice moved to Denver.", "Alice visited Boston."}
    assert [c.old_id for c in out["conflicts"]] == ["boston"]
    (old,) = store.get("fact", NS, ["boston"])
    assert isinstance(old, FactRecord) and old.superseded_by is not None
    assert old.valid_to == T0


def test_a_failed_check_leaves_both_current_and_is_asked_again_next_run(store, model) -> None:  # type: ignore[no-untyped-def]
    from lamina.agents.ingest.nodes.conflicts import PENDING_KEY, make_judge
    from lamina.agents.ingest.nodes.refresher import settle

    deps = NodeDeps(store=store, caller=StructuredCaller(model, method="json_schema"))
    judge = make_judge(deps)

    class Runtime:
        context = MemoryContext(namespace=NS)

    store.add(NS, [fact("boston", "Alice lives in Boston", days=-90)])
    store.add(NS, [fact("denver", "Alice moved to Denver")])
    model.script(CHECK, *["not json"] * 3)  # every attempt of the run's one call fails
    out = judge({"new_fact_ids": ["denver"]}, Runtime())
    assert out["conflicts"] == [] and out["failures"]
    (denver,) = store.get("fact", NS, ["denver"])
    assert denver.metadata[PENDING_KEY] == "pending"  # flagged for the next run
    assert all(f.valid_to is None for f in store.get("fact", NS))  # both stay current

    store.add(NS, [fact("cat", "Alice adopted a cat", days=1)])
    model.script(CHECK, verdicts(p1=False), verdicts(p1=True))  # the new fact, then the retry
    out = judge({"new_fact_ids": ["cat"]}, Runtime())
    assert [(c.old_id, c.new_id) for c in out["conflicts"]] == [("boston", "denver")]
    assert "denver" in out["settled_fact_ids"]  # checked: the Refresher clears the flag
    settle(StepLog("refresher", deps), Runtime.context, out["conflicts"], out["settled_fact_ids"])
    (denver,) = store.get("fact", NS, ["denver"])
    assert PENDING_KEY not in denver.metadata
