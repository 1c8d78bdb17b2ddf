"""benchmarks/coverage_misses.py: why an observation is not covered by a built fact."""

from __future__ import annotations

from datetime import UTC, datetime
from types import ModuleType
from typing import Any

import pytest

from lamina.records.model import FactRecord, RawTurn
from lamina.stores import ChromaMemoryStore
from lamina.testing import FakeEmbeddings
from lamina_bench.datasets.locomo import parse_conversation
from lamina_bench.datasets.locomo_annotations import parse_annotations
from tests.bench_scripts import load_benchmark

SAMPLE: dict[str, Any] = {
    "sample_id": "s1",
    "conversation": {
        "speaker_a": "Ana",
        "speaker_b": "Leo",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ana", "dia_id": "D1:1", "text": "I moved to Porto last week!"},
            {"speaker": "Leo", "dia_id": "D1:2", "text": "Congrats! I start at the bakery."},
            {"speaker": "Ana", "dia_id": "D1:3", "text": "I also adopted a cat."},
        ],
        "session_2_date_time": "1:56 pm on 9 June, 2023",
        "session_2": [{"speaker": "Leo", "dia_id": "D2:1", "text": "I sold my car."}],
    },
    "observation": {
        "session_1_observation": {
            "Ana": [["Ana moved to Porto.", "D1:1"], ["Ana adopted a cat.", "D1:3"]],
            "Leo": [["Leo starts at a bakery.", "D1:2"]],
        },
        "session_2_observation": {"Leo": [["Leo sold his car.", "D2:1"]]},
    },
    "session_summary": {"session_1_summary": "Ana moved.", "session_2_summary": "Leo sold."},
    "qa": [],
}


@pytest.fixture
def bench(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    return load_benchmark("coverage_misses", monkeypatch)  # it imports another script


def test_each_observation_left_out_is_sorted_by_its_cause(bench: ModuleType) -> None:
    conv = parse_conversation(SAMPLE)
    notes = parse_annotations(SAMPLE, {t.dia_id for t in conv.turns})
    store = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())

    def source(dia: str) -> str:
        turn = next(t for t in conv.turns if t.dia_id == dia)
        return RawTurn.turn_id(conv.namespace, turn.session_id, turn.turn_index)

    when = datetime(2023, 5, 8, tzinfo=UTC)
    facts = [  # D1:1 about Ana (covers her move); D1:2 filed under Ana (Leo's bakery)
        FactRecord(
            namespace=conv.namespace,
            text=text,
            subject=who,
            source_ids=[source(dia)],
            occurred_at=when,
        )
        for text, who, dia in (
            ("Ana moved to Porto.", "Ana", "D1:1"),
            ("Ana starts at the bakery.", "Ana", "D1:2"),
        )
    ]
    store.add(conv.namespace, facts)
    got = bench.misses(store, conv, notes, sessions=1)
    assert got == {
        "observations": 3,  # session 2 was not built: its observation is not counted
        "covered": 1,
        "no_note/about_speaker": 1,  # Ana's cat: nothing came from D1:3
        "other_owner/about_speaker": 1,  # Leo's bakery, filed under Ana
    }
    assert bench.misses(store, conv, notes, sessions=2)["no_note/about_speaker"] == 2
