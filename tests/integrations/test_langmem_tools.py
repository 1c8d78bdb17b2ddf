"""LangMem's memory tools on LaminaStore, inside LangGraph's prebuilt react agent.

A scripted chat model (lamina.testing.ToolCallingChatModel) issues the tool calls a
real model would: create a memory, search for it, delete it. LangMem's tools reach the
store through get_store(), so everything lands in lamina, scoped per user.
"""

from __future__ import annotations

import asyncio
import json
import warnings
from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langgraph.graph.state import CompiledStateGraph
from langgraph.store.base import InvalidNamespaceError
from langmem import create_manage_memory_tool, create_search_memory_tool

from lamina.integrations.langgraph_store import LaminaStore
from lamina.stores import ChromaMemoryStore
from lamina.testing import FakeEmbeddings, ToolCallingChatModel, tool_call

NAMESPACE = ("memories", "{langgraph_user_id}")


@pytest.fixture
def store() -> LaminaStore:
    return LaminaStore(ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings()))


def _agent(model: ToolCallingChatModel, store: LaminaStore) -> CompiledStateGraph:
    from langgraph.prebuilt import create_react_agent

    tools = [
        create_manage_memory_tool(namespace=NAMESPACE),
        create_search_memory_tool(namespace=NAMESPACE),
    ]
    with warnings.catch_warnings():  # create_react_agent is deprecated in LangGraph v1
        warnings.simplefilter("ignore", DeprecationWarning)
        return create_react_agent(model, tools=tools, store=store)


def _user(name: str) -> dict[str, Any]:
    return {"configurable": {"langgraph_user_id": name}}


def _echo_tool_result(prefix: str) -> Callable[[list[BaseMessage]], AIMessage]:
    """A scripted reply that repeats the last tool result, as a model would summarise it."""

    def reply(messages: list[BaseMessage]) -> AIMessage:
        last = messages[-1]
        assert isinstance(last, ToolMessage)
        return AIMessage(f"{prefix}{last.content}")

    return reply


def _found(text: str) -> list[dict[str, Any]]:
    """The memories in a search_memory tool result (LangMem returns them as JSON)."""
    return list(json.loads(text.split(":", 1)[1]))


def _ask(agent: CompiledStateGraph, user: str, text: str) -> str:
    out = agent.invoke({"messages": [("user", text)]}, _user(user))
    return str(out["messages"][-1].content)


def test_add_search_delete_through_lamina(store: LaminaStore) -> None:
    """manage_memory creates a memory, search_memory finds it by meaning, manage_memory
    deletes it by id: each step reads and writes the lamina store."""
    model = ToolCallingChatModel().enqueue(
        tool_call("manage_memory", {"content": "Alice prefers green tea", "action": "create"}),
        "Noted.",
        tool_call("search_memory", {"query": "which tea does alice prefer"}),
        _echo_tool_result("found:"),
    )
    agent = _agent(model, store)
    assert _ask(agent, "alice", "Remember that I prefer green tea.") == "Noted."
    [item] = store.search(("memories", "alice"))
    assert item.value == {"content": "Alice prefers green tea"}
    assert store.list_namespaces() == [("memories", "alice")]

    found = _found(_ask(agent, "alice", "Which tea do I like?"))
    assert [m["value"]["content"] for m in found] == ["Alice prefers green tea"]
    assert found[0]["key"] == item.key and found[0]["score"] is not None

    model.enqueue(
        tool_call("manage_memory", {"action": "delete", "id": item.key}),
        _echo_tool_result("done: "),
    )
    assert _ask(agent, "alice", "Forget my tea preference.") == f"done: Deleted memory {item.key}"
    assert store.search(("memories", "alice")) == []
    assert store.get(("memories", "alice"), item.key) is None
    assert store.list_namespaces() == []


