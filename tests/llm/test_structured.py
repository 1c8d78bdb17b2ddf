import asyncio

import pytest
from langchain_core.messages import HumanMessage
from pydantic import BaseModel, Field

from lamina.llm.structured import (
    StructuredCaller,
    StructuredOutputError,
    parse_json_payload,
)
from lamina.prompts.structured import JSON_INSTRUCTIONS, REPAIR_REQUEST
from lamina.testing import ScriptedChatModel


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


@pytest.mark.parametrize("text", ["", "   ", "no json here", "{broken", "```\n{'a': 1\n```"])
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
    model = ScriptedChatModel().enqueue("nope", RuntimeError("HTTP 502"), '{"action": 1}')
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


# --------------------------------------------------------------- json-repair
@pytest.mark.parametrize(
    "reply",
    [
        "{'action': 'pass', 'reason': 'enough'}",  # single quotes
        '{action: "pass", reason: "enough"}',  # unquoted keys
        '{"action": "pass", "reason": "enough",}',  # trailing comma
        'Sure:\n```json\n{"action": "pass" "reason": "enough"}\n```',  # missing comma
    ],
)
def test_broken_syntax_is_repaired_before_any_reask(reply: str) -> None:
    model = ScriptedChatModel().enqueue(reply)
    result = StructuredCaller(model).invoke(Verdict, ASK, node="judge")
    assert result.value == Verdict(action="pass", reason="enough")
    (call,) = result.calls
    assert call.ok and call.repaired and not call.reask
    assert (result.repairs, result.reasks) == (1, 0)
    assert len(model.calls) == 1  # repaired, not asked again


def test_a_valid_reply_is_not_counted_as_repaired() -> None:
    result = StructuredCaller(ScriptedChatModel().enqueue(VALID)).invoke(Verdict, ASK, node="j")
    assert (result.repairs, result.reasks) == (0, 0)


def test_repairs_and_reasks_are_counted_separately() -> None:
    model = ScriptedChatModel().enqueue('{"action": "pass",', "{'action': 'pass', 'reason': 'ok'}")
    result = StructuredCaller(model).invoke(Verdict, ASK, node="judge")
    assert [(c.ok, c.repaired, c.reask) for c in result.calls] == [
        (False, False, False),
        (True, True, True),
    ]
    assert (result.repairs, result.reasks) == (1, 1)


def test_a_truncated_reply_is_never_read_as_one_of_its_inner_objects() -> None:
    from lamina.llm.replies import TruncatedReplyError

    text = '{"facts": [{"text": "a"}, {"text": "b"'
    with pytest.raises(TruncatedReplyError):
        parse_json_payload(text)
    with pytest.raises(TruncatedReplyError):
        parse_json_payload("Here it is:\n```json\n" + text + "\n```")


class Fact(BaseModel):
    text: str


class Facts(BaseModel):
    facts: list[Fact]


def test_a_truncated_reply_is_reasked_not_repaired_into_a_shorter_object() -> None:
    full = '{"facts": [{"text": "a"}, {"text": "b"}]}'
    model = ScriptedChatModel().enqueue(full[:-8], full)
    result = StructuredCaller(model).invoke(Facts, ASK, node="constructor")
    assert [f.text for f in result.value.facts] == ["a", "b"]
    first, second = result.calls
    assert not first.ok and "cut off" in (first.error or "") and not first.repaired
    assert second.ok and second.reask


def test_a_reply_cut_at_the_token_limit_says_so() -> None:
    from langchain_core.messages import AIMessage

    class Cut(ScriptedChatModel):
        def _generate(self, messages, stop=None, run_manager=None, **kwargs):  # type: ignore[no-untyped-def]
            result = super()._generate(messages, stop, run_manager, **kwargs)
            message = result.generations[0].message
            assert isinstance(message, AIMessage)
            message.response_metadata = {"finish_reason": "length"}
            return result

    model = Cut().enqueue('{"action": "pass", "reason": "the memories sa')
    with pytest.raises(StructuredOutputError) as info:
        StructuredCaller(model, max_attempts=1).invoke(Verdict, ASK, node="judge")
    assert "token limit" in str(info.value)
    # the re-ask asks for a shorter reply, not just a valid one
    model = Cut().enqueue(
        '{"action": "pass", "reason": "the memories sa', '{"action": "pass", "reason": "ok"}'
    )
    result = StructuredCaller(model, max_attempts=2).invoke(Verdict, ASK, node="judge")
    assert result.value.action == "pass"
    assert "much shorter" in str(model.calls[1][-1].content)


# ------------------------------------------------------------- unreachable
def _connection_refused() -> Exception:
    import httpx
    import openai

    request = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    return openai.APIConnectionError(request=request)


def _status(code: int) -> Exception:
    import httpx
    import openai

    request = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    response = httpx.Response(code, request=request)
    return openai.APIStatusError(f"Error code: {code}", response=response, body=None)


@pytest.mark.parametrize(
    "error",
    [
        _connection_refused(),
        _status(401),
        _status(404),
        _status(500),
        _status(503),
        ConnectionRefusedError(111, "Connection refused"),
    ],
    ids=["refused", "401", "404", "500", "503", "builtin"],
)
def test_an_unreachable_model_is_not_asked_again(error: Exception) -> None:
    model = ScriptedChatModel().enqueue(error, VALID)
    with pytest.raises(StructuredOutputError) as info:
        StructuredCaller(model, max_attempts=3).invoke(Verdict, ASK, node="judge")
    (attempt,) = info.value.attempts
    assert attempt.unreachable and not attempt.ok
    assert info.value.unreachable
    assert model.replies == [VALID]  # the second reply was never asked for


def test_a_bad_request_is_not_unreachable_and_is_retried() -> None:
    model = ScriptedChatModel().enqueue(_status(400), VALID)
    result = StructuredCaller(model).invoke(Verdict, ASK, node="judge")
    assert [c.unreachable for c in result.calls] == [False, False]
    assert result.value.action == "pass"


def test_malformed_output_that_exhausts_the_attempts_is_logged_at_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    model = ScriptedChatModel().enqueue("nope", "still nope")
    with caplog.at_level("WARNING", logger="lamina"):
        with pytest.raises(StructuredOutputError):
            StructuredCaller(model, max_attempts=2).invoke(Verdict, ASK, node="judge")
    (record,) = [r for r in caplog.records if r.levelname == "WARNING"]
    assert "judge" in record.getMessage() and "Verdict" in record.getMessage()
