"""A fact where a small model wrote the one addressed for both "I" and "you".

From Theo's "Any time you need help, don't hesitate to reach out" (to Omar) a 1.5B model
writes "Omar will help Omar if he needs help": both pronouns became the addressee's name.
Nothing in such a statement is anyone's; the speaker's name put back in the first
place gives "Theo will help Omar if he needs help", which the turn says.

It also swaps the two people whole: from Priya's "I'll send you the recipe" (to
Kofi) it writes "Kofi will send Priya the recipe". When the turn says "I <verb>
you" with the statement's verb, the names trade places back.
"""

from __future__ import annotations

import re

from ...common.lexicon import SUBJECT_YOU

_SECOND = re.compile(
    rf"\b(?:{'|'.join(sorted(SUBJECT_YOU | {'your', 'yours'}, key=len, reverse=True))})\b",
    re.IGNORECASE,
)


def unswapped(statement: str, speaker: str, addressed: str | None, turn_text: str) -> str | None:
    """The statement with the speaker's name back in front, or None when it needs none.

    It needs it when it opens with the addressee's name (not a possessive, not a list
    "Omar, Omar told...") and names the addressee again later as a word of its own, while
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


_FIRST_DOES = r"\b(?:I|I'll|I’ll|I will|I'd|I’d|I would|I'm going to|I’m going to|let me)"


def traded(statement: str, speaker: str, addressed: str | None, turn_text: str) -> str | None:
    """The statement with the two people back in their places, or None when it needs none.

    It needs it when it reads "<addressee> [will] <verb> <speaker> ..." while the turn
    says "I [will] <verb> you" with the same verb ("I'll send you the recipe").
    """
    if not addressed or addressed.casefold() == speaker.casefold():
        return None
    lead = re.match(
        rf"(?i)(?P<who>{re.escape(addressed)})\s+(?P<aux>(?:will|would|is going to)\s+)?"
        rf"(?P<verb>[a-z]+)\s+(?P<whom>{re.escape(speaker)})\b(?!['’])",
        statement,
    )
    if lead is None:
        return None
    verb = lead.group("verb").casefold()
    stem = verb[:-1] if verb.endswith("s") and not verb.endswith("ss") else verb
    said = rf"(?i){_FIRST_DOES}\s+(?:\w+ly\s+)?{re.escape(stem)}\w*\s+you\b"
    if re.search(said, turn_text) is None:
        return None
    aux = lead.group("aux") or ""
    return f"{speaker} {aux}{lead.group('verb')} {addressed}{statement[lead.end() :]}"


__all__ = ["traded", "unswapped"]
