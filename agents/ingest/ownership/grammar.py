"""Whose fact it is, read from the grammar of its source turn (no LLM).

A small model often files a fact under the wrong person: "Maya will water her plants"
when Maya said "you can water my plants" to Theo. The source turn's grammar is the
better witness. For each content word of the statement found in the turn (same stem),
the words before it are read back to the start of its clause (commas, which mostly join
list items, are read past); the first subject met is that word's vote, and the majority
of the votes names the owner:

* a first-person pronoun (``I``, ``I'm``, ``we``, ``let's``) is the speaker;
* ``you`` is the one addressed (the other speaker next to the turn);
* a known person's name is that person (a name said to someone, a vocative, is skipped);
* a name right after a relation word ("my friend Carla") is that third person;
* a clause that drops its ``I`` ("Been busy...", "Went hiking") is the speaker's;
* ``he``, ``she``, ``they`` is someone other than the speaker and the one addressed.

A statement of what someone said ("Maya asked Theo about his trip", "Theo thanked
Maya") is the speaker's act, whoever the model put first. A fact the model filed under
the one addressed, from a turn with no "you" and no name of theirs, is the speaker's.
Possessives (``my plants``) are not subjects. When no clause names a subject, each word's
sentence votes by its pronouns if they point one way ("My four fur babies mean
everything to me"). When nothing votes, the turn as a whole decides if it is
unambiguous (only first-person words: the speaker; only second-person words: the one
addressed). Otherwise the model's owner stays, flagged as
undecided. The verdict says which happened, so construction can count it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from ....stores.lexical import Analyzer
from ...common.attribution import mentions
from ...common.lexicon import (
    DROPPED_I_OPENERS,
    INTERJECTIONS,
    RELATION_WORDS,
    SUBJECT_I,
    SUBJECT_YOU,
)
from ...common.names import match_speakers
from ..evidence.support import content_terms
from .named import person_named, pet_keeper
from .relations import ROLE_LABELS

_ANALYZER = Analyzer()
_TOKEN = re.compile(r"[A-Za-z][A-Za-z'’-]*|[.!?;:,]")
_BOUNDARY = frozenset(".!?;:,")
_ENDS = frozenset(".!?")
_SOFT = frozenset(",")
"""Boundaries read past when looking for a subject: a comma mostly joins list items
("We love climbing, sliding, and playing games") or a clause that keeps its subject."""
_FIRST = SUBJECT_I | {"im", "ive", "ill", "id"}
"""The first-person subjects, with the chat spellings that drop the apostrophe."""
_SECOND = SUBJECT_YOU | {"youre", "youve", "youll"}
_THIRD = frozenset("he she they he's she's they're he'll she'll they'll".split())
_FIRST_ANY = re.compile(r"\b(?:i|i'm|i've|i'll|i'd|me|my|mine|myself|we|us|our|ours|let's)\b", re.I)
_SECOND_ANY = re.compile(r"\b(?:you|you're|you've|you'll|you'd|your|yours|yourself)\b", re.I)
LOOKBACK = 8
"""Words read back from a content word to find its subject."""

OwnerCheck = Literal["agreed", "corrected", "undecided"]


@dataclass(frozen=True)
class OwnerVerdict:
    """The owner a fact is filed under, and how it was decided."""

    owner: str
    check: OwnerCheck
    grammar: str | None
    """The owner the turn's grammar names (None: it names none, or a third person)."""


def addressee(speaker: str, neighbours: Sequence[str], people: Sequence[str]) -> str | None:
    """The one a turn by ``speaker`` speaks to: the nearest other speaker around it.

    ``neighbours``: the speakers of the turns around it, nearest first. Without one,
    the only other known person, if there is exactly one.
    """
    for other in neighbours:
        if other and other != speaker:
            return other
    others = [p for p in dict.fromkeys(people) if p != speaker]
    return others[0] if len(others) == 1 else None


def _norm(token: str) -> str:
    return token.lower().replace("’", "'")


