"""``lamina mcp``: the five tools through the MCP SDK's own client, and in a LangChain agent.

Every session is a real MCP client talking to the server (in memory, over streamable
HTTP on a local port, or, in the integration test, over stdio to ``lamina mcp``).
A malformed call gets an MCP tool error and the store is compared with a snapshot.
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import BaseMessage, ToolMessage
from mcp import ClientSession, types
from mcp.shared.memory import create_connected_server_and_client_session

from lamina import Memory
from lamina.cli import main
from lamina.config import MemoryConfig
from lamina.errors import MissingDependencyError, NamespaceError
from lamina.integrations import mcp_server
from lamina.integrations.mcp_server import NamespacePolicy, build_server
from lamina.stores import ChromaMemoryStore
from lamina.testing import (
    FakeEmbeddings,
    SchemaChatModel,
    ToolCallingChatModel,
    store_snapshot,
    tool_call,
)

ALICE = "user:alice"
BOB = "user:bob"
TEAM = "team:acme/carol"
NAMESPACES = (ALICE, BOB, TEAM, "default")
TOOLS = ["add_memory", "search_memory", "ask_memory", "forget", "list_memories"]


@pytest.fixture
def store() -> ChromaMemoryStore:
    return ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())


@pytest.fixture
def model() -> SchemaChatModel:
    return SchemaChatModel()


@pytest.fixture
def memory(store: ChromaMemoryStore, model: SchemaChatModel) -> Memory:
    memory = Memory(store=store, chat_model=model)
    memory.add("I adopted a greyhound called Biscuit", namespace=ALICE, infer=False)
    memory.add("My cat is called Tom and he hates baths", namespace=BOB, infer=False)
    return memory


def snapshot(store: ChromaMemoryStore) -> dict[str, Any]:
    """Every namespace's records, profile and audit log."""
    return store_snapshot(store, NAMESPACES)


Scenario = Callable[[ClientSession], Awaitable[Any]]


def run(memory: Memory, policy: NamespacePolicy, scenario: Scenario) -> Any:
    """Run ``scenario`` with an MCP client session connected to a fresh server."""

    async def main() -> Any:
        server = build_server(memory, policy)
        async with create_connected_server_and_client_session(server) as session:
            return await scenario(session)

    return asyncio.run(main())


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


PINNED = NamespacePolicy(default=ALICE)


# ------------------------------------------------------------------ tools
def test_the_server_lists_five_tools_with_strict_schemas(memory: Memory) -> None:
    async def scenario(session: ClientSession) -> Any:
        return await session.list_tools(), session

    listed, _ = run(memory, PINNED, scenario)
    assert [t.name for t in listed.tools] == TOOLS
    for tool in listed.tools:
        assert tool.inputSchema["additionalProperties"] is False
        assert "namespace" not in tool.inputSchema["properties"]  # pinned: nothing to choose
        assert tool.description
    hints = {t.name: t.annotations for t in listed.tools}
    assert hints["search_memory"].readOnlyHint and hints["forget"].destructiveHint


def test_add_search_list_and_forget_through_mcp(memory: Memory, store: ChromaMemoryStore) -> None:
    async def scenario(session: ClientSession) -> dict[str, types.CallToolResult]:
        out = {}
        out["add"] = await session.call_tool(
            "add_memory",
            {"text": "Alice prefers green tea", "metadata": {"topic": "food"}, "infer": False},
        )
        out["search"] = await session.call_tool(
            "search_memory", {"query": "green tea", "filters": {"topic": "food"}, "top_k": 3}
        )
        out["list"] = await session.call_tool("list_memories", {"granularity": "raw"})
        stored = out["add"].structuredContent
        assert stored is not None
        [record] = store.get("raw", ALICE, stored["new_ids"])
        assert record.text == "Alice prefers green tea" and record.metadata == {"topic": "food"}
        assert record.speaker == "assistant"  # type: ignore[attr-defined]
        out["forget"] = await session.call_tool("forget", {"memory_id": stored["new_ids"][0]})
        out["after"] = await session.call_tool("search_memory", {"query": "green tea"})
        return out

    out = run(memory, PINNED, scenario)
    assert not any(r.isError for r in out.values())
    added = out["add"].structuredContent
    assert added is not None and added["namespace"] == ALICE and len(added["new_ids"]) == 1
    found = out["search"].structuredContent
    assert found is not None
    assert [m["text"] for m in found["memories"]] == ["Alice prefers green tea"]
    assert found["memories"][0]["metadata"] == {"topic": "food"}
    assert "green tea" in text_of(out["search"])
    listed = out["list"].structuredContent
    assert listed is not None
    assert {m["text"] for m in listed["memories"]} == {
        "I adopted a greyhound called Biscuit",
        "Alice prefers green tea",
    }
    forgot = out["forget"].structuredContent
    assert forgot is not None and forgot["deleted"] == {"raw": added["new_ids"]}
    assert "green tea" not in text_of(out["after"])
    assert store.get("raw", ALICE, added["new_ids"]) == []
    assert [r.text for r in store.get("raw", BOB)] == ["My cat is called Tom and he hates baths"]


