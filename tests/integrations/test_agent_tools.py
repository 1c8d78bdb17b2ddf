"""Memory tools inside a real create_agent loop, with a scripted tool-calling model."""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import BaseMessage, ToolMessage

from lamina.errors import InvalidInputError, InvalidTypeError
from lamina.integrations import memory_tools
from lamina.memory import Memory
from lamina.stores import ChromaMemoryStore
from lamina.testing import FakeEmbeddings, SchemaChatModel, ToolCallingChatModel, tool_call

ALICE = "user:alice"
BOB = "user:bob"


@dataclass
class UserContext:
    user_id: str | None = None


@pytest.fixture
def memory() -> Memory:
    store = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    mem = Memory(store=store, chat_model=SchemaChatModel())
    mem.add("I adopted a greyhound called Biscuit", namespace=ALICE)
    mem.add("My cat is called Tom and he hates baths", namespace=BOB)
    return mem


def run_tools(
    memory: Memory,
    context: object,
    *replies: Any,
    schema: type | None = UserContext,
    **tool_options: Any,
) -> tuple[list[ToolMessage], ToolCallingChatModel, dict[str, Any]]:
    """Run one agent turn whose scripted model makes the given tool calls then says done."""
    model = ToolCallingChatModel().enqueue(*replies, "done")
    agent = create_agent(model, tools=memory_tools(memory, **tool_options), context_schema=schema)
    out = agent.invoke({"messages": [{"role": "user", "content": "hi"}]}, context=context)
    tool_messages = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    return tool_messages, model, out


def raw_texts(memory: Memory, namespace: str) -> list[str]:
    return [r.text for r in memory.inspect(namespace=namespace, granularity="raw")["raw"]]


def test_tools_are_bound_under_their_names(memory: Memory) -> None:
    _, model, out = run_tools(memory, UserContext(ALICE))
    assert model.bound_tools == ["search_memory", "remember", "forget"]
    assert out["messages"][-1].content == "done"


def test_search_reads_only_the_context_namespace(memory: Memory) -> None:
    call = tool_call("search_memory", {"query": "pet called"})
    (alice,), _, _ = run_tools(memory, UserContext(ALICE), call)
    (bob,), _, _ = run_tools(memory, UserContext(BOB), call)
    assert alice.status == "success" and "Biscuit" in alice.content and "Tom" not in alice.content
    assert bob.status == "success" and "Tom" in bob.content and "Biscuit" not in bob.content
    # compact lines with granularity and id, so the model can cite or forget them
    assert re.match(r"^\[raw [0-9a-f]{32}\] \(\d{4}-\d{2}-\d{2}\) user: ", str(alice.content))


def test_namespace_chosen_by_the_model_is_ignored(memory: Memory) -> None:
    sneaky = {"query": "cat called", "namespace": BOB, "user_id": BOB}
    search, remember = (
        tool_call("search_memory", sneaky),
        tool_call("remember", {"text": "likes green tea", "namespace": BOB, "user_id": BOB}),
    )
    (found, stored), _, _ = run_tools(memory, UserContext(ALICE), search, remember)
    assert "Tom" not in found.content and "Biscuit" in found.content
    assert stored.status == "success"
    assert "likes green tea" in raw_texts(memory, ALICE)
    assert "likes green tea" not in raw_texts(memory, BOB)


def test_missing_namespace_is_a_tool_error_not_a_crash(memory: Memory) -> None:
    (message,), model, out = run_tools(
        memory, UserContext(None), tool_call("search_memory", {"query": "dog"})
    )
    assert message.status == "error"
    assert "no memory namespace" in message.content and "user_id" in message.content
    assert out["messages"][-1].content == "done"
    assert len(model.calls) == 2  # the model saw the error and answered


def test_malformed_namespace_is_a_tool_error(memory: Memory) -> None:
    (message,), _, _ = run_tools(
        memory, {"user_id": "alice; drop"}, tool_call("remember", {"text": "x"})
    )
    assert message.status == "error" and "invalid namespace" in message.content


def test_remember_stores_a_note_in_the_namespace(memory: Memory) -> None:
    (message,), _, _ = run_tools(
        memory, UserContext(ALICE), tool_call("remember", {"text": "Prefers window seats"})
    )
    (turn,) = [
        r
        for r in memory.inspect(namespace=ALICE, granularity="raw")["raw"]
        if r.text == "Prefers window seats"
    ]
    assert message.content == f"Remembered as [raw {turn.id}]."
    assert turn.speaker == "assistant"


