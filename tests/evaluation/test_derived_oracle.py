"""derived-oracle: LoCoMo's annotations as derived layers, and the refusal without them."""

from __future__ import annotations

from typing import Any

import pytest

from lamina.errors import InvalidInputError
from lamina.records.model import EpisodeRecord, FactRecord, RawTurn
from lamina.stores import ChromaMemoryStore
from lamina.testing import FakeEmbeddings
from lamina_bench.datasets.locomo import parse_conversation
from lamina_bench.datasets.locomo_annotations import parse_annotations
from lamina_bench.evaluation.ingest import derived_oracle_records

SAMPLE: dict[str, Any] = {
    "sample_id": "s1",
    "conversation": {
        "speaker_a": "Ana",
        "speaker_b": "Leo",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ana", "dia_id": "D1:1", "text": "I moved to Porto last week!"},
            {"speaker": "Leo", "dia_id": "D1:2", "text": "Congrats, Ana!"},
        ],
    },
    "observation": {
        "session_1_observation": {
            "Ana": [["Ana moved to Porto.", "D1:1"], ["Ana likes trams.", "D9:9"]],
            "Leo": [["Leo congratulated Ana.", ["D1:2"]], ["broken"]],
        }
    },
    "session_summary": {"session_1_summary": "Ana told Leo she moved to Porto."},
    "event_summary": {"events_session_1": {"Ana": ["Ana moves to Porto."], "date": "8 May"}},
    "qa": [],
}


def test_annotations_become_facts_and_episodes_beside_the_raw_layer() -> None:
    conv = parse_conversation(SAMPLE)
    notes = parse_annotations(SAMPLE, {t.dia_id for t in conv.turns})
    assert notes.dropped_evidence == 1  # D9:9 names no turn; the malformed entry is skipped
    store = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    records = derived_oracle_records(store, "derived-oracle/s1", conv, notes)
    raw = [r for r in records if isinstance(r, RawTurn)]
    facts = {r.text: r for r in records if isinstance(r, FactRecord)}
    episodes = [r for r in records if isinstance(r, EpisodeRecord)]
    assert len(raw) == 2 and len(episodes) == 1
    assert set(facts) == {"Ana moved to Porto.", "Ana likes trams.", "Leo congratulated Ana.",
                          "Ana moves to Porto."}  # fmt: skip
    moved = facts["Ana moved to Porto."]
    assert moved.subject == "Ana" and moved.source_ids == [raw[0].id]
    assert moved.occurred_at == raw[0].occurred_at
    assert facts["Ana likes trams."].source_ids == []  # its evidence id named no turn
    assert facts["Leo congratulated Ana."].source_ids == [raw[1].id]
    assert episodes[0].source_ids == [r.id for r in raw]


def test_a_sample_without_annotations_is_refused() -> None:
    bare = {k: v for k, v in SAMPLE.items() if k != "observation"}
    with pytest.raises(InvalidInputError, match="observation"):
        parse_annotations(bare, set())
