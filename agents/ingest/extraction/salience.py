"""A cheap, non-LLM filter for turns with nothing to remember.

Greetings, thanks and acknowledgements ("Wow, that's so cool!") make up a good share of
chat. They stay in the raw layer, searchable as said, but no LLM call is spent on them.
The rule keeps a turn as soon as it carries anything that could matter: a resolved time,
a shared image, a number, a name inside the sentence, or two content words.
"""

from __future__ import annotations

import re

from ....records.model import TimeRef
from ....stores.lexical import ENGLISH_STOP_WORDS

_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")
_SENTENCE_START = re.compile(r"(?:^|[.!?]\s+|\n)\W*$")
_CHITCHAT = frozenset(
    """hi hello thanks thank thx bye goodbye great awesome cool nice glad amazing yes yep sure
    okay ok later talk soon lol haha love loved lovely totally definitely absolutely good sounds
    fun happy hear heard agree right exactly true congrats congratulations wonderful fantastic
    incredible beautiful awesome sweet appreciate appreciated means lot much well hope care
    take keep going nice wish luck same feel thing things know see super proud inspiring
    inspired touching sharing share glad enjoy enjoyed totally""".split()
)
CONTENT_WORDS = 2
"""A turn with at least this many content words is kept."""


def _named(text: str) -> bool:
    """A capitalised word that does not start a sentence (and is not "I")."""
    for m in _WORD.finditer(text):
        word = m.group()
        if word[0].isupper() and word not in ("I", "I'm", "I've", "I'll", "I'd"):
            if not _SENTENCE_START.search(text[: m.start()]):
                return True
    return False


def is_trivial(
    text: str, *, caption: str | None = None, times: list[TimeRef] | None = None
) -> bool:
    """True when ``text`` holds nothing worth an LLM call: chit-chat without content."""
    if times or caption or any(c.isdigit() for c in text) or _named(text):
        return False
    content = [
        w
        for w in (m.group().lower() for m in _WORD.finditer(text))
        if len(w) > 2 and w not in ENGLISH_STOP_WORDS and w not in _CHITCHAT
    ]
    return len(content) < CONTENT_WORDS
