"""Search the whole conversation for a doubted premise (no LLM, one lexical search).

The topic test of :mod:`.premise` reads only the turns shown for the question. When
the turns there that best match the question's topic are all about someone other than
the person it names, and the draft does not settle it (a small model's draft to a false
premise is often a stray phrase, which the answer test cannot tie to any turn), this
search looks wider: BM25 over the namespace's raw turns for the question's words, its
person and time expressions left out, so the topic is found wherever it was talked
about and by whom. When no best topic match among those turns is about the named person
(:func:`~.premise.premise_found`), nothing the memory holds ties them to the topic: the
premise fails, and a second round would search the same turns, so the answer is a
refusal.
"""

from __future__ import annotations

from ...core.state import Candidate
from ...stores.base import MemoryStore
from ..common.query_analysis import QueryAnalysis
from .pooling import to_candidate
from .premise import premise_found

SEARCH_K = 30
"""Raw turns the premise search reads."""


def topic_query(analysis: QueryAnalysis, question: str) -> str:
    """The question without its person and time expressions: its topic, as a query."""
    query = question
    for part in (*analysis.time_expressions, *analysis.persons):
        query = query.replace(part, " ")
    return " ".join(query.split())


def searched_turns(
    store: MemoryStore, namespace: str, analysis: QueryAnalysis, question: str
) -> list[Candidate]:
    """The namespace's raw turns that best match the question's topic (BM25)."""
    query = topic_query(analysis, question)
    hits = store.search(query, "raw", namespace, k=SEARCH_K, mode="bm25")
    return [to_candidate(h.record, h.score, query) for h in hits]


def premise_anywhere(
    store: MemoryStore, namespace: str, analysis: QueryAnalysis, question: str
) -> bool:
    """Whether any raw turn of the namespace ties the named person to the question's topic."""
    return premise_found(analysis, question, searched_turns(store, namespace, analysis, question))


__all__ = ["SEARCH_K", "premise_anywhere", "searched_turns", "topic_query"]
