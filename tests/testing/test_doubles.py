"""lamina.testing.doubles: one fake chat model, whose reply queue every fake shares."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from pydantic import BaseModel

import lamina
from lamina.llm.structured import StructuredCaller
from lamina.testing import (
    FakeChatModel,
    SchemaChatModel,
    ScriptedChatModel,
    ToolCallingChatModel,
    tool_call,
)
from lamina.testing.faults import FaultSchedule, FaultyChatModel, InjectedFault

PROMPT = [HumanMessage("what did Maya bake")]


PACKAGE = Path(lamina.__file__).parent
NOT_PACKAGE = {"tests", "benchmarks", "build", "examples", ".venv"}


def test_only_the_fake_chat_model_writes_a_generate() -> None:
    """Every chat model in the package answers through FakeChatModel._generate."""
    defining = set()
    for path in PACKAGE.rglob("*.py"):
        if NOT_PACKAGE & set(path.relative_to(PACKAGE).parts):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                methods = {f.name for f in node.body if isinstance(f, ast.FunctionDef)}
                if methods & {"_generate", "_agenerate", "_stream", "_astream"}:
                    defining.add(f"{path.relative_to(PACKAGE)}:{node.name}")
    assert defining == {"testing/doubles.py:FakeChatModel"}


def test_replies_come_in_order_as_text_messages_with_usage() -> None:
    model = ScriptedChatModel().enqueue("first", lambda prompt: f"{len(prompt)} message")
    first, second = model.invoke(PROMPT), model.invoke(PROMPT)
    assert (first.content, second.content) == ("first", "1 message")
    assert first.usage_metadata == {"input_tokens": 4, "output_tokens": 1, "total_tokens": 5}
    assert model.calls == [PROMPT, PROMPT]


def test_a_queued_exception_is_raised_and_an_empty_queue_says_so() -> None:
    model = FakeChatModel(when_empty="no model may be called here").enqueue(TimeoutError("slow"))
    with pytest.raises(TimeoutError, match="slow"):
        model.invoke(PROMPT)
    with pytest.raises(AssertionError, match="no model may be called here"):
        model.invoke(PROMPT)
    with pytest.raises(AssertionError, match="ScriptedChatModel ran out of replies"):
        ScriptedChatModel().invoke(PROMPT)


def test_the_schema_model_answers_the_schema_the_helper_asked_for() -> None:
    class Verdict(BaseModel):
        sufficient: bool
        reason: str

    model = SchemaChatModel().script("Verdict", '{"sufficient": true, "reason": "ok"}')
    caller = StructuredCaller(model, method="prompt")
    scripted = caller.invoke(Verdict, PROMPT, node="judge").value
    minimal = caller.invoke(Verdict, PROMPT, node="judge").value
    assert scripted == Verdict(sufficient=True, reason="ok")
    assert minimal == Verdict(sufficient=False, reason="x")  # nothing queued: minimal
    assert model.count("Verdict") == 2 and model.completions[0].startswith('{"sufficient"')


def test_tool_calls_are_replayed_as_queued() -> None:
    model = ToolCallingChatModel().enqueue(tool_call("search", {"q": "cake"}), "done")
    bound = model.bind_tools([])
    call, done = bound.invoke(PROMPT), bound.invoke(PROMPT)
    assert isinstance(call, AIMessage) and call.tool_calls[0]["args"] == {"q": "cake"}
    assert done.content == "done"


def test_the_faulty_model_fails_on_schedule_and_otherwise_asks_the_inner_model() -> None:
    inner = ScriptedChatModel().enqueue("healthy")
    schedule = FaultSchedule(on=frozenset({1}))
    model = FaultyChatModel(inner=inner, schedule=schedule)
    with pytest.raises(InjectedFault):
        model.invoke(PROMPT)
    assert model.invoke(PROMPT).content == "healthy" and schedule.fired == 1
    garbled = FaultyChatModel(inner=inner, schedule=FaultSchedule(), fault="malformed")
    assert garbled.invoke(PROMPT).content == '{"title": "cut off'
