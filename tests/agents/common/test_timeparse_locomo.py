"""Date accuracy of the deterministic resolver on hand-labelled LoCoMo turns.

``tests/data/locomo_relative_dates.json`` holds only ids, the expressions and labels made
by hand (see ``tests/data/README.md``); the turn texts come from LoCoMo itself, which is
not in the repository, so the test is skipped where the dataset is absent; it is read from
``../shared/data/locomo/locomo10.json`` next to the checkout.
"""

import json
from datetime import date
from pathlib import Path

import pytest

from lamina.agents.common.timeparse import resolve_times
from lamina_bench.datasets.locomo import default_locomo_path

LABELS = Path(__file__).parents[2] / "data" / "locomo_relative_dates.json"
TARGET = 0.90


def _turn_texts() -> dict[tuple[str, str], str]:
    path = default_locomo_path()
    if not path.exists():
        pytest.skip(f"LoCoMo is not available here (expected at {path})")
    texts = {}
    for conv in json.loads(Path(path).read_text()):
        for key, turns in conv["conversation"].items():
            if key.startswith("session_") and isinstance(turns, list):
                for turn in turns:
                    texts[(conv["sample_id"], turn["dia_id"])] = turn["text"]
    return texts


def _matching(refs, expression):
    want = expression.lower()
    return [r for r in refs if want in r.expression.lower() or r.expression.lower() in want]


def test_at_least_ninety_percent_of_labelled_dates_match():
    texts = _turn_texts()
    labels = json.loads(LABELS.read_text())
    entries = labels["entries"]
    assert len(entries) >= 50
    wrong = []
    for e in entries:
        refs = resolve_times(
            texts[(e["conversation"], e["dia_id"])], date.fromisoformat(e["session_date"])
        )
        found = _matching(refs, e["expression"])
        got = (str(found[0].start), str(found[0].end)) if found else None
        if got != (e["start"], e["end"]):
            wrong.append((e["conversation"], e["dia_id"], e["expression"], got))
    accuracy = 1 - len(wrong) / len(entries)
    assert accuracy >= TARGET, f"accuracy {accuracy:.3f} < {TARGET}; wrong: {wrong}"


def test_vague_expressions_stay_text():
    texts = _turn_texts()
    for e in json.loads(LABELS.read_text())["unresolvable"]:
        refs = resolve_times(
            texts[(e["conversation"], e["dia_id"])], date.fromisoformat(e["session_date"])
        )
        assert not _matching(refs, e["expression"]), e