def test_update_replaces_the_memory(store: LaminaStore) -> None:
    """manage_memory's update action rewrites the value under the same id."""
    model = ToolCallingChatModel().enqueue(
        tool_call("manage_memory", {"content": "Alice lives in Lyon", "action": "create"}),
        "ok",
    )
    agent = _agent(model, store)
    _ask(agent, "alice", "I live in Lyon.")
    [item] = store.search(("memories", "alice"))
    model.enqueue(
        tool_call(
            "manage_memory",
            {"content": "Alice moved to Nantes", "action": "update", "id": item.key},
        ),
        "updated",
    )
    _ask(agent, "alice", "I moved to Nantes.")
    [after] = store.search(("memories", "alice"))
    assert after.key == item.key and after.value == {"content": "Alice moved to Nantes"}
    assert after.created_at == item.created_at and after.updated_at > item.updated_at


def test_isolated_per_user_namespace(store: LaminaStore) -> None:
    """Each user's tools work in their own namespace: bob's search never returns alice's
    memory, even when it asks for it by its words, and deleting one leaves the other."""
    model = ToolCallingChatModel().enqueue(
        tool_call("manage_memory", {"content": "Alice's door code is 4312", "action": "create"}),
        "ok",
        tool_call("manage_memory", {"content": "Bob's door code is 9876", "action": "create"}),
        "ok",
        tool_call("search_memory", {"query": "Alice's door code 4312"}),
        _echo_tool_result("found:"),
        tool_call("search_memory", {"query": "door code"}),
        _echo_tool_result("found:"),
    )
    agent = _agent(model, store)
    _ask(agent, "alice", "My door code is 4312.")
    _ask(agent, "bob", "My door code is 9876.")
    bob_sees = _found(_ask(agent, "bob", "What is Alice's door code?"))
    assert [m["value"]["content"] for m in bob_sees] == ["Bob's door code is 9876"]
    assert all(m["namespace"] == ["memories", "bob"] for m in bob_sees)
    alice_sees = _found(_ask(agent, "alice", "What is my door code?"))
    assert [m["value"]["content"] for m in alice_sees] == ["Alice's door code is 4312"]
    assert store.list_namespaces() == [("memories", "alice"), ("memories", "bob")]

    [bobs] = store.search(("memories", "bob"))
    model.enqueue(tool_call("manage_memory", {"action": "delete", "id": bobs.key}), "gone")
    _ask(agent, "alice", "Delete that id.")  # alice's namespace has no such key
    assert store.get(("memories", "bob"), bobs.key) is not None
    assert [i.value["content"] for i in store.search(("memories", "alice"))] == [
        "Alice's door code is 4312"
    ]


def test_async_agent(store: LaminaStore) -> None:
    """The same through ainvoke: LangMem's async tools call aput/asearch/adelete."""
    model = ToolCallingChatModel().enqueue(
        tool_call("manage_memory", {"content": "Carol plays the cello", "action": "create"}),
        "ok",
        tool_call("search_memory", {"query": "cello"}),
        _echo_tool_result("found:"),
    )
    agent = _agent(model, store)

    async def scenario() -> str:
        await agent.ainvoke({"messages": [("user", "I play the cello")]}, _user("carol"))
        out = await agent.ainvoke({"messages": [("user", "What do I play?")]}, _user("carol"))
        return str(out["messages"][-1].content)

    found = _found(asyncio.run(scenario()))
    assert [m["value"]["content"] for m in found] == ["Carol plays the cello"]
    [item] = store.search(("memories", "carol"))
    model.enqueue(tool_call("manage_memory", {"action": "delete", "id": item.key}), "gone")
    asyncio.run(agent.ainvoke({"messages": [("user", "forget it")]}, _user("carol")))
    assert store.search(("memories", "carol")) == []


def test_bad_namespace_writes_nothing(store: LaminaStore) -> None:
    """A user id that makes an invalid namespace label (a '.') is refused with LangGraph's
    InvalidNamespaceError (the prebuilt ToolNode re-raises tool errors other than bad
    arguments), and nothing is written."""
    model = ToolCallingChatModel().enqueue(
        tool_call("manage_memory", {"content": "x", "action": "create"}), "unreached"
    )
    agent = _agent(model, store)
    with pytest.raises(InvalidNamespaceError, match="periods"):
        _ask(agent, "alice.smith", "remember x")
    assert store.list_namespaces() == []
    assert store.search(()) == []