def _dropped_i(tokens: list[str], start: int, at: int) -> bool:
    """Whether the clause from ``tokens[start]`` to ``tokens[at]`` drops its "I".

    An interjection before it is read past ("Nah, didn't get to stay").
    """
    while start < at and (tokens[start] in _SOFT or _norm(tokens[start]) in INTERJECTIONS):
        start += 1
    return start < at and _norm(tokens[start]) in DROPPED_I_OPENERS


_AUX = frozenset("do does did are were is was have has had".split())
_ASKED = "asked"
"""The subject of a yes/no question ("Do you enjoy cooking?"): it asks, it says nothing.
A modal's question is a request ("Can you water my plants?"): it still names the one who
will do it."""


def _asked(tokens: list[str], at: int) -> bool:
    """Whether ``tokens[at]`` ("you") is asked about in a yes/no question.

    The sentence ends with "?" and puts an auxiliary right before it ("Do you...?") or
    opens with one ("Is there anything you remember?").
    """
    start, end = _sentence_span(tokens, at)
    if end == len(tokens) or tokens[end] != "?":
        return False
    return (at > 0 and _norm(tokens[at - 1]) in _AUX) or _norm(tokens[start]) in _AUX


def _sentence_span(tokens: list[str], at: int) -> tuple[int, int]:
    """(first token, closing mark or the end) of the sentence holding ``tokens[at]``."""
    start, end = at, at
    while start > 0 and tokens[start - 1] not in _ENDS:
        start -= 1
    while end < len(tokens) and tokens[end] not in _ENDS:
        end += 1
    return start, end


_SUBORDINATORS = frozenset("when if once until before after while because since whenever".split())


def _subordinate(tokens: list[str], where: int) -> bool:
    """Whether the subject at ``tokens[where]`` opens a subordinate clause ("when you")."""
    return where > 0 and _norm(tokens[where - 1]) in _SUBORDINATORS


def _subject_at(
    tokens: list[str], at: int, speaker: str, addressed: str | None, people: Sequence[str]
) -> tuple[str | None, int]:
    """(subject, where it stands) before ``tokens[at]`` in its clause (-1: nowhere).

    A clause that starts with a subjectless opener ("Just started doing aerial yoga")
    is the speaker's.
    """
    floor = max(-1, at - 1 - LOOKBACK)
    for back in range(at - 1, floor, -1):
        word = tokens[back]
        if word in _SOFT:
            continue
        if word in _BOUNDARY:
            return (speaker if _dropped_i(tokens, back + 1, at) else None), -1
        low = _norm(word)
        if low in _FIRST:
            return speaker, back
        if low in _SECOND:
            return (_ASKED if _asked(tokens, back) else addressed), back
        if low in _THIRD:
            return "third", back
        if word[0].isupper():
            named = match_speakers(word, list(people))
            vocative = back + 1 < len(tokens) and tokens[back + 1] in _BOUNDARY
            if named and not vocative:
                return named[0], back
            if not named and back > 0 and _norm(tokens[back - 1]) in RELATION_WORDS:
                return word, back  # "my friend Carla got a new job": Carla's
    if floor == -1 and _dropped_i(tokens, 0, at):  # the turn's first clause
        return speaker, -1
    return None, -1


_ACT_WORDS = (
    "ask asks asked inquire inquires inquired encourage encourages encouraged suggest "
    "suggests suggested offer offers offered mention mentions mentioned express expresses "
    "expressed emphasize emphasizes emphasized assure assures assured reassure reassures "
    "reassured thank thanks thanked compliment compliments complimented advise advises "
    "advised tell tells told recommend recommends recommended congratulate congratulates "
    "congratulated praise praises praised remind reminds reminded invite invites invited "
    "acknowledge acknowledges acknowledged reply replies replied respond responds responded "
    "promise promises promised apologize apologizes apologized urge urges urged wish wishes "
    "wished agree agrees agreed share shares shared say says said explain explains explained"
)
_ACTS = frozenset(stem for w in _ACT_WORDS.split() for stem in _ANALYZER(w))
"""Stems of the verbs of saying: "Maya asked Theo about his trip" is the speaker's act."""
_ACT_LEAD = re.compile(r"^(?P<name>[A-Z][\w-]*)(?: [A-Z][\w-]*)? (?:\w+ly )?(?P<verb>[a-z]+)\b")


