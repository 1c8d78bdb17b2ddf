"""Prompts of the rule check: what an application's "never store" rule leaves out.

The rule is the application's own text (``MemoryContext.instructions``). One call reads
the kinds of information it forbids storing; then every turn is asked about twice, once
as "does it mention them" and once as "is it free of them", and the comparison decides
(see :mod:`lamina.agents.ingest.extraction.withholding` for where that holds).
"""

from __future__ import annotations

from langchain_core.prompts import ChatPromptTemplate

from .construction import DATA_RULE

RULE_TOPICS = ChatPromptTemplate.from_messages(
    [
        (
            "system",
            "An application gave a memory system a rule about what it may store about "
            "people. List the kinds of information the rule says must not be stored, each "
            "as a short noun phrase in the rule's own words. If the rule forbids nothing, "
            "give an empty list.",
        ),
        ("human", "Rule:\n<data>\n{rule}\n</data>"),
    ]
)

YES_NO = "You answer with one word: yes or no. " + DATA_RULE

MENTIONS = ChatPromptTemplate.from_messages(
    [
        ("system", YES_NO),
        (
            "human",
            "Message:\n<data>\n{text}\n</data>\n\n"
            "Does this message mention any of these: {topics}?",
        ),
    ]
)

FREE_OF = ChatPromptTemplate.from_messages(
    [
        ("system", YES_NO),
        (
            "human",
            "Message:\n<data>\n{text}\n</data>\n\n"
            "Is this message free of any mention of these: {topics}?",
        ),
    ]
)

WITHHELD = "(withheld: the application's rule keeps this turn out of memory)"
"""What construction is shown in place of a turn the rule check withheld."""

RULE_CHECK_VERSION = "rule-check-1"
"""Part of the rule check's journal keys: change it when the prompts above change."""

__all__ = ["FREE_OF", "MENTIONS", "RULE_CHECK_VERSION", "RULE_TOPICS", "WITHHELD"]
