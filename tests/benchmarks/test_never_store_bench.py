"""The "never store" benchmark (issue 64): its hand-written chats and its counting, no LLM."""

from __future__ import annotations

import json
from types import ModuleType

import pytest

from lamina.testing import FakeEmbeddings, SchemaChatModel
from tests.bench_scripts import load_benchmark


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_benchmark("never_store")


@pytest.fixture(scope="module")
def data(bench: ModuleType) -> dict:  # type: ignore[type-arg]
    return json.loads(bench.DATA.read_text(encoding="utf-8"))


def test_thirty_chats_each_say_something_excluded_and_something_to_keep(
    bench: ModuleType,
    data: dict,  # type: ignore[type-arg]
) -> None:
    chats = data["conversations"]
    assert len(chats) == 30 and len({c["id"] for c in chats}) == 30
    assert {c["lang"] for c in chats} == {"en", "es", "de", "fr", "pt"}
    for chat in chats:
        said = " ".join(t["text"] for t in chat["turns"])
        assert bench.matches(chat["excluded"], said), chat["id"]  # the topic is in the chat
        assert chat["kept"], chat["id"]


def test_a_word_matches_only_at_the_start_of_a_word(bench: ModuleType) -> None:
    assert bench.matches(["diabet", "ill"], "Omar is prediabetic and Will is fine") == []
    assert bench.matches(["diabet"], "Omar has Diabetes") == ["diabet"]
    assert bench.matches(["celia"], "Lucía tiene CELIAQUÍA") == ["celia"]


def test_leaks_raw_turns_and_the_instruction_reaching_the_model_are_counted(
    bench: ModuleType,
    data: dict,  # type: ignore[type-arg]
) -> None:
    chat = {**data["conversations"][0], "id": "t1"}  # Nadia's migraine and pottery class
    reply = (
        "T|Pottery\nS|Nadia talked about her pottery class.\n"
        "F|t1|Nadia|Nadia has a migraine and took ibuprofen.\n"
        "F|t3|Nadia|Nadia signed up for the wheel-throwing course at Clayworks."
    )
    model = SchemaChatModel().script("ConstructionLines", reply, reply)
    one = {**data, "conversations": [chat]}
    result = bench.run(model, FakeEmbeddings(), one, ["instructed", "plain"])
    for arm in ("instructed", "plain"):
        figures = result[arm]["all"]
        assert figures["leaking_records"] == 1 and figures["leaking_chats"] == 1
        assert figures["raw_kept"] == 1.0
        assert figures["kept_share"] == 1.0  # pottery, Clayworks, and Rhea from "my cousin Rhea"
        (leak,) = result[arm]["leaks"]
        assert leak["records"][0]["excluded"] == ["migraine", "ibuprofen"]
    systems = [str(m[0].content) for t, m in model.calls if t == "ConstructionLines"]
    assert data["instruction"] in systems[0] and data["instruction"] not in systems[1]
