"""Custom instructions: the application's rules reach the construction call's prompt.

``MemoryConfig(instructions=...)`` (or ``context["instructions"]``) sets them for every
call, ``Memory.add(..., instructions=...)`` for one. They go into the system message,
after the prompt's own rules; without them the prompt is unchanged (so earlier kept
replies stay valid). Bad instructions are refused before anything is stored.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from langchain_core.messages import BaseMessage

from lamina import Memory, MemoryConfig
from lamina.errors import InvalidInputError
from lamina.prompts.construction import CONSTRUCTION_FORMAT, DATA_RULE
from lamina.records import Granularity
from lamina.stores import ChromaMemoryStore
from lamina.testing import FakeEmbeddings, SchemaChatModel

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
    return MemoryConfig(chroma_mode="ephemeral", context=context, **kw)


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
    config = eager(instructions=NEVER_HEALTH, context={"construction_format": "json"})
    _, model = run(config)
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
