"""A note that keeps its source turn's voice, told again in the third person (no LLM).

A 1.5B model often copies a turn and only puts a name in front: from Theo's "The bank
approved my bakery loan yesterday" it writes "Theo approved my bakery loan yesterday".
The note now says Theo approved a loan, and "my" is nobody's once it leaves the turn. In
a built memory, about one fact in seven kept an "I", "me" or "my" of its source turn.
Two repairs, each counted by the caller:

* :func:`told_subject`: a note "<Name> <words>" whose words the turn says after another
  subject ("The bank approved my bakery loan", "Your kind words mean a lot") gets that
  subject back, in the third person: "The bank approved Theo's bakery loan", "Priya's
  kind words mean a lot". A pronoun subject ("They", "It") is left alone: the turn does
  not say whom it means.
* :func:`in_third_person`: the first-person singular words left in a note become the
  speaker's: "I'm" -> "Maya is", "I love" -> "Maya loves", "my violin" ->
  "Maya's violin" (or "her violin" when the note leads with her and calls her "she").
  Quotations and shared-image captions keep their words.
* :func:`spoken_subject`: a note that dropped its subject ("Moving to Lisbon in
  September") gets the turn's "I", told in the third person ("Maya is moving ...").
"""

from __future__ import annotations

import re

_WORDS = re.compile(r"[A-Za-z0-9][\w'’-]*")
_CLAUSE = re.compile(r"[.!?;:,(\[\"“”]|\b(?:and|but|so|because|when|while|that|which|who)\b", re.I)
_MATCHED = 3
"""Words of a note, after its leading name, that its turn must say word for word."""
_SUBJECT_WORDS = 4
"""The most words a restored subject may have ("the bank", "my best friend")."""
_UNSAID_SUBJECTS = frozenset(
    "it its they their them he his him she her this that these those there here we us our"
    .split()
)  # fmt: skip
"""Subjects a note cannot take over: the turn alone does not say whom they mean."""
_SPEAKERS = re.compile(r"i|i'\w+|me|you|you'\w+")
"""The turn's "I" and "you": whose they are is the owner check's to say."""
_OPENERS = frozenset(
    "and but so then also just yeah yes oh well now plus even actually really".split()
)
_LEAD = re.compile(r"^(?P<name>[A-Z][\w-]*)(?P<poss>['’]s)?\s+")

_ADVERBS = frozenset(
    "just also even still always never really actually finally recently often sometimes "
    "usually totally definitely already ever too kinda sorta literally absolutely truly "
    "only mostly barely hardly simply".split()
)
_ADVERB = rf"(?:{'|'.join(sorted(_ADVERBS))})"
"""One of :data:`_ADVERBS`, as a pattern (between "I" and its verb: "I really try")."""
_UNCHANGED = frozenset(
    "can could will would shall should may might must can't couldn't won't wouldn't "
    "shouldn't didn't wasn't did had was gotta wanna gonna used gave went got made felt "
    "saw took came found thought knew told ate ran wrote bought brought began became left "
    "met kept lost sat stood won heard held put set let cut hit hurt spent sent built "
    "taught caught fought sold chose drove flew grew drew threw wore rode spoke broke woke "
    "forgot swam sang fell led fed slept meant paid said understood learnt dreamt burnt "
    "quit tried".replace("’", "'").split()
)
"""Words after "I" that stay as they are: modals and past tenses."""
_IRREGULAR = {"am": "is", "have": "has", "do": "does", "don't": "doesn't", "haven't": "hasn't",
              "were": "was", "go": "goes"}  # fmt: skip
