"""Answer and retrieval metrics, written from the descriptions in EVAL_NOTES.md."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

_MEM0_PUNCT = str.maketrans({".": " ", ",": " ", "!": " ", "?": " "})


def mem0_tokens(text: object) -> set[str]:
    """mem0's F1 tokens: str, strip, lowercase, ``. , ! ?`` to spaces, split; as a set."""
    return set(str(text).strip().lower().translate(_MEM0_PUNCT).split())


def mem0_f1(prediction: object, gold: object) -> float:
    """mem0-style token F1 over token sets; 0 when either side is empty or None."""
    if prediction is None or gold is None:
        return 0.0
    pred, ref = mem0_tokens(prediction), mem0_tokens(gold)
    if not pred or not ref:
        return 0.0
    common = len(pred & ref)
    if common == 0:
        return 0.0
    precision, recall = common / len(pred), common / len(ref)
    return 2 * precision * recall / (precision + recall)


def recall_at(gold: Iterable[str], ranked: Sequence[str], k: int) -> float:
    """Share of ``gold`` found in the first ``k`` of ``ranked``."""
    wanted = set(gold)
    if not wanted:
        return 0.0
    return len(wanted & set(ranked[:k])) / len(wanted)


def first_distinct(items: Iterable[str], k: int) -> list[str]:
    """The first ``k`` distinct items, in order (e.g. sessions of ranked turns)."""
    return list(dict.fromkeys(items))[:k]