def cite_biscuit(messages: list[BaseMessage]) -> str:
    """A DraftFirst reply citing the memory line that names Biscuit."""
    text = "\n".join(str(m.content) for m in messages)
    label = re.search(r"\[(m\d+)\][^\n]*Biscuit", text)
    assert label is not None, text
    return json.dumps({"sufficient": True, "answer": "Biscuit", "cited": [label.group(1)]})


def test_ask_memory_answers_with_the_facade_model_and_cites(
    memory: Memory, model: SchemaChatModel
) -> None:
    model.script("DraftFirst", cite_biscuit)

    async def scenario(session: ClientSession) -> types.CallToolResult:
        return await session.call_tool("ask_memory", {"question": "What is my dog called?"})

    result = run(memory, PINNED, scenario)
    assert not result.isError, text_of(result)
    data = result.structuredContent
    assert data is not None and data["answer"] == "Biscuit" and not data["refused"]
    assert [m["text"] for m in data["memories"]] == ["I adopted a greyhound called Biscuit"]
    assert model.count("DraftFirst") == 1
    assert "Tom" not in json.dumps(data)


def test_ask_memory_reports_an_unreachable_model_as_a_tool_error(store: ChromaMemoryStore) -> None:
    from langchain_openai import ChatOpenAI

    url = f"http://127.0.0.1:{_free_port()}/v1"  # nothing listens there
    model = ChatOpenAI(base_url=url, api_key="x", model="qwen2.5", max_retries=0)
    memory = Memory(store=store, chat_model=model)
    memory.add("I adopted a greyhound called Biscuit", namespace=ALICE, infer=False)

    async def scenario(session: ClientSession) -> types.CallToolResult:
        return await session.call_tool("ask_memory", {"question": "What is my dog called?"})

    result = run(memory, PINNED, scenario)
    assert result.isError
    assert text_of(result).startswith(
        f"ask_memory failed: could not reach the chat model 'qwen2.5' at {url}"
    )


# -------------------------------------------------------------- namespaces
def test_a_pinned_server_never_reaches_another_namespace(
    memory: Memory, store: ChromaMemoryStore
) -> None:
    bob_id = store.get("raw", BOB)[0].id

    async def scenario(session: ClientSession) -> dict[str, types.CallToolResult]:
        return {
            "search": await session.call_tool("search_memory", {"query": "cat Tom baths"}),
            "list": await session.call_tool("list_memories", {}),
            "forget_bob": await session.call_tool("forget", {"memory_id": bob_id}),
            "forget_subject": await session.call_tool("forget", {"subject": "Tom"}),
            "choose": await session.call_tool("search_memory", {"query": "cat", "namespace": BOB}),
        }

    before = snapshot(store)[f"{BOB}/raw"]
    out = run(memory, PINNED, scenario)
    assert "Tom" not in text_of(out["search"]) and "Tom" not in text_of(out["list"])
    assert not out["forget_bob"].isError and "Not found" in text_of(out["forget_bob"])
    assert out["choose"].isError and "namespace" in text_of(out["choose"])
    assert snapshot(store)[f"{BOB}/raw"] == before


def test_per_call_namespaces_only_where_the_policy_allows(
    memory: Memory, store: ChromaMemoryStore
) -> None:
    policy = NamespacePolicy(default=ALICE, allowed=("team:acme/*",))

    async def scenario(session: ClientSession) -> dict[str, Any]:
        tools = await session.list_tools()
        return {
            "schema": tools.tools[0].inputSchema,
            "team": await session.call_tool(
                "add_memory", {"text": "Standup at 9", "namespace": TEAM, "infer": False}
            ),
            "default": await session.call_tool("search_memory", {"query": "greyhound"}),
            "bob": await session.call_tool("search_memory", {"query": "cat", "namespace": BOB}),
            "bob_add": await session.call_tool(
                "add_memory", {"text": "x", "namespace": BOB, "infer": False}
            ),
            "bad": await session.call_tool("list_memories", {"namespace": "no spaces allowed"}),
        }

    bob_before = snapshot(store)[f"{BOB}/raw"]
    out = run(memory, policy, scenario)
    assert "namespace" in out["schema"]["properties"]
    assert not out["team"].isError and [r.text for r in store.get("raw", TEAM)] == ["Standup at 9"]
    assert "Biscuit" in text_of(out["default"])
    assert out["bob"].isError and "not allowed by this server" in text_of(out["bob"])
    assert out["bob_add"].isError and snapshot(store)[f"{BOB}/raw"] == bob_before
    assert out["bad"].isError and "invalid namespace" in text_of(out["bad"])


