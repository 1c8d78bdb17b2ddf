"""Whether an answer rests on the words of the person the question names (no LLM).

LoCoMo's adversarial questions (category 5) swap the speaker: "What did Melanie realize
after the race?" when it was Caroline who ran it. Measured on the gold evidence of all
ten LoCoMo conversations (``benchmarks/recall_eval.py``), when a question names exactly
one speaker, none of its evidence turns is said by that person or mentions them for
about half of the category-5 questions and for under 3% of the answerable ones in each
category. So a draft whose cited turns are all someone else's, none mentioning the
person, is treated as not supported: the graph retries, then refuses. This is a
calibrated decision on measured data, not a softer or stricter prompt rule.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..core.state import Candidate
from .query_analysis import QueryAnalysis, match_speakers


def unsupported_person(analysis: QueryAnalysis, cited: Sequence[Candidate]) -> str | None:
    """The person the question names when no cited turn is theirs or mentions them.

    None when the check does not apply: the question names no speaker or several, or
    the answer cites no conversation turn (then nothing says whose words they were).
    """
    if len(analysis.persons) != 1:
        return None
    person = analysis.persons[0]
    turns = [c for c in cited if c.granularity == "raw"]
    if not turns:
        return None
    for turn in turns:
        if turn.speaker == person or match_speakers(turn.text, [person]):
            return None
    return person


__all__ = ["unsupported_person"]
