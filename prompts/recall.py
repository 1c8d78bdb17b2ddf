"""Prompts of the read path (Retriever, Judge, Refresher, answer).

Memories are shown inside ``<data>`` blocks with labels, dates and granularity; the
system message says they are quoted content, so a memory that reads like an
instruction ("ignore previous instructions...") stays data.
"""

from __future__ import annotations

from langchain_core.prompts import ChatPromptTemplate

from .construction import DATA_RULE

PLAN = ChatPromptTemplate.from_messages(
    [
        (
            "system",
            "You prepare memory retrieval for a question. Rewrite it to stand alone, mark "
            "which kinds of memory it needs, estimate how many memories it needs, and give "
            "a date window or an as-of date only when the question clearly implies one. "
            "Today is {today}. " + DATA_RULE,
        ),
        (
            "human",
            "Recent conversation:\n<data>\n{window}\n</data>\n\n"
            "Question:\n<data>\n{question}\n</data>",
        ),
    ]
)

JUDGE = ChatPromptTemplate.from_messages(
    [
        (
            "system",
            "You check whether retrieved memories answer a question. Sufficient means the "
            "exact entity, place, time (as precise as asked) or quantity is stated; vague "
            "proxies ('recently', 'somewhere') are not enough; only one-step inference is "
            "allowed. Use each memory's date to resolve relative time. If two memories make "
            "incompatible claims about the same entity, event or time, choose refresh and "
            "list their labels. If something is missing, choose retry and write 2-3 "
            "complementary queries for it. Otherwise choose pass. " + DATA_RULE,
        ),
        (
            "human",
            "Question:\n<data>\n{question}\n</data>\n\n"
            "Retrieved memories:\n<data>\n{memories}\n</data>",
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
            "conflict, prefer the most recent valid one. Convert relative time expressions "
            'into absolute dates using each memory\'s date ("yesterday" in a memory of 8 '
            'May 2023 is 7 May 2023; "last week" is the week before its date). Write '
            "dates the way the memories do, e.g. 7 May 2023. Do not confuse people mentioned "
            "inside memories with the speakers. Answer in a few words and cite the labels "
            "of the memories you used. If the memories do not contain the answer, say it is "
            "not answerable instead of guessing. " + DATA_RULE,
        ),
        (
            "human",
            "Memories:\n<data>\n{memories}\n</data>\n\nQuestion:\n<data>\n{question}\n</data>",
        ),
    ]
)
