"""Custom instructions: the application's rules reach the construction call's prompt.

``MemoryConfig(instructions=...)`` (or ``context["instructions"]``) sets them for every
call, ``Memory.add(..., instructions=...)`` for one. They go into the system message,
after the prompt's own rules; without them the prompt is unchanged (so earlier kept
replies stay valid). Bad instructions are refused before anything is stored.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage

from lamina import Memory, MemoryConfig
from lamina.agents.common.deps import NodeDeps, StepLog
from lamina.agents.ingest.extraction.withholding import breaks_rule, rule_topics, withhold
from lamina.core.context import MemoryContext
from lamina.errors import InvalidInputError
from lamina.graphs import ResearchArms
from lamina.graphs.ingest import build_ingest_graph
from lamina.llm.structured import StructuredCaller
from lamina.prompts.construction import CONSTRUCTION_FORMAT, DATA_RULE
from lamina.prompts.withholding import WITHHELD
from lamina.records import Granularity, RawTurn
from lamina.stores import ChromaMemoryStore
from lamina.testing import FakeEmbeddings, SchemaChatModel, ScriptedChatModel

NS = "user:alice"
T0 = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)
TURNS = [
    {"role": "user", "name": "Alice", "content": "My knee surgery is on Friday"},
    {"role": "user", "name": "Alice", "content": "After that I start at the bakery in May"},
]
NEVER_HEALTH = "Never store anything about health or medical care."


def run(config: MemoryConfig, **add: Any) -> tuple[Memory, SchemaChatModel]:
    model = SchemaChatModel()
    store = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    memory = Memory(config=config, store=store, chat_model=model)
    memory.add(TURNS, namespace=NS, at=T0, session_closed=True, **add)
    return memory, model


def construction_systems(model: SchemaChatModel, title: str = CONSTRUCTION_FORMAT) -> list[str]:
    prompts: list[list[BaseMessage]] = [p for t, p in model.calls if t == title]
    assert prompts, f"no {title} call was made"
    return [str(p[0].content) for p in prompts]


def eager(**kw: Any) -> MemoryConfig:
    context = {"trigger_policy": "session", **kw.pop("context", {})}
    return MemoryConfig(store="memory", context=context, **kw)


def test_config_instructions_reach_the_construction_prompt() -> None:
    _, model = run(eager(instructions=NEVER_HEALTH))
    for system in construction_systems(model):
        assert system.endswith(NEVER_HEALTH)
        assert system.index(DATA_RULE) < system.index(NEVER_HEALTH)


def test_without_instructions_the_prompt_is_as_before() -> None:
    _, model = run(eager())
    for system in construction_systems(model):
        assert system.endswith(DATA_RULE) and "application's own rules" not in system


def test_a_call_s_instructions_win_over_the_config_s() -> None:
    _, model = run(eager(instructions=NEVER_HEALTH), instructions="Keep only plans.")
    for system in construction_systems(model):
        assert system.endswith("Keep only plans.") and NEVER_HEALTH not in system


def test_the_json_format_carries_them_too() -> None:
    model = SchemaChatModel()
    store = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    arms = ResearchArms(construction_format="json")
    graph = build_ingest_graph(chat_model=model, store=store, arms=arms).compile()
    turns = [
        {"speaker": "Alice", "text": t["content"], "occurred_at": T0, "session_id": "s1"}
        for t in TURNS
    ]
    ctx = MemoryContext(namespace=NS, trigger_policy="session", instructions=NEVER_HEALTH)
    graph.invoke({"turns": turns, "session_closed": True}, context=ctx)
    for system in construction_systems(model, "ConstructionDraft"):
        assert system.endswith(NEVER_HEALTH)


def test_braces_in_instructions_are_text() -> None:
    _, model = run(eager(instructions="Skip {anything} in braces."))
    assert all(s.endswith("Skip {anything} in braces.") for s in construction_systems(model))


@pytest.mark.parametrize(
    ("instructions", "message"),
    [("   ", "non-empty"), ("x" * 2001, "at most 2000")],
)
def test_bad_instructions_are_refused_before_anything_is_stored(
    instructions: str, message: str
) -> None:
    model = SchemaChatModel()
    store = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    memory = Memory(config=eager(), store=store, chat_model=model)
    with pytest.raises(InvalidInputError, match=message):
        memory.add(TURNS, namespace=NS, at=T0, instructions=instructions)
    assert store.count(Granularity.RAW, NS) == 0 and model.calls == []


# The rule check: a turn the application's rule forbids is withheld from construction.


def _yes_no(prompt: list[BaseMessage]) -> str:
    """A model that tells the truth about one health word in the message."""
    question = str(prompt[-1].content)
    mentions = "surgery" in question.split("</data>")[0]
    asks_free = "free of any mention" in question
    return "yes" if mentions != asks_free else "no"


def test_a_turn_the_rule_forbids_never_reaches_construction() -> None:
    model = SchemaChatModel()
    model.script("RuleTopics", '{"excluded": ["health", "medical care"]}')
    model.script("", *[_yes_no] * 8)
    store = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    memory = Memory(config=eager(instructions=NEVER_HEALTH), store=store, chat_model=model)
    memory.add(TURNS, namespace=NS, at=T0, session_closed=True)
    shown = [str(p[-1].content) for t, p in model.calls if t == CONSTRUCTION_FORMAT]
    assert shown and all("surgery" not in text for text in shown)
    assert all(WITHHELD in text and "bakery" in text for text in shown)
    raw = [r.text for r in store.get(Granularity.RAW, NS)]
    assert TURNS[0]["content"] in raw  # the raw turn itself stays stored
    assert model.count("RuleTopics") == 1


def test_without_a_rule_no_turn_is_checked() -> None:
    _, model = run(eager())
    assert model.count("RuleTopics") == 0 and model.count("") == 0


def _log(model: Any) -> StepLog:
    store = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    return StepLog(node="constructor", deps=NodeDeps(store=store, caller=StructuredCaller(model)))


def _logprob_reply(p_yes: float) -> AIMessage:
    top = [
        {"token": "Yes", "logprob": math.log(p_yes)},
        {"token": "No", "logprob": math.log(1 - p_yes)},
    ]
    logprobs = {"content": [{"token": "Yes", "logprob": math.log(p_yes), "top_logprobs": top}]}
    return AIMessage("Yes", response_metadata={"logprobs": logprobs})


def test_a_model_leaning_to_yes_is_compared_not_thresholded() -> None:
    # P(yes) 0.8 to "does it mention" and 0.9 to "is it free of": a yes-sayer's two
    # answers; the second is higher, so the turn is kept
    model = ScriptedChatModel().enqueue(_logprob_reply(0.8), _logprob_reply(0.9))
    assert not breaks_rule(_log(model), "Renovating the kitchen", ["illnesses"])
    model = ScriptedChatModel().enqueue(_logprob_reply(0.95), _logprob_reply(0.7))
    log = _log(model)
    assert breaks_rule(log, "My knee surgery is on Friday", ["injuries"])
    assert [c.schema for c in log.calls] == ["RuleCheck", "RuleCheck"]


def test_an_unanswered_check_withholds_the_turn() -> None:
    model = ScriptedChatModel().enqueue(TimeoutError("model down"))
    log = _log(model)
    assert breaks_rule(log, "Anything at all", ["illnesses"])
    assert [f.step for f in log.failures] == ["rule_check"]


def test_a_rule_that_forbids_nothing_checks_no_turn() -> None:
    model = SchemaChatModel().script("RuleTopics", '{"excluded": []}')
    log = _log(model)
    turn = RawTurn(
        text="My knee surgery is on Friday",
        speaker="Alice",
        session_id="s",
        turn_index=0,
        occurred_at=T0,
        namespace=NS,
    )
    ctx = MemoryContext(namespace=NS, instructions="Keep only plans (rule-forbids-nothing).")
    assert withhold(log, ctx, [turn]) == [turn]
    assert model.count("") == 0


def test_kinds_the_rule_does_not_name_are_not_checked() -> None:
    # asked about "only preferences and plans", the local model listed kinds the rule
    # never names; a rule about style named "English" (the probe in the commit message)
    model = SchemaChatModel().script(
        "RuleTopics", '{"excluded": ["personal information", "sensitive data"]}'
    )
    log = _log(model)
    assert rule_topics(log, "Only the user's preferences and plans.") == ()
    model = SchemaChatModel().script("RuleTopics", '{"excluded": ["salud", "English"]}')
    assert rule_topics(_log(model), "Nunca guardes datos de salud.") == ("salud",)
