"""examples/memory_agent.py end to end with a scripted model and a real Memory."""

from __future__ import annotations

import importlib.util
import io
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest
from langchain_core.messages import BaseMessage, SystemMessage
from langchain_openai import ChatOpenAI

from lamina import Memory, MemoryConfig
from lamina.stores import ChromaMemoryStore
from lamina.testing import FakeEmbeddings, SchemaChatModel, ToolCallingChatModel, tool_call

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "memory_agent.py"


@pytest.fixture(scope="module")
def example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("memory_agent_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve their module by name
    spec.loader.exec_module(module)
    return module


def recalled(messages: list[BaseMessage]) -> str:
    """The <memories> block the middleware gave the model ('' when there is none)."""
    system = messages[0]
    assert isinstance(system, SystemMessage)
    _, _, block = system.text.partition("\n<memories>\n")
    return block


def answer_from_memory(pattern: str) -> object:
    """A scripted reply that answers only from what the middleware recalled."""

    def respond(messages: list[BaseMessage]) -> str:
        found = re.search(pattern, recalled(messages))
        return found.group(1) + "." if found else "I don't know."

    return respond


def memory_over(store: ChromaMemoryStore) -> Memory:
    return Memory(store=store, chat_model=SchemaChatModel())


def test_agent_remembers_across_conversations(example: ModuleType) -> None:
    memory = memory_over(ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings()))
    model = ToolCallingChatModel().enqueue(
        tool_call("remember", {"text": "The user's greyhound is called Biscuit"}),
        "What a lovely name!",
        answer_from_memory(r"greyhound is called (\w+)"),
        answer_from_memory(r"greyhound is called (\w+)"),
    )
    agent = example.build_agent(model, memory)

    first, errors = example.reply(
        agent, "I adopted a greyhound called Biscuit", user_id="user:alice", thread_id="c1"
    )
    assert (first, errors) == ("What a lovely name!", [])
    assert model.bound_tools == ["search_memory", "remember", "forget"]
    assert recalled(model.calls[0]) == ""  # nothing known yet
    assert model.calls[0][0].text.startswith(example.SYSTEM_PROMPT)

    answer, _ = example.reply(agent, "What is my dog called?", user_id="user:alice", thread_id="c2")
    assert answer == "Biscuit."
    # another user, same agent: nothing of alice's is recalled
    other, _ = example.reply(agent, "What is my dog called?", user_id="user:bob", thread_id="c3")
    assert other == "I don't know."


def test_main_chats_and_memories_survive_a_restart(example: ModuleType, tmp_path: Path) -> None:
    path = tmp_path / "chroma"
    model = ToolCallingChatModel().enqueue("Nice, have fun climbing!")
    out = io.StringIO()
    code = example.main(
        ["--user", "alice", "--thread", "monday"],
        model=model,
        memory=memory_over(ChromaMemoryStore.persistent(path, embeddings=FakeEmbeddings())),
        stdin=io.StringIO("I go bouldering every Sunday\n\n/quit\nnever read\n"),
        stdout=out,
    )
    assert code == 0
    assert out.getvalue() == "assistant> Nice, have fun climbing!\n"
    assert len(model.calls) == 1

    # a new process: a new Memory over the same Chroma folder, a new conversation
    model = ToolCallingChatModel().enqueue(answer_from_memory(r"I go (\w+) every Sunday"))
    out = io.StringIO()
    example.main(
        ["--user", "alice"],
        model=model,
        memory=memory_over(ChromaMemoryStore.persistent(path, embeddings=FakeEmbeddings())),
        stdin=io.StringIO("Which sport do I do on Sundays?\n"),
        stdout=out,
    )
    assert out.getvalue() == "assistant> bouldering.\n"


def test_chat_model_comes_from_the_environment(example: ModuleType) -> None:
    env = {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "OPENAI_MODEL": "tiny"}
    model = example.chat_model_from_config(MemoryConfig.from_env(env))
    assert isinstance(model, ChatOpenAI)
    assert (model.openai_api_base, model.model_name) == ("http://127.0.0.1:9/v1", "tiny")
    local = example.chat_model_from_config(MemoryConfig.from_env({}))
    assert local.openai_api_base == example.LOCAL_SERVER_URL


def test_main_builds_its_own_memory_from_the_environment(
    example: ModuleType, tmp_path: Path
) -> None:
    env = {"LAMINA_STORE": "memory", "LAMINA_DATA_DIR": str(tmp_path)}
    out = io.StringIO()
    assert example.main([], env=env, stdin=io.StringIO(""), stdout=out) == 0
    assert out.getvalue() == ""


def test_main_needs_a_model_with_an_injected_memory(example: ModuleType) -> None:
    memory = memory_over(ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings()))
    with pytest.raises(ValueError, match="model="):
        example.main([], memory=memory, stdin=io.StringIO(""))