def speech_act(statement: str, people: Sequence[str]) -> bool:
    """Whether ``statement`` reports what one of ``people`` said.

    "Maya asked Theo about his trip": a verb of saying right after a known person's name.
    Whoever spoke the source turn did the saying, whatever name the model put first.
    """
    lead = _ACT_LEAD.match(statement.strip())
    if lead is None or not match_speakers(lead.group("name"), list(people)):
        return False
    return bool(set(_ANALYZER(lead.group("verb"))) & _ACTS)


def grammar_owner(
    statement: str, turn_text: str, speaker: str, addressed: str | None, people: Sequence[str]
) -> str | None:
    """The owner the source turn's grammar gives the statement; ``"third"``; or None.

    A statement of what someone said ("Maya asked Theo...") is the speaker's. Otherwise
    every content word of the statement found in the turn votes for the subject of its
    clause (its first occurrence that has one); when no clause names one, the words vote
    by the pronouns of their sentences instead. The majority wins; a tie decides nothing.
    """
    if speech_act(statement, people):
        return speaker
    terms = content_terms(statement, people)
    tokens = _TOKEN.findall(turn_text)
    stems = [(_ANALYZER(t) or [""])[0] if t not in _BOUNDARY else "" for t in tokens]
    votes: Counter[str] = Counter()
    weak: Counter[str] = Counter()  # from sentences, counted only when no clause decides
    for term in terms:
        found = [
            (at, _subject_at(tokens, at, speaker, addressed, people))
            for at, stem in enumerate(stems)
            if stem == term
        ]
        # a word asked about in a yes/no question ("Do you enjoy cooking?") does not vote
        seen = [(at, hit) for at, hit in found if hit[0] != _ASKED]
        hit = next((h for _, h in seen if h[0]), None)
        if hit is not None:  # a subordinate clause's subject ("when you come") votes weakly
            (weak if _subordinate(tokens, hit[1]) else votes)[str(hit[0])] += 1
        elif seen:  # the pronouns of its sentence ("My fur babies mean everything to me")
            start, end = _sentence_span(tokens, seen[0][0])
            whole = _turn_owner(" ".join(tokens[start:end]), speaker, addressed)
            if whole is not None:
                weak[whole] += 1
    ranked = (votes or weak).most_common(2)
    if not ranked or (len(ranked) == 2 and ranked[0][1] == ranked[1][1]):
        return None
    return ranked[0][0]


def _turn_owner(turn_text: str, speaker: str, addressed: str | None) -> str | None:
    """The whole turn's owner when its pronouns point one way only."""
    first, second = bool(_FIRST_ANY.search(turn_text)), bool(_SECOND_ANY.search(turn_text))
    if first and not second:
        return speaker
    if second and not first:
        return addressed
    return None


_YOU = re.compile(r"\b(?:you|your|yours|yourself|you'?re|you'?ve|you'?ll|you'?d|ya|u)\b", re.I)
_IMPLIED_YOU = re.compile(
    r"\?|\b(?:congrat\w*|happy birthday|happy anniversary|good luck|well done|get well|"
    r"how's|how (?:was|is|did|are|were))\b",
    re.I,
)
"""A turn that speaks of the one addressed without "you": a question ("How was the
trip?"), congratulations or wishes ("Congrats on the new job!")."""


def _unreferenced(model: str, turn_text: str, speaker: str, addressed: str | None) -> bool:
    """Whether the model filed a fact under the one addressed by a turn that never names them.

    No "you", no name of theirs: "Pixie's fitting in great!" by Priya says nothing of
    Omar, so it gives no "Omar will play with other dogs".
    """
    if not model or not addressed or not match_speakers(model, [addressed]):
        return False
    if match_speakers(model, [speaker]) or _YOU.search(turn_text) or _IMPLIED_YOU.search(turn_text):
        return False
    return not mentions(turn_text, addressed) and not mentions(turn_text, model)


def relative(owner: str) -> bool:
    """Whether an owner is a relation word, no name: "Mom", "my sister", "Grandma"."""
    words = owner.casefold().split()
    return (
        bool(words)
        and len(words) <= 2
        and words[-1] in RELATION_WORDS
        and (len(words) == 1 or words[0] in ("my", "our", "your", "his", "her", "their"))
    )


