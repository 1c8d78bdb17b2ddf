"""The application's "never store" rule, applied before construction reads a turn.

Saying the rule in the construction prompt is not enough for a small model: with the rule
stated, the local model wrote as many notes about the excluded topic as without it
(``benchmarks/never_store.py``). So a rule that forbids something is also enforced here:
its kinds of information are read once, each turn of an excerpt is asked about, and a
turn that mentions them is shown to construction as :data:`~lamina.prompts.withholding.WITHHELD`.
The raw turn itself stays stored; no derived record can hold what construction never saw.

Each turn is asked two opposite yes/no questions ("does it mention ...", "is it free of
...") and the first answer's probability of "yes" is compared with the second's. A model
biased towards "yes" is biased in both, so no threshold needs tuning to one model. When a
check fails, the turn is withheld: the rule is the application's promise to its users, and
a lost note costs less than a kept one it forbade.
"""

from __future__ import annotations

import hashlib
import math
import re
import time
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage
from pydantic import BaseModel, Field

from ...core.calls import LLMCall
from ...core.context import MemoryContext
from ...prompts.withholding import FREE_OF, MENTIONS, RULE_CHECK_VERSION, RULE_TOPICS, WITHHELD
from ...records.model import RawTurn
from ..common.deps import StepLog
from ..common.journal import journal_key
from ..common.names import fold

TOP_LOGPROBS = 10
"""Alternatives read for the answer token (OpenAI's maximum is 20)."""
MEMO_SIZE = 4096
"""Rule-check answers kept per graph (``NodeDeps.memo``) before the oldest is dropped."""


class RuleTopics(BaseModel):
    """The kinds of information an application's rule says must not be stored."""

    excluded: list[str] = Field(
        default_factory=list,
        description="Each kind of information the rule forbids storing, a short noun phrase.",
    )


def in_rule(topic: str, rule: str) -> bool:
    """Whether a word of ``topic`` is in ``rule``: a kind the rule names, not an added one.

    Asked about "Only the user's preferences and plans.", the local model listed "personal
    information" and "sensitive data"; about "Keep notes short.", "long".
    """
    said = set(re.findall(r"\w+", fold(rule)))
    return any(word in said for word in re.findall(r"\w{3,}", fold(topic)))


def rule_topics(log: StepLog, rule: str) -> tuple[str, ...]:
    """The kinds of information ``rule`` forbids storing (one call per rule and graph).

    When the call fails, the rule's own text stands for them: the check still runs.
    """
    key = "rule-topics:" + hashlib.sha256(rule.encode()).hexdigest()
    if key in log.deps.memo:
        return tuple(log.deps.memo[key])
    read = log.ask(RuleTopics, RULE_TOPICS.format_messages(rule=rule), "rule_topics")
    if read is None:
        return (rule.strip(),)
    topics = tuple(dict.fromkeys(t.strip() for t in read.excluded if in_rule(t, rule)))
    log.deps.memo[key] = topics
    return topics


def _p_yes(message: Any) -> float | None:
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


def _answer(log: StepLog, messages: Sequence[BaseMessage]) -> float:
    """The probability of "yes" to one question; 1.0 or 0.0 from the words without log-probs."""
    deps = log.deps
    key = journal_key(deps.model_name, RULE_CHECK_VERSION, 1, messages)
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
            schema="RuleCheck",
            attempt=1,
            method="logprobs",
            ok=True,
            latency_s=time.perf_counter() - started,
            prompt_tokens=usage.get("input_tokens"),
            completion_tokens=usage.get("output_tokens"),
        )
    )
    p = _p_yes(message)
    if p is None:  # a model without log-probabilities: its word decides
        p = 1.0 if str(message.content).strip().casefold().startswith("yes") else 0.0
    if deps.journal is not None:
        deps.journal.put(key, repr(p))
    if len(deps.memo) >= MEMO_SIZE:
        deps.memo.pop(next(iter(deps.memo)))
    deps.memo[key] = p
    return p


def breaks_rule(log: StepLog, text: str, topics: Sequence[str]) -> bool:
    """Whether ``text`` mentions any of ``topics``: the two questions' "yes" compared."""
    listed = ", ".join(topics)
    try:
        mentions = _answer(log, MENTIONS.format_messages(text=text, topics=listed))
        free = _answer(log, FREE_OF.format_messages(text=text, topics=listed))
    except Exception as e:  # an unanswered check withholds: the rule is a promise
        log.fail("rule_check", e)
        return True
    return mentions > free


def withhold(log: StepLog, ctx: MemoryContext, turns: list[RawTurn]) -> list[RawTurn]:
    """``turns`` with every turn the application's rule keeps out shown as withheld."""
    if not ctx.instructions or not turns:
        return turns
    topics = rule_topics(log, ctx.instructions)
    if not topics:  # a rule that forbids nothing (e.g. only says what to keep)
        return turns
    shown: list[RawTurn] = []
    for turn in turns:
        text = "\n".join(x for x in (turn.text, turn.media_caption) if x)
        if breaks_rule(log, text, topics):
            log.count("turn_withheld")
            turn = turn.model_copy(
                update={"text": WITHHELD, "media_caption": None, "time_refs": []}
            )
        shown.append(turn)
    return shown


__all__ = ["RuleTopics", "breaks_rule", "rule_topics", "withhold"]
