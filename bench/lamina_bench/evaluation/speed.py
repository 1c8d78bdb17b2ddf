"""How fast the chat model generates on this host now: one fixed request, timed.

Construction and answer times scale with the model's generation speed, and a shared or
throttled host can halve it from one hour to the next. A benchmark that reports seconds
per turn records this probe before and after its run, so two runs' times can be read
against the speed each host had.

The probe asks for a long, predictable reply (counting), capped at ``max_tokens``, twice:
the second request finds its prompt in the server's cache, so its wall time is nearly
all generation. The speed is the second reply's output tokens over its wall time.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage

from lamina.errors import InvalidInputError, InvalidTypeError

PROBE_PROMPT = "Write the whole numbers from 1 to 400 in words, separated by commas."
"""A request whose reply is long and nearly the same for any instruction-tuned model."""


@dataclass(frozen=True)
class SpeedProbe:
    """One probe: the timed (second) request's output tokens and wall seconds."""

    output_tokens: int
    seconds: float

    @property
    def tokens_per_second(self) -> float:
        """Output tokens over wall seconds (0.0 when nothing was timed)."""
        return self.output_tokens / self.seconds if self.seconds > 0 else 0.0

    def as_dict(self) -> dict[str, float]:
        """The figures, rounded, for a benchmark's JSON."""
        row = asdict(self)
        row["seconds"] = round(self.seconds, 2)
        row["tokens_per_second"] = round(self.tokens_per_second, 2)
        return row


def probe_speed(
    model: BaseChatModel,
    *,
    max_tokens: int = 128,
    clock: Callable[[], float] = time.perf_counter,
) -> SpeedProbe:
    """Time the fixed request on ``model`` (send it once untimed, then timed).

    Raises:
        InvalidTypeError: ``max_tokens`` is not an int.
        InvalidInputError: ``max_tokens`` is below 8, or the reply reports no output
            token count (``usage_metadata``), so no speed can be computed.
    """
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int):
        raise InvalidTypeError(f"max_tokens must be an int, got {type(max_tokens).__name__}")
    if max_tokens < 8:
        raise InvalidInputError(f"max_tokens must be >= 8, got {max_tokens}")
    capped = model.bind(max_tokens=max_tokens)
    messages = [HumanMessage(PROBE_PROMPT)]
    capped.invoke(messages)  # fills the prompt cache
    started = clock()
    reply = capped.invoke(messages)
    seconds = clock() - started
    usage = getattr(reply, "usage_metadata", None) or {}
    tokens = usage.get("output_tokens")
    if not isinstance(tokens, int):
        raise InvalidInputError(
            "the model's reply reports no output token count (usage_metadata), so its "
            "speed cannot be measured"
        )
    return SpeedProbe(output_tokens=tokens, seconds=seconds)
