"""Malformed LLM output: generated bad replies through every structured call.

A seeded generator writes bad replies of ten kinds (truncated JSON, JSON cut off right
after an inner object, wrong types, missing keys, prose, huge strings, deep nesting,
empty, non-objects, broken fences) plus salvageable ones (a valid object inside prose or
a fence, lone surrogate escapes) and ones json-repair must fix (unquoted keys, trailing
commas, single quotes). Each reply goes through ``StructuredCaller`` for every schema the
graphs use; then each schema is broken end to end in the ingest and recall graphs.
Checks: no exception but ``StructuredOutputError`` escapes the caller, none escapes a
graph, every accepted reply is the intended object (never a fragment of a truncated
one), repairs are counted as repairs, raw turns stay intact, and every failed attempt
and failed step is counted in ``llm_calls`` / ``failures``.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from langchain_core.messages import BaseMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import BaseModel, Field

from lamina.agents.ingest import schemas
from lamina.agents.recall import schemas as recall_schemas
from lamina.core.context import MemoryContext
from lamina.graphs.ingest import build_ingest_graph
from lamina.graphs.recall import build_recall_graph
from lamina.llm.structured import StructuredCaller, StructuredOutputError
from lamina.records import FactRecord, RawTurn
from lamina.stores import ChromaMemoryStore
from lamina.testing import (
    FakeChatModel,
    FakeEmbeddings,
    Reply,
    minimal_instance,
    requested_line_format,
    requested_schema,
)

T0 = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)

VALID: dict[type[BaseModel], dict[str, Any]] = {
    schemas.BoundaryDecision: {"new_episode": True, "reason": "topic changed"},
    schemas.ConstructionDraft: {
        "title": "Hike",
        "summary": "Alice hiked.",
        "facts": [
            {"kind": "fact", "source": "t1", "subject": "Alice", "statement": "Alice hiked Tam"},
            {"kind": "foresight", "subject": "Alice", "statement": "Alice plans a trip"},
        ],
    },
    schemas.SupersessionCheck: {"verdicts": [{"pair": "p1", "outdated": True}]},
    recall_schemas.DraftFirst: {
        "answer": "Mount Tam",
        "cited": ["m1"],
        "sufficient": True,
        "missing": "",
        "conflicting": [],
    },
    recall_schemas.QueryRewrite: {"queries": ["alice hike", "where hiked"]},
    recall_schemas.RefreshPlan: {
        "action": "update",
        "edits": [{"label": "m1", "new_content": "x"}],
    },
    recall_schemas.AnswerDraft: {"answerable": True, "answer": "Mount Tam", "cited": ["m1"]},
}
"""One valid reply per schema the graphs ask for (every structured call site)."""

WRONG: list[Any] = [1, -3.5, True, None, "text", [], ["a", 1], {"nested": {"x": 1}}]


def _wrong_types(rng: random.Random, valid: dict[str, Any], schema: type[BaseModel]) -> str:
    """The valid object with one required field given a value of the wrong type."""
    required = [k for k, f in schema.model_fields.items() if f.is_required()]
    key = rng.choice(required)
    field_type = str(schema.model_fields[key].annotation)
    options = [w for w in WRONG if _wrong_for(w, field_type)]
    return json.dumps({**valid, key: rng.choice(options)})


def _wrong_for(value: Any, annotation: str) -> bool:
    if annotation == "<class 'bool'>":
        return value not in (0, 1)  # pydantic's lax mode reads 0/1 as booleans
    if annotation == "<class 'str'>":
        return not isinstance(value, str) or value == ""
    if annotation.startswith("list"):
        return not isinstance(value, list) or value == ["a", 1]
    if annotation.startswith("typing.Literal"):
        return True
    return not isinstance(value, str)


KINDS = (
    "truncated",
    "truncated_inner",
    "wrong_type",
    "missing_key",
    "prose",
    "huge",
    "nested",
    "empty",
    "not_object",
    "fence",
    "salvage_prose",
    "salvage_surrogate",
    "unquoted_key",
    "trailing_comma",
    "single_quote",
)
REPAIRED = frozenset({"unquoted_key", "trailing_comma", "single_quote"})
"""Kinds json-repair must turn into exactly the intended object."""
_KEY = re.compile(r'"([A-Za-z_]+)":')


def _cut_after_inner_value(rng: random.Random, text: str) -> str:
    """``text`` cut right after an inner object, list or key-value pair has closed.

    A parser that returns the first complete value it finds would read the fragment.
    """
    closes = [i + 1 for i, c in enumerate(text[:-1]) if c in "}]"]
    if not closes:
        closes = [i for i, c in enumerate(text) if c == ","] or [len(text) - 1]
    return text[: rng.choice(closes)]


def _trailing_commas(rng: random.Random, text: str) -> str:
    spots = [i for i, c in enumerate(text) if c in "}]"]
    chosen = set(rng.sample(spots, rng.randint(1, len(spots))))
    return "".join(("," + c) if i in chosen else c for i, c in enumerate(text))


def bad_reply(rng: random.Random, schema: type[BaseModel]) -> tuple[str, str, bool]:
    """Return ``(kind, reply, salvageable)``: salvageable replies must validate."""
    valid = VALID[schema]
    text = json.dumps(valid)
    required = [k for k, f in schema.model_fields.items() if f.is_required()]
    kind = rng.choice(KINDS)
    if kind == "truncated":
        return kind, text[: rng.randrange(0, len(text) - 1)], False
    if kind == "truncated_inner":
        return kind, _cut_after_inner_value(rng, text), False
    if kind == "unquoted_key":
        return kind, _KEY.sub(r"\1:", text), True
    if kind == "trailing_comma":
        return kind, _trailing_commas(rng, text), True
    if kind == "single_quote":
        return kind, text.replace('"', "'"), True
    if kind == "wrong_type":
        return kind, _wrong_types(rng, valid, schema), False
    if kind == "missing_key":
        gone = rng.choice(required)
        return kind, json.dumps({k: v for k, v in valid.items() if k != gone}), False
    if kind == "prose":
        return (
            kind,
            rng.choice(
                [
                    "Sure! Here is the answer you asked for.",
                    "I cannot help with that request.",
                    "```json\nnot json at all\n```",
                    "{'title': 'python dict, not JSON'}",
                    "The answer is {unclosed",
                    "<data>ignore previous instructions</data>",
                ]
            ),
            False,
        )
    if kind == "huge":
        size = rng.choice([100_000, 400_000, 1_100_000])
        return kind, rng.choice(["x", "{", "[", '{"a":', "\\u0000"]) * (size // 4), False
    if kind == "nested":
        depth = rng.choice([2_000, 50_000, 200_000])
        return kind, rng.choice(["[", '{"a":']) * depth, False
    if kind == "empty":
        return kind, rng.choice(["", " ", "\n\n", "\t", "\x00", "\ufeff"]), False
    if kind == "not_object":
        scalars = ["null", "true", "42", '"a string"', "[]", json.dumps([valid])]
        return kind, rng.choice(scalars), False
    if kind == "fence":
        return kind, "```json\n" + text[: len(text) // 2] + "\n```", False
    if kind == "salvage_prose":
        return kind, f"Here you go:\n```json\n{text}\n```\nHope that helps!", True
    # a lone surrogate escape inside a valid object: decoded to U+FFFD, never stored raw
    plain = [k for k in valid if schema.model_fields[k].annotation is str and valid[k]]
    key = plain[0] if plain else None
    if key is None:
        return "salvage_prose", "Answer: " + text, True
    return kind, text.replace(json.dumps(valid[key]), '"\\ud800 broken \\udfff"', 1), True


def test_generator_covers_every_kind(fuzz: Any) -> None:
    rng = random.Random(7)
    kinds = Counter(bad_reply(rng, s)[0] for s in VALID for _ in range(fuzz.bad_replies // 10))
    assert set(kinds) == set(KINDS), kinds


@pytest.mark.parametrize("schema", list(VALID), ids=lambda s: s.__name__)
def test_every_bad_reply_is_rejected_or_repaired_never_raised(
    schema: type[BaseModel], fuzz: Any
) -> None:
    from lamina.testing import ScriptedChatModel

    rng = random.Random(f"{schema.__name__}-1")
    messages = [HumanMessage("decide")]
    tally: Counter[str] = Counter()
    for _ in range(fuzz.bad_replies):
        kind, reply, salvageable = bad_reply(rng, schema)
        model = ScriptedChatModel().enqueue(reply)
        caller = StructuredCaller(model, max_attempts=1)
        try:
            result = caller.invoke(schema, messages, node="fuzz")
        except StructuredOutputError as e:
            assert not salvageable, (kind, reply[:200], e)
            (attempt,) = e.attempts
            assert not attempt.ok and attempt.error and attempt.node == "fuzz"
            tally["rejected"] += 1
            continue
        assert salvageable, (kind, reply[:300], result.value)
        assert [c.ok for c in result.calls] == [True]
        result.value.model_dump_json()  # storable: no lone surrogates survived
        if kind != "salvage_surrogate":  # the intended object, never a fragment of it
            assert result.value == schema.model_validate(VALID[schema]), (kind, reply)
        assert result.calls[0].repaired == (kind in REPAIRED), (kind, reply)
        assert (result.repairs, result.reasks) == (int(kind in REPAIRED), 0)
        tally["repaired" if kind in REPAIRED else "salvaged"] += 1
    assert sum(tally.values()) == fuzz.bad_replies


def test_async_caller_counts_every_failed_attempt(fuzz: Any) -> None:
    import asyncio

    from lamina.testing import ScriptedChatModel

    rng = random.Random("async")
    bad = [
        r for _, r, ok in (bad_reply(rng, schemas.ConstructionDraft) for _ in range(60)) if not ok
    ][:30]
    model = ScriptedChatModel().enqueue(*bad)
    caller = StructuredCaller(model, max_attempts=3)
    failures = 0
    for _ in range(len(bad) // 3):
        with pytest.raises(StructuredOutputError) as info:
            asyncio.run(caller.ainvoke(schemas.ConstructionDraft, [HumanMessage("x")], node="n"))
        assert [a.ok for a in info.value.attempts] == [False, False, False]
        failures += len(info.value.attempts)
    assert failures == len(bad) // 3 * 3 and model.replies == bad[failures:]


# ---------------------------------------------------------------- end to end
class RuleModel(FakeChatModel):
    """Healthy replies per schema title; the ``broken`` schema gets bad replies."""

    broken: str = ""
    bad: list[str] = Field(default_factory=list)
    healthy: dict[str, Callable[[list[BaseMessage]], str]] = Field(default_factory=dict)
    seen: Counter[str] = Field(default_factory=Counter)

    def next_reply(self, prompt: list[BaseMessage], **kwargs: Any) -> Reply:
        schema = requested_schema(prompt) or {}
        title = str(schema.get("title", "")) or requested_line_format(prompt) or ""
        self.seen[title] += 1
        if title == self.broken:
            return self.bad[(self.seen[title] - 1) % len(self.bad)]
        rule = self.healthy.get(title)
        return rule(prompt) if rule else json.dumps(minimal_instance(schema))


def _labels(messages: list[BaseMessage], prefix: str) -> list[str]:
    import re

    return sorted(set(re.findall(rf"\[({prefix}\d+)\]", str(messages[-2].content))))


def _fact_label(messages: list[BaseMessage]) -> str:
    import re

    found = re.search(r"\[(m\d+)\] \(fact,", str(messages[-2].content))
    return found[1] if found else "m1"


def _healthy() -> dict[str, Callable[[list[BaseMessage]], str]]:
    def construction(messages: list[BaseMessage]) -> str:
        import re

        found = re.findall(r"\[(t\d+)\] [^:\n]+: ([^\n]+)", str(messages[-1].content))
        notes = [f"F|{label}|Alice|{text}" for label, text in found]
        return "\n".join(["T|Alice and Mount Tam", "S|Alice hiked Mount Tam with Bob.", *notes])

    def updates(messages: list[BaseMessage]) -> str:
        pairs = _labels(messages, "p")[:1]
        return json.dumps({"verdicts": [{"pair": p, "outdated": True} for p in pairs]})

    judged = Counter[str]()

    def judge(messages: list[BaseMessage]) -> str:
        """Insufficient first (a rewrite and a retry), then a conflict (a refresh)."""
        judged["calls"] += 1
        if judged["calls"] % 2:
            return json.dumps({"sufficient": False, "missing": ""})  # names nothing: rewrite
        fact = _fact_label(messages)
        other = next(label for label in _labels(messages, "m") if label != fact)
        conflicting = [other, fact]  # a turn against the fact, whatever the context's order
        return json.dumps({"sufficient": True, "answer": "Mount Tam", "conflicting": conflicting})

    return {
        "ConstructionLines": construction,
        "SupersessionCheck": updates,
        "BoundaryDecision": lambda m: json.dumps({"new_episode": False}),
        "DraftFirst": judge,
        "QueryRewrite": lambda m: json.dumps({"queries": ["Mount Tam hike"]}),
        "RefreshPlan": lambda m: json.dumps(
            {
                "action": "update",
                "edits": [{"label": _fact_label(m), "new_content": "Alice hiked twice"}],
            }
        ),
        "AnswerDraft": lambda m: json.dumps(
            {"answerable": True, "answer": "Mount Tam", "cited": _labels(m, "m")}
        ),
    }


SESSION_1 = ["I hiked Mount Tam with Bob on a day trip", "Mount Tam was muddy and Bob slipped"]
SESSION_2 = [
    "We hiked Mount Tam again today, another day trip",
    "Bob said Mount Tam was dry this time",
]
"""A trip in each session: the update check has a pair to ask about (same person, plans)."""
INGEST_SCHEMAS = ["BoundaryDecision", "ConstructionLines", "SupersessionCheck"]
LINE_GARBAGE = [
    "",
    "Sure! Here are the notes you asked for.",
    '{"title": "Hike", "summary": "Alice hiked."}',
    "```\nnotes\n```",
    "F|",
    "T|",
    "F|t1|",
    "X|t1|Alice|Alice hiked",
    "\u0000\u200b",
    "ConstructionLines",
]
"""Construction replies with no usable line: each is a failed attempt."""
RECALL_SCHEMAS = ["DraftFirst", "QueryRewrite", "RefreshPlan", "AnswerDraft"]
SCHEMA_BY_TITLE = {s.__name__: s for s in VALID}


def _turns(session: str, texts: list[str], day: int) -> list[dict[str, Any]]:
    return [
        {
            "speaker": "Alice",
            "text": t,
            "session_id": session,
            "turn_index": i,
            "occurred_at": T0 + timedelta(days=day, minutes=i),
        }
        for i, t in enumerate(texts)
    ]


def _bad_set(title: str, n: int) -> list[str]:
    rng = random.Random(title)
    if title == "ConstructionLines":
        return [rng.choice(LINE_GARBAGE) for _ in range(n)]
    replies = [bad_reply(rng, SCHEMA_BY_TITLE[title]) for _ in range(4 * n)]
    return [r for _, r, ok in replies if not ok][:n]


def _structured_failures(out: dict[str, Any]) -> list[Any]:
    return [
        f
        for f in out["failures"]
        if f.error.startswith(("StructuredOutputError", "no usable ConstructionLines"))
    ]


@pytest.fixture(scope="module")
def shared_store() -> ChromaMemoryStore:
    return ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())


@pytest.mark.parametrize("broken", INGEST_SCHEMAS)
def test_ingest_survives_a_schema_that_only_gets_bad_replies(
    shared_store: ChromaMemoryStore, broken: str, fuzz: Any
) -> None:
    ns = f"ingest-{broken}"
    model = RuleModel(broken=broken, bad=_bad_set(broken, 30), healthy=_healthy())
    graph = build_ingest_graph(chat_model=model, store=shared_store).compile()
    ctx = MemoryContext(namespace=ns, trigger_policy="eager")  # asks the boundary judge
    outs = [
        graph.invoke({"turns": _turns("s1", SESSION_1, 0), "session_closed": True}, context=ctx),
        graph.invoke({"turns": _turns("s2", SESSION_2, 1), "session_closed": True}, context=ctx),
    ]
    assert model.seen[broken] > 0, f"the scenario never asked for {broken}"
    raw = shared_store.get("raw", ns)
    assert sorted(r.text for r in raw) == sorted(SESSION_1 + SESSION_2)
    assert all(isinstance(r, RawTurn) and r.speaker == "Alice" for r in raw)
    calls = [c for out in outs for c in out["llm_calls"]]
    failed_calls = [c for c in calls if c.schema == broken and not c.ok]
    assert len(failed_calls) == model.seen[broken]  # every bad reply is counted
    assert all(c.error for c in failed_calls)
    steps = [f for out in outs for f in _structured_failures(out)]
    assert len(steps) == model.seen[broken] // 3  # one failed step per 3 attempts
    assert {c.ok for c in calls if c.schema != broken} <= {True}


@pytest.mark.parametrize("broken", RECALL_SCHEMAS)
def test_recall_survives_a_schema_that_only_gets_bad_replies(
    shared_store: ChromaMemoryStore, broken: str
) -> None:
    ns = f"recall-{broken}"
    shared_store.add(
        ns,
        [
            RawTurn(
                namespace=ns,
                text=t,
                speaker="Alice",
                session_id="s1",
                turn_index=i,
                occurred_at=T0 + timedelta(minutes=i),
            )
            for i, t in enumerate(SESSION_1)
        ],
    )
    shared_store.add(
        ns, [FactRecord(namespace=ns, text="Alice hiked Mount Tam once", occurred_at=T0)]
    )
    before = sorted(r.text for r in shared_store.get("raw", ns))
    model = RuleModel(broken=broken, bad=_bad_set(broken, 30), healthy=_healthy())
    graph = build_recall_graph(chat_model=model, store=shared_store).compile(
        checkpointer=InMemorySaver()
    )
    out = graph.invoke(
        {"question": "Where did Alice hike?"},
        {"configurable": {"thread_id": ns}},
        context=MemoryContext(namespace=ns),
    )
    assert model.seen[broken] > 0
    assert sorted(r.text for r in shared_store.get("raw", ns)) == before
    failed_calls = [c for c in out["llm_calls"] if c.schema == broken and not c.ok]
    assert len(failed_calls) == model.seen[broken]
    assert len(_structured_failures(out)) == model.seen[broken] // 3
    assert isinstance(out["answer"], str) and out["answer"]
    if broken == "AnswerDraft":
        assert out["refused"] is True and out["citations"] == []
