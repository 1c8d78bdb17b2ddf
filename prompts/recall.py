"""Prompts of the read path (Judge + answer, query rewrite, Refresher, plain answer).

Memories are shown inside ``<data>`` blocks with labels, dates and speakers; the system
message says they are quoted content, so a memory that reads like an instruction
("ignore previous instructions...") stays data. The memories come before the question,
and the fixed instructions before both, so a serving model can reuse the prompt prefix.
"""

from __future__ import annotations

from typing import Final

from langchain_core.prompts import ChatPromptTemplate

from .construction import DATA_RULE

_DATES = (
    "Turn relative time expressions into absolute dates using each memory's date "
    '("yesterday" in a memory of 8 May 2023 is 7 May 2023; "last week" is the week before '
    "its date) and write dates the way the memories do, e.g. 7 May 2023. "
)
_PEOPLE = (
    "Each conversation turn names its speaker; people mentioned inside a memory are not "
    "necessarily the speaker, so do not mix them up. "
)

JUDGE_ANSWER = ChatPromptTemplate.from_messages(
    [
        (
            "system",
            "You answer a question from memory in one step. The memories are conversation "
            "turns and notes derived from them. Decide whether they state the answer: the "
            "exact entity, date, place or quantity asked for; vague proxies ('recently', "
            "'somewhere') are not enough, and only one simple inference is allowed. If they "
            "do, set sufficient to true and answer in a few words, citing the labels you "
            "used. If something required is missing, set sufficient to false and name what "
            "is missing in a few words; leave the answer empty when nothing relates to the "
            "question. When memories disagree, trust the most recent valid one; list labels "
            "under conflicting only when two memories contradict each other about the same "
            "thing. " + _DATES + _PEOPLE + DATA_RULE,
        ),
        (
            "human",
            "Memories:\n<data>\n{memories}\n</data>\n\n"
            "Question:\n<data>\n{question}\n</data>\n{hint}",
        ),
    ]
)

ANSWER_HINTS: Final[dict[str, str]] = {
    "temporal": "The question asks for a time: answer with the date or period.",
    "aggregation": "The answer may combine several memories: give every item, comma-separated.",
    "yesno": "Answer yes or no, then a few words on why.",
    "other": "",
}
"""The answer format each question type asks for (a line after the question)."""

REWRITE = ChatPromptTemplate.from_messages(
    [
        (
            "system",
            "You write search queries for a memory search. The memories found so far do not "
            "answer the question. Write 1-3 short queries for what is missing: keywords, a "
            "rephrased question, or a statement of what the answer would say. Keep names "
            "and dates from the question. " + DATA_RULE,
        ),
        (
            "human",
            "Recent conversation:\n<data>\n{window}\n</data>\n\n"
            "Question:\n<data>\n{question}\n</data>\n\n"
            "Missing:\n<data>\n{missing}\n</data>",
        ),
    ]
)

REFRESH = ChatPromptTemplate.from_messages(
    [
        (
            "system",
            "You keep memory consistent. Given contradicting memories, update only the "
            "conflicting attribute of the older memory when newer information corrects it; "
            "delete only when the user explicitly asked to forget, cancel or invalidate it; "
            "otherwise do nothing. Only touch memories about the same entity or event. "
            + DATA_RULE,
        ),
        (
            "human",
            "User input:\n<data>\n{question}\n</data>\n\n"
            "Contradicting memories:\n<data>\n{memories}\n</data>",
        ),
    ]
)

ANSWER = ChatPromptTemplate.from_messages(
    [
        (
            "system",
            "You answer questions from memory. Use only the memories given. When memories "
            "conflict, prefer the most recent valid one. " + _DATES + _PEOPLE + "Answer in "
            "a few words and cite the labels of the memories you used. If the memories do "
            "not contain the answer, say it is not answerable instead of guessing. " + DATA_RULE,
        ),
        (
            "human",
            "Memories:\n<data>\n{memories}\n</data>\n\n"
            "Question:\n<data>\n{question}\n</data>\n{hint}",
        ),
    ]
)