_CONTRACTED = {"m": "is", "ve": "has", "ll": "will", "d": "would"}
_PAIRED = re.compile(r"(?:\b[A-Z][\w'’-]*|\b(?i:my|our|your|his|her|their)\s+\w+)\s+(?:and|or)\s*$")
"""Words before "I" that make it one of several ("Max and I went", "my wife and I love"):
the verb stays plural. After a clause ("..., and I hope") it is the speaker's alone."""
_CONTRACTION = re.compile(r"(?<![\w-])I['’](?P<tail>m|ve|ll|d)(?![\w-])(?P<been>(?=\s+been\b))?")
_I_VERB = re.compile(
    rf"(?<![\w-])I(?![\w'’-])(?P<adverbs>(?:\s+{_ADVERB})*)"
    r"(?P<space>\s+)(?P<verb>[A-Za-z][A-Za-z'’]*)"
)
FIRST_PERSON = re.compile(
    r"(?<![\w'’-])(?:I|I['’](?:m|ve|ll|d)|[Mm]e|[Mm]y|mine|myself)(?![\w'’-])"
)
"""A first-person singular word (not in "me-time")."""
_NAMED_BEFORE = re.compile(r"[\w,]\s+[A-Z][a-z]*\s+$")
"""A capitalized word inside a sentence right before "I": a name's numeral ("World War
I"), no pronoun."""
_KEPT = re.compile(r"\"[^\"]*\"|“[^”]*”|\[[^\]]*\]")
"""Quotations and bracketed captions: their words stay as written."""


def _tokens(text: str) -> list[tuple[str, int]]:
    """The words of ``text``, case-folded, with where each starts."""
    return [(m.group().casefold().replace("’", "'"), m.start()) for m in _WORDS.finditer(text)]


def told_subject(statement: str, speaker: str, addressed: str | None, turn_text: str) -> str | None:
    """The note with the subject its turn gives its words, or None when it keeps its own.

    "Theo approved my bakery loan" from Theo's "The bank approved my bakery loan" ->
    "The bank approved my bakery loan" (:func:`in_third_person` then makes "my" Theo's);
    "Omar's kind words mean a lot" from Omar's "Your kind words mean a lot" (to Priya) ->
    "Priya's kind words mean a lot".
    """
    lead = _LEAD.match(statement)
    if lead is None:
        return None
    rest = statement[lead.end() :]
    said = [w for w, _ in _tokens(rest)][:_MATCHED]
    turn = _tokens(turn_text)
    if len(said) < _MATCHED:
        return None
    for at in range(1, len(turn) - _MATCHED + 1):
        if [w for w, _ in turn[at : at + _MATCHED]] != said:
            continue
        words = _CLAUSE.split(turn_text[: turn[at][1]])[-1].split()
        while words and words[0].casefold() in _OPENERS:
            words.pop(0)
        if not words or len(words) > _SUBJECT_WORDS:
            return None
        folded = [w.casefold().replace("’", "'") for w in words]
        if set(folded) & _UNSAID_SUBJECTS or any(_SPEAKERS.fullmatch(w) for w in folded):
            return None  # a pronoun names nobody here; "I" and "you" are the owner check's
        if lead.group("name").casefold() in {re.sub(r"'s$", "", w) for w in folded}:
            return None
        subject = " ".join(words)
        if "your" in folded:
            if not addressed:
                return None
            subject = re.sub(r"(?i)\byour\b", f"{addressed}'s", subject)
        return subject[0].upper() + subject[1:] + " " + rest
    return None


def spoken_subject(statement: str, speaker: str, turn_text: str) -> str | None:
    """A note that dropped its subject, with the one its turn says, or None.

    "Moving to Lisbon in September" from Maya's "I'm moving to Lisbon in September" ->
    "Maya is moving to Lisbon in September": the note's first word, a participle or a past
    tense, follows the turn's "I" (with its auxiliary and adverbs), which is told in the
    third person.
    """
    first = re.match(r"[A-Z][a-z]+\b", statement)
    if first is None:
        return None
    low = first.group().casefold()
    if not (low.endswith(("ing", "ed")) or low in _UNCHANGED):  # "Love is all you need"
        return None
    word = re.escape(low)
    said = re.search(
        rf"(?i)(?<![\w'’-])(I(?:['’](?:m|ve|ll|d))?(?:\s+(?:am|was|have|had|will|would))?"
        rf"(?:\s+{_ADVERB})*)\s+{word}(?![\w'’-])",
        turn_text,
    )
    if said is None or not said.group(1).startswith("I"):
        return None
    told = _shifted(f"{said.group(1)} {low}", speaker, None)[0]
    return told + statement[first.end() :]


