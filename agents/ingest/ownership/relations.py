"""The people and pets a speaker names in passing, as facts, without the model.

"My boyfriend Luke and I are taking a cooking class" holds a fact a small model seldom
writes down: Jen's boyfriend is Luke. Yet it is what a later "Luke and I broke up" ends,
and what "who is Luke?" asks. The turn's own words say it plainly, so it is read from
them: "my <relation> <Name>", "<Name>, my <relation>", "my <relation> is called <Name>"
(likewise "our", and pets: "my rabbit Clover"), in every language of the lexicon
("mi hermana Lucía", "meine Schwester Lena"). Each gives the fact "<speaker>'s
<relation> is <Name>." about the speaker, sourced from that turn. An email address the
speaker gives as their own ("Email me at ana@example.org", "my new email is ...") is
read the same way, as "<speaker>'s email is <address>.": a model keeps the request and
drops the address, and the address is what a later "I changed my email" replaces.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from ....records.model import FactRecord, MetadataValue, RawTurn
from ...common.formatting import SENTENCE_BREAK
from ...common.lexicon import CALENDAR_NAMES, LEXICONS, NOT_NAMES, PET_WORDS, Lexicon
from ...common.refinement import fact_id

ROLE_LABELS = frozenset({"user", "human", "assistant", "ai", "bot", "me"})
"""Speaker labels that are roles, not names: a model's name for that speaker stands."""
PET_KINDS = frozenset(PET_WORDS.values())
"""The English words a relation fact names a pet by ("Noah's rabbit is Clover.")."""

_ADJ = r"(?:(?:little|big|older|younger|baby|new|best|old|dear|late|twin|step|lovely)\s+)?"
_NAME = r"(?P<name>[A-ZÀ-ÖØ-Þ][a-zß-öø-ÿ]+(?:\s[A-ZÀ-ÖØ-Þ][a-zß-öø-ÿ]+)?)\b"


def _patterns(lexicon: Lexicon) -> tuple[re.Pattern[str], ...]:
    """One language's "my <relation> <Name>" patterns, its relation and pet words as kinds."""
    words = sorted({*lexicon.relations, *lexicon.pets}, key=len, reverse=True)
    kind = rf"(?P<kind>(?:ex-)?(?i:{'|'.join(re.escape(w) for w in words)}))"
    own = rf"(?i:{'|'.join(lexicon.possessives)})\s+"
    called = "|".join(re.escape(w) for w in lexicon.naming)
    return (
        re.compile(rf"\b{own}{_ADJ}{kind}\s+(?i:{called})\s+{_NAME}"),
        re.compile(rf"\b{own}{_ADJ}{kind}\s+{_NAME}"),
        # "That's Daniel, my boyfriend": the name inside a sentence ("Yeah, my mom ...",
        # "Thankfully, my son's ok" open one) and the relation closing the phrase ("rehome
        # Clover, my son turned out ..." is two clauses)
        re.compile(
            rf"(?<=[a-z,] ){_NAME},\s+{own}{_ADJ}{kind}"
            r"(?=\s*(?:[!.,;?)]|$)|\s+(?:and|who|from|at|in|of|for)\b)"
        ),
    )


_PATTERNS = tuple((lexicon, p) for lexicon in LEXICONS for p in _patterns(lexicon))
_NOT_NAMES = NOT_NAMES | CALENDAR_NAMES


def _kind(lexicon: Lexicon, word: str) -> str:
    """The English word of a matched relation or pet word, "ex-" kept ("ex-novio" too)."""
    ex, bare = ("ex-", word[3:]) if word.startswith("ex-") else ("", word)
    return ex + lexicon.relations.get(bare, lexicon.pets.get(bare, bare))


_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_OWN_CONTACT = re.compile(
    r"\b(?:my|our) (?:new |current |work |personal )?e-?mail\b|\be-?mail (?:me|us)\b|"
    r"\b(?:reach|contact|write to) (?:me|us)\b",
    re.IGNORECASE,
)
"""A sentence giving the speaker's own address ("email me at", "my new email");
"email my sister at" and "my sister's email" are someone else's."""


