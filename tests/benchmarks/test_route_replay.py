"""benchmarks/route_replay.py: a per-question choice between two answered arms, replayed."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.bench_scripts import load_benchmark

QUESTIONS = [  # (question, category): the ids number them in this order
    ("When did Ana move to Porto?", 2),
    ("What pets does Leo have?", 1),
    ("What cities did Ana live in before 2024?", 4),
    ("Where does Ana live?", 4),
]
SAMPLE: dict[str, Any] = {
    "sample_id": "s1",
    "conversation": {
        "speaker_a": "Ana",
        "speaker_b": "Leo",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ana", "dia_id": "D1:1", "text": "I moved to Porto last week!"},
            {"speaker": "Leo", "dia_id": "D1:2", "text": "I adopted a cat called Miso."},
        ],
    },
    "qa": [
        {"question": q, "answer": "x", "category": c, "evidence": ["D1:1"]} for q, c in QUESTIONS
    ],
}


@pytest.fixture()
def bench(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    return load_benchmark("route_replay", monkeypatch)


def _files(tmp_path: Path, base: list[float], other: list[float]) -> tuple[Path, Path]:
    data = tmp_path / "locomo.json"
    data.write_text(json.dumps([SAMPLE]), encoding="utf-8")
    journal = tmp_path / "journal.jsonl"
    rows = [
        {"qid": f"s1:{n}", "arm": arm, "category": QUESTIONS[n][1], "f1": f1}
        for arm, scores in (("base", base), ("facts", other))
        for n, f1 in enumerate(scores)
    ]
    journal.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return data, journal


def test_questions_about_time_keep_the_base_answer_and_the_rest_take_the_routed_one(
    bench: ModuleType, tmp_path: Path
) -> None:
    data, journal = _files(tmp_path, base=[1.0, 0.0, 0.5, 0.0], other=[0.0, 1.0, 0.0, 0.5])
    runs = [(journal, ["s1"])]
    found = bench.replay(
        runs, data=data, sessions=None, base="base", routed="facts", rule="untimed"
    )
    assert found["questions"] == 4 and found["routed"] == 2  # questions 1 and 3 are not timed
    assert found["base_f1"] == 0.375 and found["routed_f1"] == 0.75
    assert found["difference"]["c1"]["mean"] == 1.0
    assert found["difference"]["c2"]["mean"] == 0.0  # "when": the base answer is kept
    assert found["difference"]["all"]["mean"] == 0.375 and found["difference"]["all"]["n"] == 4


def test_only_aggregation_questions_not_about_time_take_the_routed_answer(
    bench: ModuleType, tmp_path: Path
) -> None:
    data, journal = _files(tmp_path, base=[1.0, 0.0, 0.5, 0.0], other=[0.0, 1.0, 0.0, 0.5])
    found = bench.replay([(journal, ["s1"])], data=data, sessions=None, base="base", routed="facts")
    assert found["routed"] == 1  # "What pets...": "What cities ... before 2024" names a time
    assert found["routed_f1"] == 0.625 and found["difference"]["c4"]["mean"] == 0.0


def test_a_journal_of_other_questions_is_refused(bench: ModuleType, tmp_path: Path) -> None:
    data, journal = _files(tmp_path, base=[1.0], other=[1.0])
    rows = journal.read_text(encoding="utf-8").replace('"category": 2', '"category": 3')
    journal.write_text(rows, encoding="utf-8")
    with pytest.raises(ValueError, match="not a question of"):
        bench.replay([(journal, ["s1"])], data=data, sessions=None, base="base", routed="facts")


def test_arms_that_share_no_question_are_refused(bench: ModuleType, tmp_path: Path) -> None:
    data, journal = _files(tmp_path, base=[1.0], other=[])
    with pytest.raises(ValueError, match="no question was answered by both"):
        bench.replay([(journal, ["s1"])], data=data, sessions=None, base="base", routed="facts")
