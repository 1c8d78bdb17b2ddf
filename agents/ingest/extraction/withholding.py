"""The application's "never store" rule, applied before construction reads a turn.

Saying the rule in the construction prompt is not enough for a small model: with the rule
stated, the local model wrote as many notes about the excluded topic as without it.
So a rule that forbids something is also enforced here:
its kinds of information are read once, each turn of an excerpt is asked about, and a
turn that mentions them is shown to construction as :data:`~lamina.prompts.withholding.WITHHELD`.
The raw turn itself stays stored; no derived record can hold what construction never saw.

Each turn is asked two opposite yes/no questions ("does it mention ...", "is it free of
...") and the first answer's probability of "yes" is compared with the second's, so that
a model leaning to "yes" in both needs no threshold. That holds only for a model that
answers the second question: the local 1.5B model says "free of" to almost every turn, so
for it the comparison is a fixed threshold, right for some rules and wrong for others
(docs/benchmarks, "A never store instruction"). When a check fails, the turn is withheld:
the rule is the application's promise to its users, and a lost note costs less than a kept
one it forbade.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

from langchain_core.messages import BaseMessage
from pydantic import BaseModel, Field

from ....core.context import MemoryContext
from ....prompts.withholding import FREE_OF, MENTIONS, RULE_CHECK_VERSION, RULE_TOPICS, WITHHELD
from ....records.model import RawTurn
from ...common.deps import StepLog
from ...common.names import fold
from ...common.yes_no import ask_yes


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


def _answer(log: StepLog, messages: Sequence[BaseMessage]) -> float:
    """The probability of "yes" to one rule-check question (:func:`~..common.yes_no.ask_yes`)."""
    return ask_yes(log, messages, version=RULE_CHECK_VERSION, schema="RuleCheck")


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
