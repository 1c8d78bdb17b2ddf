"""Yes/no questions answered by the probability of the first reply token.

A small model's generated verdict leans one way whatever it is shown (asked whether a
newer statement makes an older one out of date, the local 1.5B model answered "no" to
every pair). Its first token's probabilities still carry the signal, so a question is
asked for one token with log-probabilities, and the decision compares two opposite
questions' probabilities of "yes": a lean towards one word is the same in both, so no
threshold is fitted to one model. A server without log-probabilities falls back to the
word it wrote.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage

from ...core.calls import LLMCall
from .deps import StepLog
from .journal import journal_key

TOP_LOGPROBS = 10
"""Alternatives read for the answer token (OpenAI's maximum is 20)."""
MEMO_SIZE = 4096
"""Answers kept per graph (``NodeDeps.memo``) before the oldest is dropped."""


def p_yes(message: Any) -> float | None:
    """P("yes") / (P("yes") + P("no")) of the reply's first token; None without log-probs."""
    metadata = getattr(message, "response_metadata", None) or {}
    content = (metadata.get("logprobs") or {}).get("content") or []
    if not content:
        return None
    mass: dict[str, float] = {}
    for option in content[0].get("top_logprobs") or []:
        word = str(option.get("token", "")).strip().casefold()
        mass[word] = mass.get(word, 0.0) + math.exp(float(option.get("logprob", -math.inf)))
    yes, no = mass.get("yes", 0.0), mass.get("no", 0.0)
    return yes / (yes + no) if yes + no else None


def ask_yes(log: StepLog, messages: Sequence[BaseMessage], *, version: str, schema: str) -> float:
    """The probability of "yes" to one question; 1.0 or 0.0 from the words without log-probs.

    Answers are kept in the graph's memo and, when the graph has one, its reply journal
    (keyed by ``version``, the prompts' version); the call is recorded as ``schema``.
    """
    deps = log.deps
    key = journal_key(deps.model_name, version, 1, messages)
    if key in deps.memo:
        return float(deps.memo[key])
    kept = deps.journal.get(key) if deps.journal is not None else None
    if kept is not None:
        return float(kept)
    started = time.perf_counter()
    bound = deps.caller.model.bind(max_tokens=1, logprobs=True, top_logprobs=TOP_LOGPROBS)
    message = bound.invoke(list(messages))
    usage = getattr(message, "usage_metadata", None) or {}
    log.calls.append(
        LLMCall(
            node=log.node,
            schema=schema,
            attempt=1,
            method="logprobs",
            ok=True,
            latency_s=time.perf_counter() - started,
            prompt_tokens=usage.get("input_tokens"),
            completion_tokens=usage.get("output_tokens"),
        )
    )
    p = p_yes(message)
    if p is None:  # a model without log-probabilities: its word decides
        p = 1.0 if str(message.content).strip().casefold().startswith("yes") else 0.0
    if deps.journal is not None:
        deps.journal.put(key, repr(p))
    if len(deps.memo) >= MEMO_SIZE:
        deps.memo.pop(next(iter(deps.memo)))
    deps.memo[key] = p
    return p


__all__ = ["MEMO_SIZE", "TOP_LOGPROBS", "ask_yes", "p_yes"]
