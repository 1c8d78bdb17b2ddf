"""benchmarks/derived_oracle_store.py: derived-oracle's records for calibration conversations."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from lamina.errors import InvalidInputError
from lamina.records.model import EpisodeRecord, FactRecord, RawTurn
from lamina.stores import ChromaMemoryStore
from lamina.testing import FakeEmbeddings
from tests.bench_scripts import load_benchmark

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
        "session_2_date_time": "2:10 pm on 20 May, 2023",
        "session_2": [
            {"speaker": "Leo", "dia_id": "D2:1", "text": "I adopted a cat called Miso."},
        ],
    },
    "observation": {
        "session_1_observation": {"Ana": [["Ana moved to Porto.", "D1:1"]]},
        "session_2_observation": {"Leo": [["Leo adopted a cat called Miso.", "D2:1"]]},
    },
    "session_summary": {
        "session_1_summary": "Ana told Leo she moved to Porto.",
        "session_2_summary": "Leo adopted a cat.",
    },
    "event_summary": {"events_session_1": {"Ana": ["Ana moves to Porto."], "date": "8 May"}},
    "qa": [],
}


@pytest.fixture()
def bench(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    module = load_benchmark("derived_oracle_store")
    monkeypatch.setattr(module, "MiniLMEmbeddings", FakeEmbeddings)
    return module


def _data(tmp_path: Path, sample: dict[str, Any]) -> Path:
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([sample]), encoding="utf-8")
    return path


def test_the_store_holds_the_kept_sessions_turns_and_annotations(
    bench: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _data(tmp_path, SAMPLE)
    out = tmp_path / "out"
    args = ["--data", str(data), "--out", str(out), "--conversations", "s1", "--sessions", "1"]
    assert bench.main(args) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["records"]["s1"] == {"raw": 2, "fact": 2, "episode": 1}
    store = ChromaMemoryStore.persistent(out / "chroma", embeddings=FakeEmbeddings())
    ns = "locomo:s1"
    raw = store.get("raw", ns)
    assert sorted(r.text for r in raw if isinstance(r, RawTurn)) == [
        "Congrats, Ana!",
        "I moved to Porto last week!",
    ]
    facts = {r.text: r for r in store.get("fact", ns) if isinstance(r, FactRecord)}
    # session 2 was cut: neither its observation nor its summary is stored
    assert set(facts) == {"Ana moved to Porto.", "Ana moves to Porto."}
    moved = next(r for r in raw if r.text.startswith("I moved"))
    assert facts["Ana moved to Porto."].subject == "Ana"
    assert facts["Ana moved to Porto."].source_ids == [moved.id]
    (episode,) = [r for r in store.get("episode", ns) if isinstance(r, EpisodeRecord)]
    assert episode.text == "Ana told Leo she moved to Porto."
    # an existing store is never written into
    with pytest.raises(SystemExit):
        bench.main(args)


def test_a_conversation_without_annotations_is_refused(bench: ModuleType, tmp_path: Path) -> None:
    bare = copy.deepcopy(SAMPLE)
    del bare["observation"]
    data = _data(tmp_path, bare)
    with pytest.raises(InvalidInputError, match="observation"):
        bench.main(["--data", str(data), "--out", str(tmp_path / "o"), "--conversations", "s1"])
    assert not (tmp_path / "o" / "chroma").exists()  # refused before any store was made