def names(statement: str, person: str | None) -> bool:
    """Whether ``statement`` names ``person`` as a word of its own (no possessive)."""
    if not person:
        return False
    return re.search(rf"\b{re.escape(person)}\b(?!['’])", statement) is not None


def _label(model: str, label: str, turn_text: str) -> str:
    """The name to file under when the model's owner matches the speaker label ``label``.

    The label, where the model spelled it its own way ("Max" or "Theodore" for the speakers
    Maxine and Theo; "Thanks, Max!" only calls her so), so that one person's facts share
    one name; the model's name where the turn names a person so ("Priyanka got the job",
    told to the speaker Priya).
    """
    return model if model == label or person_named(model, turn_text) else label


def decide_owner(
    model_owner: str,
    statement: str,
    turn_text: str,
    speaker: str,
    addressed: str | None,
    people: Sequence[str],
    pets: Mapping[str, str] | None = None,
) -> OwnerVerdict:
    """The owner to file a fact under: the turn's grammar wins over the model.

    A pet's news is its keeper's: the one the turn names it for ("my rabbit Clover"), else
    the one ``pets`` (pet name -> keeper, :func:`~.relations.pet_keepers`) gives, unless a
    speaker has that name too.
    """
    model = model_owner.strip()
    if relative(model):  # "Mom passed away": the relative of whoever the turn says
        yours = re.search(rf"\byour {re.escape(model.split()[-1])}\b", turn_text, re.I)
        kin = addressed if yours and addressed else speaker
        return OwnerVerdict(kin, "corrected", kin)
    keeper = pet_keeper(model, turn_text, speaker, addressed) if model else None
    keepers = pets or {}
    if keeper is None and model in keepers and not match_speakers(model, list(people)):
        keeper = keepers[model]  # a speaker who shares a pet's name is no pet
    if keeper is not None:
        return OwnerVerdict(keeper, "corrected", keeper)
    if _unreferenced(model, turn_text, speaker, addressed):
        return OwnerVerdict(speaker, "corrected", None)
    found = grammar_owner(statement, turn_text, speaker, addressed, people)
    same = bool(model) and found not in (None, "third") and match_speakers(model, [found or ""])
    if found == "third":
        known = {speaker, addressed}
        if (
            model
            and model not in known
            and not any(match_speakers(model, [k or ""]) for k in known)
            and person_named(model, turn_text)
        ):
            return OwnerVerdict(model, "agreed", None)
        return OwnerVerdict(model, "undecided", None)
    if found is None and model and not match_speakers(model, list(people)):
        # an owner that is a word of the turn but no name in it ("Thirty years as a
        # mechanic..."): the speaker's, unless the speaker is only a role ("user")
        word = mentions(turn_text, model) and not person_named(model, turn_text)
        if word and speaker.casefold() not in ROLE_LABELS:
            return OwnerVerdict(speaker, "corrected", None)
    if found is None:
        whole = _turn_owner(turn_text, speaker, addressed)
        if whole is not None and model and match_speakers(model, [whole]):
            return OwnerVerdict(_label(model, whole, turn_text), "agreed", whole)
        if whole is None or not model or mentions(turn_text, model):
            return OwnerVerdict(model, "undecided", whole)
        # the whole turn's pronouns overrule the model when nothing else decides: on
        # annotated observations that fixes more wrong owners than it loses right ones
        return OwnerVerdict(whole, "corrected", whole)
    if same and found:
        return OwnerVerdict(_label(model, found, turn_text), "agreed", found)
    third = model and not match_speakers(model, list(people))
    if third and person_named(model, turn_text, within=True) and not names(statement, found):
        return OwnerVerdict(model, "agreed", found)  # a named third person the turn is about
    others = [p for p in people if p != found]
    if found and found.casefold() in ROLE_LABELS and model and not match_speakers(model, others):
        return OwnerVerdict(model, "agreed", found)  # the model knows the user's name
    return OwnerVerdict(found, "corrected", found)


__all__ = [
    "OwnerVerdict",
    "addressee",
    "decide_owner",
    "grammar_owner",
    "names",
    "relative",
    "speech_act",
]
