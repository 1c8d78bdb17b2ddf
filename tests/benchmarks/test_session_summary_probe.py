"""benchmarks/session_summary_probe.py: one model-written summary per session as the episodes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from lamina.records.model import EpisodeRecord, FactRecord, RawTurn, SceneRecord
from lamina.stores import ChromaMemoryStore
from lamina.testing import FakeEmbeddings
from tests.bench_scripts import load_benchmark

NS = "locomo:conv-x"
T0 = datetime(2023, 5, 8, 13, 0, tzinfo=UTC)


class Model(FakeListChatModel):
    """Answers in turn and keeps what it was asked."""

    asked: list[Any] = []

    def bind(self, **kwargs: Any) -> Model:  # type: ignore[override]
        return self

    def invoke(self, messages: Any, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        self.asked.append(messages)
        return super().invoke(messages, *args, **kwargs)


@pytest.fixture()
def probe(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    module = load_benchmark("session_summary_probe", monkeypatch)  # it imports another script
    monkeypatch.setattr(module, "MiniLMEmbeddings", FakeEmbeddings)
    return module


def _turn(rid: str, session: str, index: int, speaker: str, text: str, day: int) -> RawTurn:
    return RawTurn(
        id=rid,
        namespace=NS,
        text=text,
        speaker=speaker,
        session_id=session,
        turn_index=index,
        occurred_at=T0 + timedelta(days=day, minutes=index),
    )


def _source_store(path: Path) -> None:
    store = ChromaMemoryStore.persistent(path, embeddings=FakeEmbeddings())
    store.add(
        NS,
        [
            _turn("r1", "session_1", 0, "Ana", "I adopted a greyhound called Biscuit!", 0),
            _turn("r2", "session_1", 1, "Ben", "Lovely. I start at the bakery on Monday.", 0),
            _turn("r3", "session_2", 0, "Ana", "Biscuit and I ran 5 km in the park.", 7),
        ],
    )
    store.add(
        NS,
        [
            FactRecord(
                id="f1",
                namespace=NS,
                text="Ana adopted Biscuit.",
                source_ids=["r1"],
                occurred_at=T0,
                valid_from=T0,
                subject="Ana",
            ),
            EpisodeRecord(
                id="e1",
                namespace=NS,
                title="Dog",
                text="Ana got a dog.",
                source_ids=["r1"],
                occurred_at=T0,
            ),
            SceneRecord(
                id="s1",
                namespace=NS,
                title="Pets",
                text="Ana's pets.",
                members=["e1"],
                source_ids=["r1"],
                occurred_at=T0,
            ),
        ],
    )


def test_each_session_gets_one_summary_in_place_of_the_episodes_and_scenes(
    probe: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _source_store(tmp_path / "src")
    model = Model(responses=["Ana adopted Biscuit; Ben starts at a bakery.", "Ana ran 5 km."])
    model.asked = []
    monkeypatch.setattr(probe, "local_model", lambda url: model)
    args = ["--store", str(tmp_path / "src"), "--out", str(tmp_path / "out")]
    args += ["--conversations", "conv-x", "--base-url", "http://127.0.0.1:9/v1"]
    assert probe.main(args) == 0

    out = ChromaMemoryStore.persistent(tmp_path / "out" / "chroma", embeddings=FakeEmbeddings())
    episodes = sorted(out.get("episode", NS), key=lambda e: e.occurred_at)
    assert [(e.text, e.source_ids) for e in episodes] == [
        ("Ana adopted Biscuit; Ben starts at a bakery.", ["r1", "r2"]),
        ("Ana ran 5 km.", ["r3"]),
    ]
    assert all(isinstance(e, EpisodeRecord) and e.title == "Session summary" for e in episodes)
    assert out.get("scene", NS) == []
    assert [f.id for f in out.get("fact", NS)] == ["f1"] and len(out.get("raw", NS)) == 3
    # each call sees only its own session's turns, speaker by speaker
    first = str(model.asked[0][1].content)
    assert "Ana: I adopted a greyhound" in first and "Ben: Lovely." in first
    assert "5 km" not in first and "Ana and Ben" in str(model.asked[0][0].content)
    # the store it came from is left as it was
    src = ChromaMemoryStore.persistent(tmp_path / "src", embeddings=FakeEmbeddings())
    assert [e.id for e in src.get("episode", NS)] == ["e1"]
    assert [s.id for s in src.get("scene", NS)] == ["s1"]
    # a second run never writes over the first one's store
    with pytest.raises(SystemExit):
        probe.main(args)
