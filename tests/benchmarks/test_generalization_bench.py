"""The generalization benchmark (issue 61): its hand-written set and its scoring, no LLM."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest

from lamina.graphs.ingest import build_ingest_graph
from lamina.stores import ChromaMemoryStore
from lamina.testing import FakeEmbeddings
from tests.bench_scripts import load_benchmark

LOCOMO_SPEAKERS = (
    "Caroline Melanie Jon Gina John Maria Joanna Nate Tim Audrey Andrew James Deborah "
    "Jolene Evan Sam Calvin Dave"
).split()


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_benchmark("generalization")


@pytest.fixture(scope="module")
def items(bench: ModuleType) -> list[dict]:  # type: ignore[type-arg]
    return bench.load_items()


def _count(items: list[dict]) -> int:  # type: ignore[type-arg]
    return sum(len(i["questions"]) if i["section"] == "answer" else 1 for i in items)


def test_the_set_spans_five_language_groups_and_every_section(items: list[dict]) -> None:  # type: ignore[type-arg]
    assert _count(items) >= 160
    assert len({i["id"] for i in items}) == len(items)
    by_lang: dict[str, list[dict]] = {}  # type: ignore[type-arg]
    for item in items:
        by_lang.setdefault(item["lang"], []).append(item)
    assert sorted(by_lang) == ["de", "en", "es", "fr", "pt"]
    for lang, group in by_lang.items():
        assert _count(group) >= 20, lang
        sections = Counter((i["section"], i.get("kind")) for i in group)
        assert sections[("supersession", "update")] >= 8, lang
        assert sections[("supersession", "control")] >= 6, lang
        assert sections[("owner", None)] >= 6 and sections[("date", None)] >= 5, lang
        questions = [q for i in group if i["section"] == "answer" for q in i["questions"]]
        assert {q["answerable"] for q in questions} == {True, False}, lang


def test_the_set_names_no_benchmark_speaker(items: list[dict]) -> None:  # type: ignore[type-arg]
    text = json.dumps(items, ensure_ascii=False)
    for name in LOCOMO_SPEAKERS:
        assert f'"{name}"' not in text, name


def test_owner_targets_point_at_turns_that_hold_their_keywords(
    bench: ModuleType,
    items: list[dict],  # type: ignore[type-arg]
) -> None:
    for item in (i for i in items if i["section"] == "owner"):
        said = bench.fold(item["turns"][item["target"]["turn"]]["text"])
        assert any(bench.fold(k) in said for k in item["target"]["about"]), item["id"]


def test_every_date_item_resolves_to_its_gold(bench: ModuleType, items: list[dict]) -> None:  # type: ignore[type-arg]
    rows = [bench.run_date(i) for i in items if i["section"] == "date"]
    assert len(rows) >= 25 and all(r["found"] and r["correct"] for r in rows)


def test_grounded_wants_most_of_the_answers_words_in_what_it_cites(bench: ModuleType) -> None:
    cited = ["Pixel knocked my laptop off the desk this morning."]
    assert bench.grounded("Pixel knocked it off", "Who knocked the laptop off?", cited)
    assert not bench.grounded("Jonas", "Who knocked the laptop off?", cited)
    assert not bench.grounded("blue", "What is Jonas's favourite colour?", [])
    assert bench.grounded("Lucía", "¿Quién es?", ["Soy lucia"])  # accents and case folded


def test_the_fake_run_reports_each_language_group(bench: ModuleType, items: list[dict]) -> None:  # type: ignore[type-arg]
    chosen = [
        next(i for i in items if i["lang"] == lang and i.get("kind") == kind)
        for lang in ("es", "de")
        for kind in ("update", "control")
    ] + [i for i in items if i["section"] == "date"][:2]
    result = bench.run_generalization(
        bench.fake_model(len(chosen)),
        FakeEmbeddings(),
        items=chosen,
        sections=("supersession", "date"),
        update_cues=False,
    )
    assert set(result["by_language"]) == {i["lang"] for i in chosen}
    figures = result["all"]
    assert figures["counts"]["updates"] == 2 and figures["counts"]["controls"] == 2
    # the fake confirms every pair it is shown: the embedding candidates reach each
    # update, in Spanish and German as in English
    assert figures["supersede_recall"] == 1.0 and figures["wallclock_validity"] == 0
    assert figures["date_accuracy"] == 1.0


def test_an_owner_item_is_scored_by_the_facts_of_its_target_turn(
    bench: ModuleType,
    items: list[dict],  # type: ignore[type-arg]
) -> None:
    store = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    graph = build_ingest_graph(chat_model=bench.fake_model(4), store=store).compile()
    owners = [i for i in items if i["section"] == "owner"]
    speaker = next(
        i for i in owners if i["target"]["owner"] == i["turns"][i["target"]["turn"]]["speaker"]
    )
    other = next(
        i for i in owners if i["target"]["owner"] not in {t["speaker"] for t in i["turns"]}
    )
    # the fake files each turn under its speaker: right for the one, wrong for the other
    right = bench.run_owner(graph, store, speaker)
    assert right["built"] and right["correct"]
    wrong = bench.run_owner(graph, store, other)
    assert wrong["built"] and not wrong["correct"]


def test_the_cli_needs_exactly_one_model(bench: ModuleType, tmp_path: Path) -> None:
    assert bench.main(["--sections", "date"]) == 2
    assert bench.main(["--fake", "--sections", "owner"]) == 2
