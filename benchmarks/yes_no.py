"""The probes' one question to a served model: how much of a yes/no answer is "yes".

Shared by ``update_signal.py`` and ``answer_support_signal.py``: one chat call with one
output token at temperature 0 and no prompt cache, whose top log-probabilities are
summed per answer word (casefolded, stripped) and renormalised over "yes" and "no".
"""

from __future__ import annotations

import json
import math
import urllib.request
from collections.abc import Sequence

SYSTEM = "You answer with one word: yes or no."


def first_token(base_url: str, prompt: str, system: str) -> dict[str, float]:
    """Probability mass of the first reply token's top alternatives, per casefolded word."""
    body = {
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": prompt}],
        "max_tokens": 1,
        "temperature": 0,
        "logprobs": True,
        "top_logprobs": 10,
        "cache_prompt": False,
    }
    request = urllib.request.Request(
        base_url.rstrip("/") + "/chat/completions",
        json.dumps(body).encode(),
        {"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=600) as reply:
        top = json.load(reply)["choices"][0]["logprobs"]["content"][0]["top_logprobs"]
    mass: dict[str, float] = {}
    for t in top:
        key = t["token"].strip().casefold()
        mass[key] = mass.get(key, 0.0) + math.exp(t["logprob"])
    return mass


def p_yes(base_url: str, prompt: str, system: str = SYSTEM) -> float:
    """P("yes") / (P("yes") + P("no")) of the first answer token; 0.5 when neither shows."""
    mass = first_token(base_url, prompt, system)
    yes, no = mass.get("yes", 0.0), mass.get("no", 0.0)
    return yes / (yes + no) if yes + no else 0.5


def auc(positives: Sequence[float], negatives: Sequence[float]) -> float | None:
    """The probability that a random positive scores above a random negative (ties half)."""
    if not positives or not negatives:
        return None
    wins = sum((p > n) + 0.5 * (p == n) for p in positives for n in negatives)
    return round(wins / (len(positives) * len(negatives)), 3)
