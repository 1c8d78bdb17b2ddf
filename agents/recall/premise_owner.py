"""Ask the model whose a question's subject is, when the turns read as someone else's.

The premise check's topic test (:func:`.premise.foreign_topic`) finds the questions
whose best-matching turns are all about someone other than the person named; its
answer test then confirms with the draft. A small model's draft to such a question is
often a stray phrase from the context ("a photo of a family walking through a forest"),
which matches turns at random, so the answer test rarely confirms it. This short call
replaces the draft as the second witness: shown only those turns, the model names whose
the thing asked about is. Only a name of another speaker counts against the premise;
the asked person, "both", "unclear" or a failed call leave the draft as it was.

Off by default (``MemoryContext.premise_owner_check``): the local Qwen 1.5B names
someone else almost as often for answerable questions (31%) as for false premises
(38%) among those the topic test flags (``benchmarks/premise_owner.json``).
"""

from __future__ import annotations

from langchain_core.messages import BaseMessage

from ...core.state import Candidate
from ...prompts.recall import PREMISE_OWNER
from ..common.deps import StepLog
from ..common.formatting import as_data
from ..common.names import match_speakers
from .premise import ForeignTopic
from .schemas import PremiseOwner

MAX_TURNS = 4
"""Topic turns shown to the model (the best matches, in the order shown)."""
MAX_TURN_CHARS = 400
"""Characters kept of each turn."""
UNCLEAR = "unclear"


def _line(turn: Candidate) -> str:
    text = turn.text if len(turn.text) <= MAX_TURN_CHARS else turn.text[:MAX_TURN_CHARS] + "..."
    caption = f" [shares a photo: {turn.media_caption}]" if turn.media_caption else ""
    return f"{turn.occurred_at:%d %B %Y}, {turn.speaker or 'someone'}: {text}{caption}"


def owner_messages(foreign: ForeignTopic, question: str) -> list[BaseMessage]:
    """The call's messages: the topic turns, the question and the names to choose from."""
    turns = "\n".join(_line(t) for t in foreign.turns[:MAX_TURNS])
    choices = ", ".join([foreign.person, *foreign.others, UNCLEAR])
    return PREMISE_OWNER.format_messages(
        turns=as_data(turns), question=as_data(question), choices=choices
    )


def other_owner(log: StepLog, foreign: ForeignTopic, question: str) -> str | None:
    """The other speaker the model names as the owner of the question's subject.

    None when it names the asked person, several people, nobody it was offered,
    "unclear", or the call fails (recorded in ``log``; the draft then stands).
    """
    reply = log.ask(PremiseOwner, owner_messages(foreign, question), "premise_owner")
    if reply is None:
        return None
    named = match_speakers(reply.owner, [foreign.person, *foreign.others])
    if len(named) != 1 or named[0] == foreign.person:
        return None
    return named[0]


__all__ = ["MAX_TURNS", "other_owner", "owner_messages"]