def _gender(statement: str) -> str | None:
    she = len(re.findall(r"(?i)\b(?:she|her|hers|herself)\b", statement))
    he = len(re.findall(r"(?i)\b(?:he|him|his|himself)\b", statement))
    return "f" if she and not he else "m" if he and not she else None


def _present(verb: str) -> str:
    """``verb`` as "she" would say it: "love" -> "loves", "try" -> "tries"."""
    low = verb.casefold().replace("’", "'")
    if low in _IRREGULAR:
        return _IRREGULAR[low]
    if low in _UNCHANGED or low.endswith(("ed", "s")) or "'" in low:
        return verb
    if low.endswith("y") and low[-2:-1] not in ("a", "e", "i", "o", "u"):
        return verb[:-1] + "ies"
    if low.endswith(("sh", "ch", "x", "z", "o")):
        return verb + "es"
    return verb + "s"


def _shifted(text: str, speaker: str, gender: str | None) -> tuple[str, int]:
    """``text`` (no quotation in it) with its first-person singular words the speaker's."""
    changed = 0
    poss = {"f": "her", "m": "his"}.get(gender or "", f"{speaker}'s")
    words = {
        "my": poss,
        "mine": f"{speaker}'s",
        "me": {"f": "her", "m": "him"}.get(gender or "", speaker),
        "myself": {"f": "herself", "m": "himself"}.get(gender or "", speaker),
    }

    def contraction(m: re.Match[str]) -> str:
        nonlocal changed
        changed += 1
        aux = "had" if m.group("tail") == "d" and m.group("been") is not None else None
        return f"{speaker} {aux or _CONTRACTED[m.group('tail')]}"

    def subject(m: re.Match[str]) -> str:
        nonlocal changed
        if _NAMED_BEFORE.search(text[: m.start()]):  # "World War I", "Henry I"
            return m.group()
        changed += 1
        verb = m.group("verb")
        if not _PAIRED.search(text[: m.start()]):
            verb = _present(verb)
        return f"{speaker}{m.group('adverbs')}{m.group('space')}{verb}"

    def other(m: re.Match[str]) -> str:
        nonlocal changed
        changed += 1
        new = words[m.group().casefold()]
        return new[0].upper() + new[1:] if m.group()[0].isupper() else new

    text = _CONTRACTION.sub(contraction, text)
    text = _I_VERB.sub(subject, text)

    def alone(m: re.Match[str]) -> str:
        nonlocal changed
        if _NAMED_BEFORE.search(text[: m.start()]):
            return m.group()
        changed += 1
        return speaker

    text = re.sub(r"(?<![\w'’-])I(?![\w'’-])", alone, text)
    text = re.sub(r"(?<![\w'’-])(?:my|My|mine|me|Me|myself)(?![\w'’-])", other, text)
    return text, changed


def in_third_person(statement: str, speaker: str) -> tuple[str, int]:
    """The note with its first-person singular words made the speaker's; how many changed.

    "my" becomes "her" or "his" only in a note that leads with the speaker and calls them
    "she" or "he" alone; else the speaker's name. Quotations and bracketed captions keep
    their words.
    """
    gender = _gender(statement) if statement.startswith(speaker) else None
    # "Omar I'm gonna keep on believing": the name stood in front of the turn's own words
    statement = re.sub(rf"^{re.escape(speaker)}[,:]?\s+(?=I(?:['’]\w+)?\b)", "", statement)
    out, last, changed = [], 0, 0
    for kept in [*_KEPT.finditer(statement), None]:
        end = kept.start() if kept else len(statement)
        text, n = _shifted(statement[last:end], speaker, gender)
        out.append(text + (kept.group() if kept else ""))
        changed += n
        last = kept.end() if kept else end
    return "".join(out), changed


__all__ = ["FIRST_PERSON", "in_third_person", "spoken_subject", "told_subject"]