def test_the_policy_is_checked_when_it_is_built() -> None:
    with pytest.raises(NamespaceError, match="needs a namespace"):
        NamespacePolicy()
    with pytest.raises(NamespaceError, match="invalid allowed namespace pattern"):
        NamespacePolicy(allowed=("user:*:x*",))
    with pytest.raises(NamespaceError, match="invalid namespace"):
        NamespacePolicy(default="has space")
    policy = NamespacePolicy(allowed=("user:*",))
    assert policy.resolve("user:zed") == "user:zed"
    with pytest.raises(NamespaceError, match="no default namespace"):
        policy.resolve(None)
    assert NamespacePolicy(allowed=("*",)).permits("anything:at/all")


# --------------------------------------------------------- malformed calls
MALFORMED: list[tuple[str, str, dict[str, Any], str]] = [
    ("missing text", "add_memory", {}, "text"),
    ("text not a str", "add_memory", {"text": 42, "infer": False}, "text"),
    ("empty text", "add_memory", {"text": "", "infer": False}, "text"),
    ("unknown key", "add_memory", {"text": "x", "user_id": BOB, "infer": False}, "user_id"),
    ("nested metadata", "add_memory", {"text": "x", "metadata": {"a": {"b": 1}}}, "metadata"),
    ("null metadata value", "add_memory", {"text": "x", "metadata": {"a": None}}, "metadata"),
    ("infer not a bool", "add_memory", {"text": "x", "infer": "no"}, "infer"),
    ("top_k too large", "search_memory", {"query": "x", "top_k": 1000}, "top_k"),
    ("threshold above one", "search_memory", {"query": "x", "threshold": 2}, "threshold"),
    ("bad filter operator", "search_memory", {"query": "x", "filters": {"a": {"gt": 1}}}, "eq"),
    ("forget both", "forget", {"memory_id": "a", "subject": "b"}, "exactly one"),
    ("forget neither", "forget", {}, "exactly one"),
    ("unknown tool", "drop_everything", {}, "drop_everything"),
    ("bad granularity", "list_memories", {"granularity": "facts"}, "granularity"),
    ("question missing", "ask_memory", {}, "question"),
]


@pytest.mark.parametrize(
    ("case", "tool", "arguments", "says"), MALFORMED, ids=[m[0] for m in MALFORMED]
)
def test_a_malformed_call_is_an_mcp_error_and_writes_nothing(
    memory: Memory,
    store: ChromaMemoryStore,
    model: SchemaChatModel,
    case: str,
    tool: str,
    arguments: dict[str, Any],
    says: str,
) -> None:
    before = snapshot(store)

    async def scenario(session: ClientSession) -> types.CallToolResult:
        return await session.call_tool(tool, arguments)

    result = run(memory, PINNED, scenario)
    assert result.isError, text_of(result)
    assert says in text_of(result)
    assert snapshot(store) == before
    assert model.calls == []


def test_the_handler_refuses_what_the_schema_check_would_let_through(memory: Memory) -> None:
    """The pydantic models check again: a client that skips the schema still gets errors."""
    with pytest.raises(Exception, match="metadata"):
        asyncio.run(
            mcp_server.call_tool(
                memory, PINNED, "assistant", "add_memory", {"text": "x", "metadata": {"a": [1]}}
            )
        )
    with pytest.raises(NamespaceError, match="pinned"):
        asyncio.run(
            mcp_server.call_tool(memory, PINNED, "assistant", "list_memories", {"namespace": BOB})
        )


# ---------------------------------------------------------- LangChain agent
def test_langchain_mcp_adapters_load_the_tools_into_an_agent(
    memory: Memory, store: ChromaMemoryStore
) -> None:
    from langchain_mcp_adapters.tools import load_mcp_tools

    async def scenario(session: ClientSession) -> tuple[list[ToolMessage], ToolCallingChatModel]:
        tools = await load_mcp_tools(session)
        model = ToolCallingChatModel().enqueue(
            tool_call("add_memory", {"text": "Alice is allergic to peanuts", "infer": False}),
            tool_call("search_memory", {"query": "allergic peanuts"}),
            tool_call("forget", {"subject": "peanuts"}),
            tool_call("search_memory", {"query": "cat baths Tom"}),
            tool_call("add_memory", {"text": "x", "namespace": BOB}),
            "done",
        )
        agent = create_agent(model, tools=tools)
        out = await agent.ainvoke({"messages": [{"role": "user", "content": "hi"}]})
        return [m for m in out["messages"] if isinstance(m, ToolMessage)], model

    bob_before = snapshot(store)[f"{BOB}/raw"]
    messages, model = run(memory, PINNED, scenario)
    assert model.bound_tools == TOOLS
    added, found, forgot, other, sneaky = messages
    assert added.status == "success" and "Remembered as [raw" in str(added.content)
    assert "peanuts" in str(found.content)
    assert "Deleted raw" in str(forgot.content)
    assert "Tom" not in str(other.content)
    assert sneaky.status == "error"
    assert store.get("raw", ALICE, where={"speaker": "assistant"}) == []
    assert snapshot(store)[f"{BOB}/raw"] == bob_before


