"""A fact where a small model wrote the one addressed for both "I" and "you".

From John's "Any time you need help, don't hesitate to reach out" (to Tim) a 1.5B model
writes "Tim will help Tim if he needs help": both pronouns became the addressee's name.
Nothing in such a statement is anyone's; the speaker's name put back in the first
place gives "John will help Tim if he needs help", which the turn says.
"""

from __future__ import annotations

import re

_SECOND = re.compile(r"\b(?:you|your|yours|you'll|you're|you've|you'd)\b", re.IGNORECASE)


def unswapped(statement: str, speaker: str, addressed: str | None, turn_text: str) -> str | None:
    """The statement with the speaker's name back in front, or None when it needs none.

    It needs it when it opens with the addressee's name (not a possessive, not a list
    "Tim, Tim told...") and names the addressee again later as a word of its own, while
    the turn speaks to "you" ("Any time you need help, reach out").
    """
    if not addressed or addressed.casefold() == speaker.casefold():
        return None
    name = re.escape(addressed)
    opening = re.match(rf"(?i){name}\b(?!['’]s)(?!,)", statement)
    if opening is None:
        return None
    rest = statement[opening.end() :]
    again = re.search(rf"(?i)\b{name}\b(?!['’]s)", rest)
    if again is None or re.search(r"(?i)\b(?:him|her|them)sel(?:f|ves)\b", rest):
        return None
    if _SECOND.search(turn_text) is None:
        return None
    return speaker + rest


__all__ = ["unswapped"]