def test_remember_with_a_custom_speaker_and_a_namespace_function(memory: Memory) -> None:
    context = {"tenant": "acme", "user": "carol"}
    run_tools(
        memory,
        context,
        tool_call("remember", {"text": "Carol works nights"}),
        schema=None,
        namespace_from=lambda ctx: f"{ctx['tenant']}/{ctx['user']}",
        note_speaker="notes",
    )
    (turn,) = memory.inspect(namespace="acme/carol", granularity="raw")["raw"]
    assert (turn.text, turn.speaker) == ("Carol works nights", "notes")


def _forget_first_hit(messages: list[BaseMessage]) -> Any:
    last = messages[-1]
    assert isinstance(last, ToolMessage)
    memory_id = re.search(r"\[raw ([0-9a-f]{32})\]", str(last.content))
    assert memory_id is not None, last.content
    return tool_call("forget", {"memory_id": memory_id.group(1)})


def test_forget_by_id_from_a_search_result(memory: Memory) -> None:
    (_, forgot), _, _ = run_tools(
        memory,
        UserContext(ALICE),
        tool_call("search_memory", {"query": "greyhound"}),
        _forget_first_hit,
    )
    assert forgot.status == "success" and forgot.content.startswith("Deleted raw: ")
    assert raw_texts(memory, ALICE) == []
    assert raw_texts(memory, BOB)  # the other tenant is untouched


def test_forget_cannot_delete_another_tenants_memory(memory: Memory) -> None:
    (bob_turn,) = memory.inspect(namespace=BOB, granularity="raw")["raw"]
    (forgot,), _, _ = run_tools(
        memory, UserContext(ALICE), tool_call("forget", {"memory_id": bob_turn.id})
    )
    assert forgot.content == (
        f"No memory was deleted. Not found in this user's memory: {bob_turn.id}."
    )
    assert raw_texts(memory, BOB) == [bob_turn.text]


def test_forget_by_subject(memory: Memory) -> None:
    (forgot,), _, _ = run_tools(memory, UserContext(BOB), tool_call("forget", {"subject": "Tom"}))
    assert forgot.status == "success" and "Deleted raw" in forgot.content
    assert raw_texts(memory, BOB) == []


def test_forget_needs_exactly_one_selector(memory: Memory) -> None:
    (both, neither), _, _ = run_tools(
        memory,
        UserContext(ALICE),
        tool_call("forget", {"memory_id": "abc", "subject": "dog"}),
        tool_call("forget", {}),
    )
    for message in (both, neither):
        assert (
            message.status == "error" and "exactly one of memory_id or subject" in message.content
        )
    assert raw_texts(memory, ALICE)


def test_a_failing_store_is_a_tool_error(memory: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("chroma is down")

    monkeypatch.setattr(memory.store, "search", broken)
    (message,), _, out = run_tools(
        memory, UserContext(ALICE), tool_call("search_memory", {"query": "dog"})
    )
    assert message.status == "error" and "memory is unavailable (RuntimeError)" in message.content
    assert out["messages"][-1].content == "done"


def test_tools_run_async(memory: Memory) -> None:
    model = ToolCallingChatModel().enqueue(
        tool_call("search_memory", {"query": "pet called"}),
        tool_call("remember", {"text": "Walks Biscuit at seven"}),
        "done",
    )
    agent = create_agent(model, tools=memory_tools(memory), context_schema=UserContext)
    out = asyncio.run(
        agent.ainvoke({"messages": [{"role": "user", "content": "hi"}]}, context=UserContext(BOB))
    )
    found, stored = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert "Tom" in found.content and "Biscuit" not in found.content
    assert stored.content.startswith("Remembered as [raw ")
    assert "Walks Biscuit at seven" in raw_texts(memory, BOB)


@pytest.mark.parametrize(
    ("options", "error"),
    [
        ({"namespace_from": 42}, InvalidTypeError),
        ({"namespace_from": " "}, InvalidTypeError),
        ({"k": 0}, InvalidInputError),
        ({"k": 2.5}, InvalidTypeError),  # accepted, then every search failed
        ({"k": True}, InvalidTypeError),
        ({"k": "3"}, InvalidTypeError),  # a bare TypeError from the comparison
        ({"note_speaker": ""}, InvalidInputError),
        ({"note_speaker": None}, InvalidTypeError),  # an AttributeError
    ],
)
def test_bad_options_fail_at_construction(
    memory: Memory, options: dict[str, Any], error: type[Exception]
) -> None:
    with pytest.raises(error):
        memory_tools(memory, **options)
