"""The host speed probe (``lamina_bench.evaluation.speed``): what it times and what it refuses."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from lamina.errors import InvalidInputError, InvalidTypeError
from lamina_bench.evaluation.speed import PROBE_PROMPT, probe_speed


class CountingModel(BaseChatModel):
    """Replies with ``tokens`` output tokens; records each call's ``max_tokens``."""

    tokens: int | None = 100
    calls: list[dict[str, Any]] = []

    @property
    def _llm_type(self) -> str:
        return "counting"

    def _generate(self, messages: list[BaseMessage], stop: Any = None, **kw: Any) -> ChatResult:
        self.calls.append({"text": messages[-1].content, "max_tokens": kw.get("max_tokens")})
        n = self.tokens
        usage = None if n is None else {"input_tokens": 0, "output_tokens": n, "total_tokens": n}
        message = AIMessage("one, two, three", usage_metadata=usage)
        return ChatResult(generations=[ChatGeneration(message=message)])


def test_the_second_request_is_timed_and_both_are_capped() -> None:
    model = CountingModel(tokens=100, calls=[])
    ticks = iter([10.0, 14.0])  # the timed request starts at 10 s and ends at 14 s
    probe = probe_speed(model, max_tokens=100, clock=lambda: next(ticks))
    assert [c["max_tokens"] for c in model.calls] == [100, 100]
    assert [c["text"] for c in model.calls] == [PROBE_PROMPT, PROBE_PROMPT]
    assert probe.output_tokens == 100
    assert probe.seconds == 4.0
    assert probe.tokens_per_second == 25.0
    assert probe.as_dict() == {"output_tokens": 100, "seconds": 4.0, "tokens_per_second": 25.0}


def test_no_time_measured_gives_zero_speed_not_a_division_error() -> None:
    probe = probe_speed(CountingModel(tokens=5, calls=[]), clock=lambda: 3.0)
    assert probe.tokens_per_second == 0.0


def test_a_reply_without_a_token_count_is_refused() -> None:
    with pytest.raises(InvalidInputError, match="no output token count"):
        probe_speed(CountingModel(tokens=None, calls=[]))


@pytest.mark.parametrize(
    ("bad", "error"),
    [(0, InvalidInputError), (7, InvalidInputError), (True, InvalidTypeError),
     (12.5, InvalidTypeError), ("64", InvalidTypeError)],
)  # fmt: skip
def test_a_bad_cap_is_refused_before_any_call(bad: Any, error: type[Exception]) -> None:
    model = CountingModel(calls=[])
    with pytest.raises(error, match="max_tokens"):
        probe_speed(model, max_tokens=bad)
    assert model.calls == []
    assert model.calls == []
