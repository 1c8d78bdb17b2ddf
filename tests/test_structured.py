import asyncio

import pytest
from langchain_core.messages import HumanMessage
from pydantic import BaseModel, Field

from memstrata.agents.structured import (
    StructuredCaller,
    StructuredOutputError,
    parse_json_payload,
)
from memstrata.prompts.structured import JSON_INSTRUCTIONS, REPAIR_REQUEST
from memstrata.testing import ScriptedChatModel


class Verdict(BaseModel):
    """A judge decision."""

    action: str = Field(description="pass, retry or refresh")
    reason: str


ASK = [HumanMessage("decide")]
VALID = '{"action": "pass", "reason": "enough"}'


@pytest.mark.parametrize(
    "text",
    [
        VALID,
        f"```json\n{VALID}\n```",
        f"Sure! Here is the JSON:\n{VALID}\nHope that helps.",
        f"  {VALID}  trailing {{not json",
    ],
)
def test_tolerant_parsing(text: str) -> None:
    assert parse_json_payload(text) == {"action": "pass", "reason": "enough"}


@pytest.mark.parametrize("text", ["", "   ", "no json here", "{broken", "```\n{'a': 1}\n```"])
def test_unparseable_text_raises(text: str) -> None:
    with pytest.raises(ValueError):
        parse_json_payload(text)


def test_first_valid_reply_is_returned_with_usage() -> None:
    model = ScriptedChatModel().enqueue(f"```json\n{VALID}\n```")
    result = StructuredCaller(model).invoke(Verdict, ASK, node="judge")
    assert result.value == Verdict(action="pass", reason="enough")
    (call,) = result.calls
    assert call.ok and call.node == "judge" and call.schema == "Verdict"
    assert call.method == "prompt"  # the scripted model has no native structured output
    assert call.prompt_tokens and call.completion_tokens == 6  # whitespace words of the reply
    assert call.latency_s >= 0
    sent = model.calls[0]
    assert sent[0].content == "decide"
    assert '"action"' in str(sent[-1].content)  # the schema was put in the prompt
    assert str(sent[-1].content).startswith(JSON_INSTRUCTIONS.template.split("{")[0])


@pytest.mark.parametrize(
    "bad",
    ["", "I think we should pass.", '{"action": "pass"}', '{"action": 3, "reason": []}', "[1, 2]"],
)
def test_invalid_reply_is_retried_with_the_error_shown(bad: str) -> None:
    model = ScriptedChatModel().enqueue(bad, VALID)
    result = StructuredCaller(model).invoke(Verdict, ASK, node="judge")
    assert result.value.action == "pass"
    assert [c.ok for c in result.calls] == [False, True]
    repair = model.calls[1][-1]
    assert str(repair.content).startswith(REPAIR_REQUEST.template.split("{")[0])
    assert result.calls[0].error and result.calls[0].error in str(repair.content)
    assert model.calls[1][-2].content == bad  # the model sees its own bad reply


def test_exceptions_are_retried_and_counted() -> None:
    model = ScriptedChatModel().enqueue(TimeoutError("read timed out"), VALID)
    result = StructuredCaller(model).invoke(Verdict, ASK, node="judge")
    assert result.value.reason == "enough"
    assert "TimeoutError" in (result.calls[0].error or "")


def test_gives_up_with_one_error_carrying_the_attempts() -> None:
    model = ScriptedChatModel().enqueue("nope", ConnectionError("HTTP 502"), '{"action": 1}')
    with pytest.raises(StructuredOutputError) as excinfo:
        StructuredCaller(model, max_attempts=3).invoke(Verdict, ASK, node="judge")
    err = excinfo.value
    assert len(err.attempts) == 3 and not any(a.ok for a in err.attempts)
    assert err.last_output == '{"action": 1}'
    assert "Verdict" in str(err) and "HTTP 502" in str(err)
    assert model.replies == []  # no more calls than max_attempts


def test_async_twin() -> None:
    model = ScriptedChatModel().enqueue("garbage", VALID)
    result = asyncio.run(StructuredCaller(model).ainvoke(Verdict, ASK, node="answer"))
    assert result.value.action == "pass" and len(result.calls) == 2


def test_bad_settings() -> None:
    with pytest.raises(ValueError, match="max_attempts"):
        StructuredCaller(ScriptedChatModel(), max_attempts=0)


def test_prompt_templates_take_the_variables_the_helper_supplies() -> None:
    assert set(JSON_INSTRUCTIONS.input_variables) == {"schema"}
    assert set(REPAIR_REQUEST.input_variables) == {"error"}


class NativeModel(ScriptedChatModel):
    """Pretends to have native structured output, like ChatOpenAI with json_schema."""

    methods: list[str] = []

    def with_structured_output(self, schema, *, include_raw=False, **kwargs):  # type: ignore[no-untyped-def,override]
        from langchain_core.runnables import RunnableLambda

        self.methods.append(kwargs["method"])

        def run(messages):  # type: ignore[no-untyped-def]
            raw = self.invoke(messages)
            try:
                return {"raw": raw, "parsed": schema.model_validate_json(raw.content)}
            except Exception as e:
                return {"raw": raw, "parsed": None, "parsing_error": e}

        return RunnableLambda(run)


@pytest.mark.parametrize("method", ["json_schema", "json_mode"])
def test_native_structured_output_is_used_when_available(method: str) -> None:
    model = NativeModel(methods=[]).enqueue(VALID)
    result = StructuredCaller(model, method=method).invoke(Verdict, ASK, node="judge")  # type: ignore[arg-type]
    assert result.value.action == "pass"
    assert model.methods == [method] and result.calls[0].method == method
    assert len(model.calls[0]) == 1  # no JSON instructions added to the prompt


def test_native_parse_failure_falls_back_to_tolerant_parsing() -> None:
    model = NativeModel(methods=[]).enqueue(f"Here you go: {VALID}")
    result = StructuredCaller(model).invoke(Verdict, ASK, node="judge")
    assert result.value.reason == "enough" and len(result.calls) == 1


class _LengthError(Exception):
    """Like openai.LengthFinishReasonError: carries the completion and its usage."""

    def __init__(self) -> None:
        super().__init__("length limit was reached")
        usage = type("Usage", (), {"prompt_tokens": 177, "completion_tokens": 256})()
        self.completion = type("Completion", (), {"usage": usage})()


def test_native_exception_falls_back_to_prompt_json_and_keeps_usage() -> None:
    class Failing(NativeModel):
        def with_structured_output(self, schema, *, include_raw=False, **kwargs):  # type: ignore[no-untyped-def,override]
            from langchain_core.runnables import RunnableLambda

            def boom(messages):  # type: ignore[no-untyped-def]
                raise _LengthError()

            return RunnableLambda(boom)

    failing = Failing(methods=[]).enqueue(VALID)
    result = StructuredCaller(failing).invoke(Verdict, ASK, node="judge")
    assert [c.method for c in result.calls] == ["json_schema", "prompt"]
    assert (result.calls[0].prompt_tokens, result.calls[0].completion_tokens) == (177, 256)
    assert '"action"' in str(failing.calls[0][-1].content)  # the fallback asked for JSON
