"""``LLMCall``: the record of one attempt of one structured LLM call.

Graph state accumulates these (``llm_calls``), results report them and the structured
helper in :mod:`lamina.llm.structured` writes them, so the type lives below all three.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LLMCall:
    """One attempt of one structured call, for cost accounting and debugging.

    Token counts are the ones the server reported (``usage``); None when it sent none.
    """

    node: str
    schema: str
    attempt: int
    method: str
    ok: bool
    latency_s: float
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    error: str | None = None
    repaired: bool = False
    """The reply's JSON syntax was broken and json-repair fixed it (no re-ask needed)."""
    unreachable: bool = False
    """The request never reached the model (refused, timed out, HTTP 401/403/404/5xx)."""

    @property
    def reask(self) -> bool:
        """Whether this attempt asked the model again after an earlier one failed."""
        return self.attempt > 1
