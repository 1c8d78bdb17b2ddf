"""Answer scores for LoCoMo, written from the definitions in EVAL_NOTES.md.

* mem0 token F1 (:func:`lamina_bench.evaluation.metrics.mem0_f1`) and BLEU-1
  (:func:`bleu1`), as mem0's evaluation computes them (categories 1-4);
* LoCoMo's own F1 with its per-category rules (:func:`locomo_f1`), category 5 included;
* refusal detection for category 5 (:func:`is_refusal`);
* evidence recall of the memories an answer was given (:func:`evidence_recall`).

Two deliberate differences from the reference code, both to stay offline:

* BLEU-1 tokenizes with :func:`word_tokens`, a regex approximation of NLTK's
  ``word_tokenize`` (Treebank rules) without its punkt sentence splitter, which is a
  download. Contractions, brackets, quotes and punctuation are split as Treebank does;
  a word-final period is split off unless the word holds another period (``u.s.``),
  where punkt would decide by sentence boundaries. BLEU-1 itself (clipped unigram
  precision times the brevity penalty, 0 without any unigram match) is exact: with
  weights (1, 0, 0, 0), NLTK's method1 smoothing only touches the zero-weight orders.
* LoCoMo F1 stems with the Snowball implementation of the original Porter algorithm;
  NLTK's ``PorterStemmer`` defaults to its own extensions, which stem a few rare words
  differently (e.g. ``dying``).
"""

from __future__ import annotations

import math
import re
import string
from collections import Counter
from collections.abc import Iterable

import snowballstemmer

from .metrics import mem0_f1

__all__ = [
    "LOCOMO_REFUSAL_PHRASES",
    "bleu1",
    "evidence_recall",
    "is_refusal",
    "locomo_f1",
    "locomo_tokens",
    "mem0_f1",
    "word_tokens",
]

LOCOMO_REFUSAL_PHRASES = ("no information available", "not mentioned")
"""LoCoMo scores a category-5 answer 1 when it contains one of these (case-insensitive)."""

_TREEBANK_STEPS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r'(^|[\s(\[{<])"'), r" \1 `` "),  # opening quotes, as Treebank writes them
    (re.compile(r'"'), " '' "),
    (re.compile(r"\.\.\."), " ... "),
    (re.compile(r"--"), " -- "),
    (re.compile(r"[;@#$%&?!()\[\]{}<>]"), r" \g<0> "),
    (re.compile(r"([:,])(?!\d)"), r" \1 "),  # 7:30 and 1,000 stay whole
    (re.compile(r"(?<=\w)(n't)\b"), r" \1"),
    (re.compile(r"(?<=\w)('s|'re|'ve|'ll|'d|'m)\b"), r" \1"),
    (re.compile(r"(?<=\w)'(?=\s|$)"), " ' "),
)
_ARTICLES = re.compile(r"\b(a|an|the|and)\b")
_PUNCT = str.maketrans("", "", string.punctuation)


def word_tokens(text: object) -> list[str]:
    """Lowercase ``text`` and split it the way NLTK's ``word_tokenize`` roughly does."""
    value = " " + str(text).lower() + " "
    for pattern, replacement in _TREEBANK_STEPS:
        value = pattern.sub(replacement, value)
    tokens: list[str] = []
    for token in value.split():
        if len(token) > 1 and token.endswith(".") and "." not in token[:-1]:
            tokens.extend((token[:-1], "."))
        else:
            tokens.append(token)
    return tokens


def bleu1(prediction: object, gold: object) -> float:
    """mem0's BLEU-1: clipped unigram precision times the brevity penalty.

    0 when either side is empty or None, or when no unigram matches.
    """
    if prediction is None or gold is None:
        return 0.0
    hyp, ref = word_tokens(prediction), word_tokens(gold)
    if not hyp or not ref:
        return 0.0
    ref_counts = Counter(ref)
    matches = sum(min(n, ref_counts[w]) for w, n in Counter(hyp).items())
    if matches == 0:
        return 0.0
    brevity = 1.0 if len(hyp) > len(ref) else math.exp(1 - len(ref) / len(hyp))
    return brevity * matches / len(hyp)


class _Stemmer:
    """The Porter stemmer, created on first use and kept for the process."""

    def __init__(self) -> None:
        self._stemmer: snowballstemmer.stemmer | None = None

    def stem(self, words: list[str]) -> list[str]:
        if self._stemmer is None:
            self._stemmer = snowballstemmer.stemmer("porter")
        return list(self._stemmer.stemWords(words))


_STEMMER = _Stemmer()


def locomo_tokens(text: object) -> list[str]:
    """LoCoMo's normalisation: drop commas, lowercase, drop punctuation and a/an/the/and, stem."""
    value = str(text).replace(",", "").lower().translate(_PUNCT)
    words = _ARTICLES.sub(" ", value).split()
    return _STEMMER.stem(words) if words else []


def _f1(prediction: str, gold: str) -> float:
    pred, ref = locomo_tokens(prediction), locomo_tokens(gold)
    common = sum((Counter(pred) & Counter(ref)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(pred), common / len(ref)
    return 2 * precision * recall / (precision + recall)


def is_refusal(prediction: object) -> bool:
    """Whether the answer says the information is not available (LoCoMo's category-5 rule)."""
    text = str(prediction or "").lower()
    return any(phrase in text for phrase in LOCOMO_REFUSAL_PHRASES)


def locomo_f1(prediction: object, gold: object, category: int) -> float:
    """LoCoMo's F1 with its per-category rules.

    1 (multi-hop): both sides split on commas; each gold part takes its best F1 over the
    predicted parts; the mean over gold parts. 3: only the gold before the first ``;``.
    2 and 4: plain F1 over stemmed token multisets. 5: 1 if the answer refuses, else 0.
    """
    if category == 5:
        return 1.0 if is_refusal(prediction) else 0.0
    pred, ref = str(prediction or ""), str(gold if gold is not None else "")
    if category == 1:
        preds = [p.strip() for p in pred.split(",")]
        golds = [g.strip() for g in ref.split(",")]
        return sum(max(_f1(p, g) for p in preds) for g in golds) / len(golds)
    if category == 3:
        ref = ref.split(";")[0].strip()
    return _f1(pred, ref)


def evidence_recall(
    evidence: Iterable[str], used: Iterable[str], session_of: dict[str, str]
) -> tuple[float | None, float | None]:
    """Turn-recall and session-recall of the gold evidence among the turns used.

    A session counts when any used turn belongs to it. None when there is no evidence.
    """
    gold = set(evidence)
    if not gold:
        return None, None
    used_turns = set(used)
    gold_sessions = {session_of[e] for e in gold if e in session_of}
    used_sessions = {session_of[u] for u in used_turns if u in session_of}
    turn = len(gold & used_turns) / len(gold)
    session = len(gold_sessions & used_sessions) / len(gold_sessions) if gold_sessions else None
    return turn, session
