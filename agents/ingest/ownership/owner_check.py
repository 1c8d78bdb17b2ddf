"""Whom a constructed fact is filed under: its source turn's grammar over the model.

The model names an owner with each fact; :func:`checked_owner` weighs it against the
statement's own subject and the source turn's speaker, addressee and pronouns
(:mod:`.grammar`), repairs a statement that named the addressee for both "I" and
"you" (:mod:`.swapped_names`), and counts what it changed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from ....records.model import RawTurn
from ...common.lexicon import CALENDAR_NAMES, NOT_NAMES
from ...common.names import match_speakers
from ..evidence.support import support_ratio, supported
from .grammar import addressee, decide_owner, names, relative
from .named import person_named
from .swapped_names import traded, unswapped

if TYPE_CHECKING:  # a type only: importing the text rules loads no LLM client
    from ...common.deps import StepLog
from .voice import in_third_person, spoken_subject, told_subject

_LEAD = re.compile(r"^([A-Z][a-z][\w-]*(?: [A-Z][a-z][\w-]*)?)(?=[ ,])")
_NOT_NAMES = NOT_NAMES | CALENDAR_NAMES


def subject_of(statement: str, named: str, people: Sequence[str] = ()) -> str:
    """Whom a statement is about: the name it starts with, else the model's ``named``.

    A small model often files a fact under the speaker who told it ("Maya" for "Theo
    opened a bakery"); the sentence's own grammatical subject is the better witness.
    A possessive start ("Maya's brother Theo ...") keeps the model's choice. Of a
    two-word start, a known person's first name followed by a capitalized word that is
    not their surname ("Ines Thanks Kofi") is that person.
    """
    lead = _LEAD.match(statement)
    if lead is None:
        return named
    name = lead.group(1)
    first = name.split()[0]
    if first in _NOT_NAMES:
        return named
    known = {p.casefold() for p in people}
    if " " in name and name.casefold() not in known:
        if first.casefold() in {p.split()[0].casefold() for p in people if p.strip()}:
            return first
    return name


def spoken_to(turn: RawTurn, turns: Sequence[RawTurn], people: Sequence[str]) -> str | None:
    """Whom ``turn`` addresses: the nearest other speaker of the excerpt, else the other person."""
    at = next((n for n, t in enumerate(turns) if t.id == turn.id), None)
    near: list[str] = []
    if at is not None:
        for d in range(1, len(turns)):
            near += [turns[i].speaker for i in (at - d, at + d) if 0 <= i < len(turns)]
    return addressee(turn.speaker, near, people)


def placed(text: str, old: str, new: str) -> bool:
    """Whether a statement led by ``old`` also names ``new`` as a word of its own."""
    return text.startswith(old) and names(text[len(old) :], new)


def traded_names(text: str, old: str, new: str) -> str:
    """The statement with the two people's names traded.

    "Ines saw the house with Lena" -> "Lena saw the house with Ines": a model
    that put one in the other's place mostly put the other in the first one's.
    """
    swap = {old: new, new: old}
    pattern = rf"\b({re.escape(old)}|{re.escape(new)})\b"
    return re.sub(pattern, lambda m: swap[m.group(1)], text)


def _from_image(text: str, turn: RawTurn, people: list[str]) -> bool:
    """Whether a statement tells only what the turn's shared image shows.

    "He shared a photo of a city skyline" from Omar's turn with that caption: none of its
    words are in what Omar wrote, all it says is in the picture Omar shared.
    """
    caption = turn.media_caption or ""
    return (
        bool(caption)
        and support_ratio(text, [turn.text], people) == 0
        and supported(text, [caption], people)
    )


def _voiced(log: StepLog | None, text: str, turn: RawTurn, addressed: str | None) -> str:
    """The statement with its turn's own subject back and its first person the speaker's.

    Counted ``subject_restored`` and ``first_person_shifted`` (see :mod:`.voice`) when a
    ``log`` is given.
    """
    restored = told_subject(text, turn.speaker, addressed, turn.text) or spoken_subject(
        text, turn.speaker, turn.text
    )
    if restored is not None:
        if log is not None:
            log.count("subject_restored")
        text = restored
    text, shifted = in_third_person(text, turn.speaker)
    if shifted and log is not None:
        log.count("first_person_shifted")
    return text


def checked_owner(
    log: StepLog,
    text: str,
    named: str,
    source_turns: list[RawTurn],
    turns: list[RawTurn],
    people: list[str],
    pets: Mapping[str, str] | None = None,
) -> tuple[str, str, str]:
    """(text, owner, check): the owner the source turn's grammar gives wins, counted.

    ``pets``: pet name -> keeper, known from earlier turns (see :func:`.grammar.decide_owner`).

    The statement first gets the subject its turn gives its words and loses the turn's
    first person (:func:`_voiced`: "Theo approved my loan" -> "The bank approved Theo's
    loan").
    A statement that names the addressee for both "I" and "you", or that trades the two
    people's places, gets the speaker's name back first and is the speaker's
    (:func:`~.swapped_names.unswapped`, :func:`~.swapped_names.traded`), counted
    ``owner_swap_repaired``. A statement of what the turn's shared image shows is the
    speaker's.
    """
    # the source turn that says most of the fact (a fact with no turn label cites them all)
    turn = max(source_turns, key=lambda t: support_ratio(text, [t.text], people))
    addressed = spoken_to(turn, turns, people)
    written = text  # the model's words, before the turn's "I" became the speaker's name
    text = _voiced(log, text, turn, addressed)
    repaired = unswapped(text, turn.speaker, addressed, turn.text) or traded(
        text, turn.speaker, addressed, turn.text
    )
    if repaired is not None:  # its subject is the speaker, by the way it went wrong
        log.count("owner_swap_repaired")
        return repaired, turn.speaker, "corrected"
    owner = subject_of(text, named, people)
    if _from_image(text, turn, people):  # the one who shared the photo
        check = "agreed" if match_speakers(owner, [turn.speaker]) else "corrected"
        if check == "corrected":
            log.count("owner_corrected")
        return text, turn.speaker, check
    verdict = decide_owner(owner, text, turn.text, turn.speaker, addressed, people, pets)
    if verdict.check == "corrected":
        log.count("owner_corrected")
        # a leading person's name is restated; a pet's or a word taken for a name is kept
        # ("Rocket is her new pet", "Renting a house in Leeds"), only its owner changes
        if relative(owner):  # "Mom visited Lena" -> "Lena's mom visited Lena"
            text = restate(text, owner, f"{verdict.owner}'s {owner.casefold()}")
        elif placed(written, owner, verdict.owner):  # "Ines saw it with Lena": swapped
            # traded as the model wrote them, then voiced: the names the turn's "I" and
            # "my" became are the speaker's, and a trade after voicing gave them away
            text = _voiced(None, traded_names(written, owner, verdict.owner), turn, addressed)
        elif placed(text, owner, verdict.owner):
            text = traded_names(text, owner, verdict.owner)
        elif owner not in (pets or {}) and (
            match_speakers(owner, people) or person_named(owner, turn.text)
        ):
            text = restate(text, owner, verdict.owner)
    elif verdict.check == "undecided":
        log.count("owner_undecided")
    elif verdict.owner != owner and match_speakers(owner, [verdict.owner]):
        log.count("owner_respelled")  # the speaker's label for the model's "Max" or "Jonas"
        text = restate(text, owner, verdict.owner)
    return text, verdict.owner, verdict.check


_LEAD_NAME = re.compile(r"^(?P<name>[A-Z][\w-]*(?: [A-Z][\w-]*)?)(?P<poss>['’]s)?(?=[\s,])")


def restate(statement: str, old: str, new: str) -> str:
    """The statement with its leading ``old`` name (or possessive) replaced by ``new``.

    A leading name set off by an appositive that names ``new``'s relation ("Joe, Hana's
    husband, went keto") is dropped instead: "Hana's husband went keto", not "Hana,
    Hana's husband, went keto".
    """
    match = _LEAD_NAME.match(statement)
    if match is None or not match_speakers(match.group("name"), [old]):
        return statement
    rest = statement[match.end() :]
    if not match.group("poss"):
        aside = re.match(r",\s*(?P<aside>[^,]+?)\s*,\s*", rest)
        if aside is not None and re.match(
            rf"{re.escape(new)}['’]s\b", aside.group("aside"), flags=re.IGNORECASE
        ):
            return aside.group("aside") + " " + rest[aside.end() :]
    return f"{new}{match.group('poss') or ''}{rest}"


__all__ = ["checked_owner", "restate", "spoken_to", "subject_of"]
