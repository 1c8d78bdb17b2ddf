import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from lamina.errors import InvalidInputError
from lamina_bench.datasets.locomo import default_locomo_path, load_locomo, parse_evidence

SAMPLE = {
    "sample_id": "conv-x",
    "conversation": {
        "speaker_a": "Ann",
        "speaker_b": "Bo",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a cat."},
            {"speaker": "Bo", "dia_id": "D1:2", "text": "Cute!", "blip_caption": "a cat photo"},
        ],
        "session_2_date_time": "10:00 am on 9 May, 2023",
        "session_2": [{"speaker": "Ann", "dia_id": "D2:1", "text": "Her name is Miso."}],
    },
    "qa": [
        {"question": "What pet?", "answer": "a cat", "evidence": ["D1:1"], "category": 4},
        {"question": "Name?", "answer": "Miso", "evidence": ["D2:01; D1:1", "D9:9"], "category": 1},
        {"question": "Dangling", "answer": "x", "evidence": ["D7:7"], "category": 2},
        {"question": "Trick?", "adversarial_answer": "no", "evidence": [], "category": 5},
    ],
}


@pytest.fixture
def path(tmp_path: Path) -> Path:
    p = tmp_path / "locomo.json"
    p.write_text(json.dumps([SAMPLE]))
    return p


def test_parses_turns_sessions_and_questions(path: Path) -> None:
    (conv,) = load_locomo(path)
    assert conv.namespace == "locomo:conv-x" and conv.speakers == ("Ann", "Bo")
    assert [t.dia_id for t in conv.turns] == ["D1:1", "D1:2", "D2:1"]
    assert conv.turns[1].caption == "a cat photo"
    assert conv.turns[2].occurred_at == datetime(2023, 5, 9, 10, 0, tzinfo=UTC)
    assert conv.sessions() == ["session_1", "session_2"]
    assert [q.text for q in conv.questions] == ["What pet?", "Name?"]
    assert conv.questions[1].evidence == {"D2:1", "D1:1"}
    assert conv.questions[1].sessions == {"session_1", "session_2"}
    assert conv.skipped == 1 and conv.dropped_ids == 2


def test_category_five_is_opt_in(path: Path) -> None:
    (conv,) = load_locomo(path, categories=(5,))
    assert [(q.text, q.answer) for q in conv.questions] == [("Trick?", "no")]


def test_evidence_normalisation() -> None:
    assert parse_evidence(["D:1:2", "D1:02,D3:3", "D"], {"D1:2", "D3:3"}) == (["D1:2", "D3:3"], 1)


def test_bad_files_get_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match="cannot read"):
        load_locomo(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text(json.dumps({"not": "a list"}))
    with pytest.raises(InvalidInputError, match="not LoCoMo-format"):
        load_locomo(tmp_path / "bad.json")


@pytest.mark.skipif(not default_locomo_path().exists(), reason="shared LoCoMo data not present")
def test_the_shared_locomo_file_loads() -> None:
    conversations = load_locomo(default_locomo_path())
    assert len(conversations) == 10
    assert sum(len(c.questions) for c in conversations) > 1500
