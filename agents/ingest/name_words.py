"""Words that open a chat sentence without being anyone's name.

A capitalized first word is a name only when it reads as one: "Renting a house...",
"Thirty years...", "Been busy...", "Great idea!" are not (see
:func:`~.ownership.person_named`).
"""

from __future__ import annotations

import re

OPENERS = frozenset(
    "just been got went had did made took started finished tried bought visited joined "
    "spent saw met found loved love hope hoping thinking feeling felt having doing "
    "working trying getting going planning gonna recently finally also still really "
    "currently gotta wanna didn't can't cant haven't couldn't wasn't".split()
)
"""Words a chat clause starts with when it drops its "I" ("Been busy volunteering",
"Just started doing aerial yoga", "Went hiking yesterday")."""
INTERJECTIONS = frozenset(
    "great thanks thank wow sorry awesome congrats congratulations nice cool hey hi hello "
    "yes yeah yep no nope oh ah well sure glad amazing good haha lol ok okay totally "
    "absolutely definitely exactly agreed cheers nah".split()
)
"""Words a chat turn opens with that are nobody's name."""

NOT_A_NAME = re.compile(
    r"\w{3,}ing|\w{3,}ed|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
    r"twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|thousand|"
    + "|".join(sorted(OPENERS | INTERJECTIONS))
)
"""Words that open a sentence without being a name: a verb's -ing or -ed form, a
number word, a word a clause opens with when it drops its "I", or a chat turn's
interjection ("Great idea!", "Wow, ...")."""


__all__ = ["INTERJECTIONS", "NOT_A_NAME", "OPENERS"]
