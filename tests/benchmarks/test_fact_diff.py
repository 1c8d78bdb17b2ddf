"""benchmarks/fact_diff.py: the facts two builds of the same conversations hold differently."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType

import pytest

from lamina.records.model import FactRecord, RawTurn
from lamina.stores import ChromaMemoryStore
from lamina.testing import FakeEmbeddings
from tests.bench_scripts import load_benchmark

NS = "locomo:c1"
AT = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)


@pytest.fixture()
def bench(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    module = load_benchmark("fact_diff")
    monkeypatch.setattr(module, "MiniLMEmbeddings", FakeEmbeddings)
    return module


def _build(path: Path, texts: list[tuple[str, str]]) -> None:
    store = ChromaMemoryStore.persistent(path, embeddings=FakeEmbeddings())
    turn = RawTurn(id="r1", namespace=NS, speaker="Deborah", text="I lived above a bakery.",
                   occurred_at=AT, session_id="s1", turn_index=0)  # fmt: skip
    facts = [
        FactRecord(
            id=f"f{n}", namespace=NS, text=text, subject=owner, source_ids=["r1"], occurred_at=AT
        )
        for n, (owner, text) in enumerate(texts)
    ]
    store.add(NS, [turn, *facts])


def test_only_the_facts_that_differ_are_printed_and_counted(
    bench: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    same = ("Deborah", "Deborah lived above a bakery.")
    _build(tmp_path / "a", [same, ("Deborah", "Jolene lived above a bakery as a kid.")])
    _build(tmp_path / "b", [same, ("Deborah", "Deborah lived above a bakery as a kid.")])
    assert bench.main([str(tmp_path / "a"), str(tmp_path / "b"), "--conversations", "c1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[:3] == [
        "c1 Deborah: I lived above a bakery.",
        "  - [Deborah] Jolene lived above a bakery as a kid.",
        "  + [Deborah] Deborah lived above a bakery as a kid.",
    ]
    counts = json.loads(lines[-1])
    assert counts == {"facts_before": 2, "facts_after": 2, "only_before": 1, "only_after": 1}


def test_a_folder_without_a_store_is_refused(bench: ModuleType, tmp_path: Path) -> None:
    with pytest.raises(SystemExit):
        bench.main([str(tmp_path / "none"), str(tmp_path / "none"), "--conversations", "c1"])
