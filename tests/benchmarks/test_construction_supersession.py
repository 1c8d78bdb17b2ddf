"""The supersession benchmark, end to end with the fake model (no LLM), on 4 items."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import pytest

from lamina.testing import FakeEmbeddings
from lamina_bench.evaluation.resume_journal import ResumeJournal
from tests.bench_scripts import load_benchmark

IDS = ["u01-moved-city", "c01-second-pet", "u04-new-job-congrats", "c03-hypothetical-move"]


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_benchmark("construction_supersession")


def test_the_items_are_hand_written_pairs_and_controls(bench: ModuleType) -> None:
    items = bench.load_items()
    kinds = [i["kind"] for i in items]
    assert kinds.count("update") >= 40 and kinds.count("control") >= 40
    assert kinds[:4] == ["update", "control", "update", "control"]  # interleaved
    for item in items:
        assert 1 <= len(item["earlier"]["turns"]) <= 3 and 1 <= len(item["later"]["turns"]) <= 3
        assert item["later"]["date"] > item["earlier"]["date"]
        assert item["person"] in item["speakers"]
        assert ("outdated" in item) == (item["kind"] == "update")


def test_run_supersession_in_fake_mode(bench: ModuleType, tmp_path: Path) -> None:
    journal = ResumeJournal(tmp_path / "journal.jsonl", {"model": "fake"}, key="id")
    result = bench.run_supersession(
        bench.fake_model(4),
        embeddings=FakeEmbeddings(),
        ids=IDS,
        policy="session",
        journal=journal,
    )
    rows = {r["id"]: r for r in result["per_item"]}
    assert list(rows) == [IDS[0], IDS[1], IDS[3], IDS[2]]  # the file's interleaved order
    # "I moved to Porto" is an update cue: no call; the new job goes to the fake model,
    # which confirms every pair it is asked about
    assert rows["u01-moved-city"]["old_superseded"] and rows["u01-moved-city"]["cue_updates"] == 1
    assert rows["u01-moved-city"]["update_checks"] == 0
    assert rows["u04-new-job-congrats"]["old_superseded"]
    assert rows["u04-new-job-congrats"]["update_checks"] == 1
    assert result["supersede_recall"] == 1.0
    # a second pet shares the pet slot but says nothing of a change (not asked); a
    # hypothetical is never paired
    assert rows["c01-second-pet"]["update_checks"] == 0
    assert rows["c03-hypothetical-move"]["update_checks"] == 0
    assert result["false_supersede_rate"] == 0.0
    # superseded facts are valid until the later turn's time, never the injected clock
    assert result["wallclock_validity"] == 0 and result["superseded_records"] >= 2
    moved = [f for f in rows["u01-moved-city"]["facts"] if f["superseded"]]
    # "I moved to Porto last week", said on 27 January: the move began on 15 January
    assert [f["valid_to"] for f in moved] == ["2024-01-15T00:00:00+00:00"]
    assert result["tokens_per_item"] > 0 and result["policy"] == "session"
    # resumed from the journal: nothing is built again, the figures are the same
    again = bench.run_supersession(
        bench.fake_model(0), embeddings=FakeEmbeddings(), ids=IDS, policy="session",
        journal=ResumeJournal(tmp_path / "journal.jsonl", {"model": "fake"}, key="id"),
    )  # fmt: skip
    assert {k: v for k, v in again.items() if k != "per_item"} == {
        k: v for k, v in result.items() if k != "per_item"
    }
    lines = (tmp_path / "journal.jsonl").read_text().splitlines()
    assert json.loads(lines[0]) == {"settings": {"model": "fake"}} and len(lines) == 5


def test_a_journal_of_other_settings_is_refused(bench: ModuleType, tmp_path: Path) -> None:
    ResumeJournal(tmp_path / "j.jsonl", {"model": "a"}, key="id")
    with pytest.raises(SystemExit, match="other settings"):
        ResumeJournal(tmp_path / "j.jsonl", {"model": "b"}, key="id")


def test_the_cli_needs_exactly_one_model(bench: ModuleType) -> None:
    assert bench.main(["--limit", "1"]) == 2
    assert bench.main(["--fake", "--base-url", "http://x/v1", "--limit", "1"]) == 2


def test_the_fake_that_rejects_every_pair_measures_the_cues_alone(bench: ModuleType) -> None:
    result = bench.run_supersession(
        bench.fake_model(4, confirm=False), embeddings=FakeEmbeddings(), ids=IDS, policy="session"
    )
    rows = {r["id"]: r for r in result["per_item"]}
    assert rows["u01-moved-city"]["old_superseded"]  # by its cue
    assert not rows["u04-new-job-congrats"]["old_superseded"]  # asked, and rejected
    assert result["supersede_recall"] == 0.5 and result["cue_updates"] == 1
    off = bench.run_supersession(
        bench.fake_model(4, confirm=False), embeddings=FakeEmbeddings(), ids=IDS[:1],
        policy="session", update_cues=False,
    )  # fmt: skip
    assert off["supersede_recall"] == 0.0 and off["update_cues"] is False