# ----------------------------------------------------------------- transports
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_streamable_http_transport(memory: Memory, store: ChromaMemoryStore) -> None:
    import uvicorn
    from mcp.client.streamable_http import streamable_http_client

    port = _free_port()
    app = mcp_server.http_app(build_server(memory, PINNED), path="/mcp")

    @asynccontextmanager
    async def serving() -> AsyncIterator[None]:
        server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
        task = asyncio.create_task(server.serve())
        while not server.started:
            await asyncio.sleep(0.05)
        try:
            yield
        finally:
            server.should_exit = True
            await task

    async def scenario() -> tuple[types.CallToolResult, types.CallToolResult]:
        async with serving(), streamable_http_client(f"http://127.0.0.1:{port}/mcp") as streams:
            read, write, _ = streams
            async with ClientSession(read, write) as session:
                await session.initialize()
                added = await session.call_tool("add_memory", {"text": "Tea at 5", "infer": False})
                found = await session.call_tool("search_memory", {"query": "tea"})
                return added, found

    added, found = asyncio.run(scenario())
    assert not added.isError and "Tea at 5" in text_of(found)
    assert [r.text for r in store.get("raw", ALICE) if r.text == "Tea at 5"] == ["Tea at 5"]


def test_lamina_mcp_builds_the_policy_from_its_flags(
    store: ChromaMemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    served: list[Any] = []

    async def fake_stdio(server: Any) -> None:
        served.append(server)

    monkeypatch.setattr(mcp_server, "run_stdio", fake_stdio)
    factory = lambda config: Memory(config=config, store=store, chat_model=SchemaChatModel())  # noqa: E731
    assert main(["mcp", "--namespace", ALICE], memory_factory=factory) == 0
    assert main(["mcp", "--allow-namespace", "user:*"], memory_factory=factory) == 0
    pinned, open_ = served

    async def tools_of(server: Any) -> list[types.Tool]:
        async with create_connected_server_and_client_session(server) as session:
            return (await session.list_tools()).tools

    assert "namespace" not in asyncio.run(tools_of(pinned))[0].inputSchema["properties"]
    assert "namespace" in asyncio.run(tools_of(open_))[0].inputSchema["properties"]


def test_a_missing_mcp_package_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [n for n in sys.modules if n == "mcp" or n.startswith("mcp.")]:
        monkeypatch.delitem(sys.modules, name)
    for name in [n for n in sys.modules if n.startswith("lamina.integrations.mcp_server")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "mcp", None)  # makes `import mcp` fail
    with pytest.raises(MissingDependencyError, match=r"pip install 'lamina\[mcp\]'"):
        import lamina.integrations.mcp_server  # noqa: F401


def test_import_lamina_does_not_import_mcp() -> None:
    code = (
        "import sys, lamina; lamina.Memory; import lamina.integrations; "
        "import lamina.cli; lamina.cli.build_parser(); "
        "print(sorted(m for m in sys.modules if m == 'mcp' or m.startswith('mcp.')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert out.stdout.strip() == "[]"


@pytest.mark.integration
def test_stdio_server_end_to_end(tmp_path: Path) -> None:
    """``lamina mcp`` as a subprocess, through the SDK's stdio client (real store)."""
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "lamina",
            "mcp",
            "--namespace",
            ALICE,
            "--data-dir",
            str(tmp_path / "data"),
            "--base-url",
            "http://127.0.0.1:9/v1",  # never called: nothing here needs a model
        ],
    )

    async def scenario() -> tuple[str, str, str]:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            await session.call_tool("add_memory", {"text": "Boat trip on Sunday", "infer": False})
            found = await session.call_tool("search_memory", {"query": "boat trip"})
            bad = await session.call_tool("add_memory", {"text": "x", "namespace": BOB})
            listed = await session.call_tool("list_memories", {})
            return text_of(found), text_of(bad), text_of(listed)

    found, bad, listed = asyncio.run(scenario())
    assert "Boat trip on Sunday" in found and "Boat trip on Sunday" in listed
    assert "namespace" in bad
    config = MemoryConfig(data_dir=tmp_path / "data", openai_base_url="http://127.0.0.1:9/v1")
    with Memory(config=config) as memory:
        assert [r.text for r in memory.get_all(namespace=ALICE)] == ["Boat trip on Sunday"]
        assert memory.get_all(namespace=BOB) == []