@dataclass(frozen=True)
class NamedRelation:
    """One relation a turn states: ``holder``'s ``kind`` is ``name``."""

    holder: str
    kind: str
    name: str
    turn_id: str

    def statement(self) -> str:
        """The fact in words, such as "Jen's boyfriend is Luke."."""
        holder = f"The {self.holder}" if self.holder.casefold() in ROLE_LABELS else self.holder
        return f"{holder}'s {self.kind} is {self.name}."


def named_relations(turns: Iterable[RawTurn]) -> list[NamedRelation]:
    """Every relation the turns' speakers name in passing, once each, in turn order.

    Their own email addresses too (kind ``email``).
    """
    out: dict[tuple[str, str, str], NamedRelation] = {}
    for turn in turns:
        for lexicon, pattern in _PATTERNS:
            for hit in pattern.finditer(turn.text):
                name = hit.group("name")
                if name.split()[0] in _NOT_NAMES or name == turn.speaker:
                    continue
                name = name.split()[0] if name.split()[-1] in _NOT_NAMES else name
                kind = _kind(lexicon, hit.group("kind").casefold())
                key = (turn.speaker, kind, name)
                out.setdefault(key, NamedRelation(turn.speaker, kind, name, turn.id))
        for address in _own_addresses(turn.text):
            key = (turn.speaker, "email", address)
            out.setdefault(key, NamedRelation(turn.speaker, "email", address, turn.id))
    return list(out.values())


def _own_addresses(text: str) -> list[str]:
    """The email addresses a turn gives as its speaker's own."""
    return [
        address.casefold()
        for sentence in SENTENCE_BREAK.split(text)
        if _OWN_CONTACT.search(sentence)
        for address in _EMAIL.findall(sentence)
    ]


def relation_records(
    namespace: str,
    turns: Iterable[RawTurn],
    recorded_at: datetime,
    episode_id: str | None = None,
) -> list[FactRecord]:
    """The relations ``turns`` name, as facts about their speakers (owner by grammar)."""
    by_id = {t.id: t for t in turns}
    out = []
    for rel in named_relations(by_id.values()):
        said = by_id[rel.turn_id].occurred_at
        meta: dict[str, MetadataValue] = {"owner_check": "grammar", "derived_by": "relations"}
        if episode_id:
            meta["episode_id"] = episode_id
        out.append(
            FactRecord(
                id=fact_id(namespace, rel.statement()),
                namespace=namespace,
                text=rel.statement(),
                subject=rel.holder,
                kind="fact",
                valid_from=said,
                occurred_at=said,
                recorded_at=recorded_at,
                source_ids=[rel.turn_id],
                metadata=meta,
            )
        )
    return out


_STATED = re.compile(
    r"^(?P<holder>.+)'s (?P<kind>[\w -]+) is (?P<name>[A-ZÀ-ÖØ-Þ][a-zß-öø-ÿ]+"
    r"(?: [A-ZÀ-ÖØ-Þ][a-zß-öø-ÿ]+)?)\.$"
)
"""A relation fact as :meth:`NamedRelation.statement` writes it."""


def pet_keepers(
    relations: Iterable[NamedRelation], stored: Iterable[FactRecord] = ()
) -> dict[str, str]:
    """Pet name -> its keeper, from the pets ``relations`` name and earlier relation facts.

    "We had to rehome Clover" names no rabbit; an earlier session's "my rabbit Clover"
    (stored as "Noah's rabbit is Clover.") says whose Clover is. ``stored``: facts of the
    namespace; only the ones :func:`relation_records` wrote count. A name kept by two
    people is nobody's.
    """
    found: dict[str, set[str]] = {}
    for fact in stored:
        hit = _STATED.match(fact.text) if fact.metadata.get("derived_by") == "relations" else None
        if hit is not None and hit.group("kind") in PET_KINDS and fact.subject:
            found.setdefault(hit.group("name"), set()).add(fact.subject)
    for rel in relations:
        if rel.kind in PET_KINDS:
            found.setdefault(rel.name, set()).add(rel.holder)
    return {name: keepers.pop() for name, keepers in found.items() if len(keepers) == 1}


__all__ = [
    "PET_KINDS",
    "ROLE_LABELS",
    "NamedRelation",
    "named_relations",
    "pet_keepers",
    "relation_records",
]
