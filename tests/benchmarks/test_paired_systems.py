"""benchmarks/paired_systems.py: any two systems of one eval run, paired question by question."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.bench_scripts import load_benchmark


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_benchmark("paired_systems")


def answer(system: str, n: int, category: int, f1: float) -> dict[str, Any]:
    return {
        "kind": "answer",
        "system": system,
        "conversation": "conv-x",
        "qid": f"conv-x:q{n}",
        "category": category,
        "answer": "a",
        "raw_answer": "a",
        "refused": False,
        "locomo_f1": f1,
    }


def run_folder(tmp_path: Path) -> Path:
    rows = []
    for n in range(6):
        category = 1 if n < 3 else 4
        rows.append(answer("a", n, category, 1.0 if category == 1 else 0.5))
        rows.append(answer("b", n, category, 0.0 if category == 1 else 0.5))
    rows.append(answer("a", 9, 5, 1.0))  # category 5 is left out of the pairing
    rows.append(answer("b", 9, 5, 0.0))
    rows.append(answer("a", 7, 4, 1.0))  # answered by one system only: not paired
    (tmp_path / "results.json").write_text(json.dumps({"questions": rows}))
    return tmp_path


def test_pairs_the_questions_both_answered_overall_and_per_category(
    bench: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert bench.main([str(run_folder(tmp_path)), "a", "b"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1].startswith("c1-4: +0.500") and out[1].endswith("over 6 questions")
    assert out[2] == "c1: +1.000 [+1.000, +1.000] over 3 questions"
    assert out[3] == "c2: no question both answered"
    assert out[5] == "c4: +0.000 [+0.000, +0.000] over 3 questions"


def test_a_system_without_answers_is_refused(bench: ModuleType, tmp_path: Path) -> None:
    with pytest.raises(SystemExit):
        bench.main([str(run_folder(tmp_path)), "a", "mem0"])
    with pytest.raises(SystemExit):
        bench.main([str(tmp_path / "nowhere"), "a", "b"])
