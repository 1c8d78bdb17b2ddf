"""CI smoke test of ``lamina-bench eval``: the whole harness on a tiny LoCoMo-format fixture.

The chat model is an "oracle reader": it answers a question with its gold answer exactly
when the question's needle words are in the context it was shown, and refuses otherwise.
So a system is right exactly when its retrieval delivered the evidence, which ties the
judge, the scores and the evidence recall together in checkable ways.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import BaseMessage

from lamina.core.context import SMALL_MODEL_PROFILE, MemoryContext
from lamina.errors import InvalidInputError
from lamina.graphs import ResearchArms
from lamina.prompts import construction as prompts_module
from lamina.testing import (
    FakeEmbeddings,
    FakeLocalServer,
    SchemaChatModel,
    minimal_instance,
    requested_schema,
)
from lamina_bench.cli import build_parser
from lamina_bench.commands.eval import build_models, run_eval
from lamina_bench.evaluation.code_version import code_version
from lamina_bench.evaluation.construction import (
    CONSTANT_SETTINGS,
    CONSTRUCTION_ARMS,
    KEYED_UNLESS,
    PROFILE_FIELDS,
    RECALL_FIELDS,
    KeyInputs,
    construction_key,
    construction_settings,
)
from lamina_bench.evaluation.harness import EvalModels, EvalSettings, run_evaluation
from lamina_bench.evaluation.prompts import NOT_MENTIONED
from lamina_bench.evaluation.records import Journal, QuestionResult, Redo, RunHeader, answers_of
from lamina_bench.evaluation.settings import split_recall
from lamina_bench.evaluation.subset import load_subset

FILLER = [
    "How was your week, anything fun going on at work lately?",
    "Work was busy but fine, the weather has been lovely for walks.",
    "I spent the weekend reading and cooking a new soup recipe.",
    "That sounds relaxing, I mostly cleaned the house and rested.",
    "My neighbours threw a small party with music and snacks.",
    "Nice, we should meet for coffee sometime next month then.",
]
# (question, gold, category, evidence, needles that must be in the context)
QUESTIONS: list[tuple[str, str, int, list[str], list[str]]] = [
    ("What is the name of Caroline's dog?", "Biscuit", 4, ["D1:3"], ["Biscuit"]),
    ("Where did Melanie go camping?", "Lake Tahoe", 2, ["D2:4"], ["Tahoe"]),
    ("Which class does Caroline take?", "pottery", 4, ["D3:2"], ["pottery"]),
    (
        "What pets and classes does Caroline have?",
        "Biscuit, pottery",
        1,
        ["D1:3", "D3:2"],
        ["Biscuit", "pottery"],
    ),
    ("Would Melanie enjoy a lakeside trip?", "Yes; she loves Tahoe", 3, ["D2:4"], ["Tahoe"]),
]
ADVERSARIAL = ("What is the name of Melanie's dog?", "Biscuit", ["D1:3"])
PLANTED = {
    (1, 3): ("Caroline", "I adopted a greyhound called Biscuit last week, he is adorable."),
    (2, 4): ("Melanie", "We went camping at Lake Tahoe with the kids in July."),
    (3, 2): ("Caroline", "I have been taking pottery classes every Tuesday evening."),
}
DATES = ["1:56 pm on 8 May, 2023", "10:37 am on 27 June, 2023", "8:18 pm on 12 August, 2023"]


def locomo_fixture(path: Path) -> Path:
    """A LoCoMo-format file: one conversation, three sessions of eight turns, six questions."""
    conversation: dict[str, Any] = {"speaker_a": "Caroline", "speaker_b": "Melanie"}
    for s in (1, 2, 3):
        turns = []
        for t in range(1, 9):
            speaker, text = PLANTED.get(
                (s, t), ("Caroline" if t % 2 else "Melanie", FILLER[(s + t) % len(FILLER)])
            )
            turns.append({"speaker": speaker, "dia_id": f"D{s}:{t}", "text": text})
        conversation[f"session_{s}"] = turns
        conversation[f"session_{s}_date_time"] = DATES[s - 1]
    qa: list[dict[str, Any]] = [
        {"question": q, "answer": a, "category": c, "evidence": e} for q, a, c, e, _ in QUESTIONS
    ]
    question, bait, evidence = ADVERSARIAL
    qa.append(
        {"question": question, "adversarial_answer": bait, "category": 5, "evidence": evidence}
    )
    path.write_text(json.dumps([{"sample_id": "conv-t", "conversation": conversation, "qa": qa}]))
    return path


def _asked(messages: list[BaseMessage]) -> str:
    for m in messages:
        found = re.search(r"Question:\n<data>\n(.*?)\n</data>", str(m.content), re.S)
        if found:
            return found.group(1)
    raise AssertionError("no question in the prompt")


def _context(messages: list[BaseMessage]) -> str:
    return "\n".join(str(m.content) for m in messages if "Question:\n<data>" in str(m.content))


def _oracle(question: str, context: str) -> str | None:
    """The gold answer when the question's needles are all in ``context``, else None."""
    for q, gold, _, _, needles in QUESTIONS:
        if q == question:
            return gold if all(n in context.split("Question:")[0] for n in needles) else None
    return None  # category 5 and unknown questions: refuse


def eval_answer(messages: list[BaseMessage]) -> str:
    found = _oracle(_asked(messages), _context(messages))
    return json.dumps({"answer": found or NOT_MENTIONED})


def judged_answer(messages: list[BaseMessage]) -> str:
    """lamina's combined call: sufficient (with the gold answer) when the needles are shown."""
    context = _context(messages)
    found = _oracle(_asked(messages), context)
    if found is None:
        return json.dumps({"sufficient": False, "missing": "the evidence"})
    needle = next(n for q, _, _, _, n in QUESTIONS if q == _asked(messages))[0]
    cited = re.findall(r"\[(m\d+)\][^\n]*" + re.escape(needle), context)
    return json.dumps({"sufficient": True, "answer": found, "cited": cited[:1]})


def judge_label(messages: list[BaseMessage]) -> str:
    text = str(messages[0].content)
    gold = re.search(r"Gold answer: (.*)", text)
    answer = re.search(r"Generated answer: (.*)", text)
    assert gold and answer
    ok = gold.group(1).split(";")[0].strip().lower() in answer.group(1).lower()
    return json.dumps({"reason": "compared", "label": "correct" if ok else "WRONG"})


def query_rewrite(messages: list[BaseMessage]) -> str:
    return json.dumps({"queries": [_asked(messages)]})


class Crash(BaseException):
    """Stands in for a killed process (not an Exception, so nothing catches it)."""


def minimal(messages: list[BaseMessage]) -> str:
    return json.dumps(minimal_instance(requested_schema(messages) or {}))


def oracle_model(crash_at: int | None = None) -> SchemaChatModel:
    """Scripted model; with ``crash_at``, the n-th shared answer call crashes the run."""
    counter = {"n": 0}

    def answer(messages: list[BaseMessage]) -> str:
        counter["n"] += 1
        if crash_at is not None and counter["n"] == crash_at:
            raise Crash()
        return eval_answer(messages)

    model = SchemaChatModel()
    many = 500
    model.script("EvalAnswer", *([answer] * many))
    model.script("DraftFirst", *([judged_answer] * many))
    model.script("JudgeLabel", *([judge_label] * many))
    model.script("QueryRewrite", *([query_rewrite] * many))
    return model


ALL_SYSTEMS = [
    "lamina",
    "lamina-retrieval",
    "naive-rag",
    "full-context",
    "full-context-long",
    "flat",
    "oracle",
]
SHARED_ANSWER = 6
"""Systems that answer with the shared prompt (all but lamina end to end)."""


def settings(data: Path, out: Path, **overrides: Any) -> EvalSettings:
    base: dict[str, Any] = {
        "data": data,
        "out": out,
        "systems": ALL_SYSTEMS,
        "policies": ["session"],
        "batch_size": 4,
        "top_k": 30,
        "rag_k": 1,
        "chunk_words": 40,
        "chunk_overlap": 8,
        "context_window": 1000,
        "long_context_window": 32768,
    }
    return EvalSettings(**{**base, **overrides})


def models(model: SchemaChatModel) -> EvalModels:
    return EvalModels(chat_model=model, embeddings=FakeEmbeddings(), model_name="oracle")


def _without_timing(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_timing(v) for k, v in value.items() if k not in ("latency_s",)}
    if isinstance(value, list):
        return [_without_timing(v) for v in value]
    return value


def _rows(results: list[QuestionResult]) -> list[Any]:
    return sorted(
        (_without_timing(r.model_dump(mode="json")) for r in results),
        key=lambda r: (r["system"], r["qid"]),
    )


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return locomo_fixture(tmp_path / "locomo.json")


@pytest.fixture
def full_run(data: Path, tmp_path: Path) -> Any:
    return run_evaluation(settings(data, tmp_path / "full"), models(oracle_model()), progress=False)


def test_every_system_answers_every_question_with_all_scores(full_run: Any) -> None:
    results: list[QuestionResult] = full_run.results
    assert sorted({r.system for r in results}) == sorted(ALL_SYSTEMS)
    assert len(results) == 7 * 6
    for r in results:
        if r.category == 5:
            assert r.judge_label is None and r.mem0_f1 is None and r.bleu1 is None
            assert r.refusal_correct is True and r.locomo_f1 == 1.0  # the oracle refuses
        else:
            assert r.judge_label in ("CORRECT", "WRONG")
            assert r.judging and r.answering
            assert r.mem0_f1 is not None and r.bleu1 is not None
            assert r.turn_recall is not None and r.session_recall is not None


def test_baselines_are_right_exactly_when_their_context_held_the_evidence(full_run: Any) -> None:
    for r in full_run.results:
        if r.category == 5 or r.system == "lamina":
            continue
        correct = r.judge_label == "CORRECT"
        # the oracle answers only when all needles (= all evidence turns) were in context
        assert correct == (r.turn_recall == 1.0), (r.system, r.qid, r.used_evidence)
        if correct:
            assert r.answer == r.gold and r.mem0_f1 == 1.0 and r.bleu1 == 1.0


def test_flat_retrieves_everything_and_full_context_loses_old_sessions(full_run: Any) -> None:
    by = {(r.system, r.qid): r for r in full_run.results}
    flat = [r for r in full_run.results if r.system == "flat" and r.category != 5]
    assert all(r.judge_label == "CORRECT" and r.turn_recall == 1.0 for r in flat)
    full = [r for r in full_run.results if r.system == "full-context"]
    assert all(r.notes and r.notes[0].startswith("truncated") for r in full)
    long = [r for r in full_run.results if r.system == "full-context-long"]
    assert all(not r.notes and r.turn_recall == 1.0 for r in long)  # the window holds it all
    oracle = [r for r in full_run.results if r.system == "oracle" and r.category != 5]
    assert all(r.judge_label == "CORRECT" and r.turn_recall == 1.0 for r in oracle)
    assert all(sorted(r.used_evidence) == r.evidence for r in oracle)
    dog = by[("full-context", "conv-t:q0")]  # evidence in session 1: cut off
    assert "D1:3" not in dog.used_evidence and dog.judge_label == "WRONG"
    pottery = by[("full-context", "conv-t:q2")]  # evidence in the last session: kept
    assert pottery.judge_label == "CORRECT" and "D3:2" in pottery.used_evidence


def test_lamina_full_graph_cites_what_it_answered_from(full_run: Any) -> None:
    rows = [r for r in full_run.results if r.system == "lamina" and r.category != 5]
    assert rows
    for r in rows:
        if r.judge_label == "CORRECT":
            assert r.turn_recall == 1.0 and r.cited_turn_recall is not None
            assert r.cited_turn_recall > 0
        else:
            assert r.refused and r.answer == NOT_MENTIONED


def test_costs_are_split_into_construction_and_answering(full_run: Any) -> None:
    summary = json.loads((full_run.out / "results.json").read_text())["summary"]
    construction = summary["construction"]
    assert set(construction) == {"lamina-session", "chunks", "raw"}
    assert set(summary["systems"]["lamina-retrieval"]["answering_by_node"]) == {
        "eval_answer"
    }  # the pooled context costs no LLM call
    assert construction["lamina-session"]["llm_calls"] > 0
    assert "constructor" in construction["lamina-session"]["by_node"]
    assert construction["raw"]["llm_calls"] == construction["chunks"]["llm_calls"] == 0
    nodes = summary["systems"]["lamina"]["answering_by_node"]
    assert "judge" in nodes and "retriever" not in nodes  # retrieval calls no LLM
    assert set(summary["systems"]["flat"]["answering_by_node"]) == {"eval_answer"}
    assert summary["systems"]["flat"]["answering_by_node"]["eval_answer"]["calls"] == 6
    assert summary["systems"]["flat"]["judging"]["eval_judge"]["calls"] == 5
    flat = summary["systems"]["flat"]
    assert flat["overall"]["j"] == 1.0 and flat["by_category"]["5"]["refusal_accuracy"] == 1.0
    full = summary["systems"]["full-context"]["overall"]
    assert full["j"] == pytest.approx(
        sum(
            r.judge_label == "CORRECT"
            for r in full_run.results
            if r.system == "full-context" and r.category != 5
        )
        / 5
    )


def test_report_and_plots(full_run: Any) -> None:
    report = (full_run.out / "report.md").read_text()
    assert "answer model**: oracle" in report
    assert "judge model**: oracle (same as the answer model)" in report
    assert "### Category 1: multi-hop (LoCoMo code) / single-hop (mem0 paper)" in report
    assert "### Category 5: adversarial" in report
    assert "truncated to a 1000-token window" in report
    assert "| lamina-session | lamina, lamina-retrieval |" in report
    assert "lamina against each baseline" in report
    assert "Paired F1 difference" in report.split("lamina against each baseline")[1]
    assert "## lamina against the targets" in report
    for target in ("LoCoMo F1 (c1-4)", "multi-hop (c1)", "temporal (c2)", "LLM calls / q"):
        assert target in report.split("## lamina against the targets")[1]
    assert "context tokens / q" in report and "fallbacks" in report
    assert "## Prompts" in report and "Reply with" not in report.split("## Prompts")[1][:20]
    assert "Not mentioned in the conversation" in report.split("## Prompts")[1]
    assert "`oracle`: the question's gold evidence turns" in report
    for name in ("accuracy_vs_tokens.png", "construction_tokens.png"):
        png = (full_run.out / name).read_bytes()
        assert png.startswith(b"\x89PNG") and len(png) > 1000


def test_interrupted_run_resumes_and_equals_an_uninterrupted_one(
    data: Path, tmp_path: Path, full_run: Any
) -> None:
    out = tmp_path / "resumed"
    with pytest.raises(Crash):
        run_evaluation(settings(data, out), models(oracle_model(crash_at=9)), progress=False)
    before = [e for e in Journal(out / "journal.jsonl").read() if isinstance(e, QuestionResult)]
    assert 6 < len(before) < 42  # lamina's six done, the shared-answer systems cut short
    model = oracle_model()
    resumed = run_evaluation(settings(data, out), models(model), progress=False)
    assert _rows(resumed.results) == _rows(full_run.results)
    assert len(resumed.results) == 42
    shared_calls_before = sum(1 for r in before if r.system != "lamina")
    expected = SHARED_ANSWER * 6 - shared_calls_before
    assert model.count("EvalAnswer") == expected  # nothing answered twice
    assert model.count("ConstructionLines") == 0  # ingest was complete: not redone


def test_construction_is_built_once_per_key_and_reused_by_later_runs(
    data: Path, tmp_path: Path
) -> None:
    shared = tmp_path / "built"
    first_model = oracle_model()
    one = settings(data, tmp_path / "a", systems=["lamina"], construction_dir=shared)
    first = run_evaluation(one, models(first_model), progress=False, plots=False)
    assert first_model.count("ConstructionLines") > 0
    # other questions and systems, another output folder: the built memory is reused
    later_model = oracle_model()
    two = settings(
        data,
        tmp_path / "b",
        systems=["lamina", "flat"],
        questions=2,
        construction_dir=shared,
    )
    second = run_evaluation(two, models(later_model), progress=False, plots=False)
    assert later_model.count("ConstructionLines") == 0
    reused = [i for i in second.ingests if i.stage == "lamina-session"]
    assert [i.key for i in reused] == [i.key for i in first.ingests]  # costs still reported
    assert {i.cache_key for i in reused} == {first.meta["construction"]["lamina-session"]}
    # another batch size: a new key, built again into its own store; the session policy
    # builds each session whole, so its requests are the first build's, not asked twice
    third_model = oracle_model()
    three = settings(
        data, tmp_path / "c", systems=["lamina"], batch_size=3, construction_dir=shared
    )
    third = run_evaluation(three, models(third_model), progress=False, plots=False)
    assert third.meta["construction"] != first.meta["construction"]
    new_key = third.meta["construction"]["lamina-session"]
    assert len(Journal(shared / new_key / "ingest.jsonl").read()) == 9  # 3 sessions x 3
    assert third_model.count("ConstructionLines") == 0


def test_memory_rebuilt_under_a_new_key_reports_the_new_build_only(
    data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "run"
    one = settings(data, out, systems=["lamina"], construction_dir=tmp_path / "old")
    first = run_evaluation(one, models(oracle_model()), progress=False, plots=False)
    old_key = first.meta["construction"]["lamina-session"]
    # the construction prompts changed: the same run, its lamina answers redone on new memory
    monkeypatch.setattr(prompts_module, "CONSTRUCTION_PROMPT_VERSION", "changed")
    two = settings(data, out, systems=["lamina"], construction_dir=tmp_path / "new")
    model = oracle_model()
    second = run_evaluation(two, models(model), progress=False, plots=False, redo=["lamina"])
    new_key = second.meta["construction"]["lamina-session"]
    assert new_key != old_key and model.count("ConstructionLines") > 0
    assert {i.cache_key for i in second.ingests} == {new_key}  # the old build's cost is gone
    assert [i.key for i in second.ingests] == [i.key for i in first.ingests]
    in_journal = [e for e in Journal(out / "journal.jsonl").read() if hasattr(e, "cache_key")]
    assert {e.cache_key for e in in_journal} == {old_key, new_key}  # append-only


def test_the_journal_holds_no_dataset_text_and_resumes_on_another_machine(
    data: Path, tmp_path: Path
) -> None:
    out = tmp_path / "here"
    first = settings(data, out, systems=["flat", "oracle"], construction_dir=tmp_path / "b1")
    done = run_evaluation(first, models(oracle_model()), progress=False, plots=False)
    journal = (out / "journal.jsonl").read_text()
    for question, *_ in [*QUESTIONS, ADVERSARIAL]:
        assert question not in journal
    for line in journal.splitlines():  # no field of the dataset's text (answers may match gold)
        assert not {"question", "gold", "adversarial_answer", "judge_reason"} & set(
            json.loads(line)
        )
    assert all(r.question and r.gold for r in done.results)  # joined back in from the data
    # another machine: the data file elsewhere (same content), no built memory, the
    # journal copied over with a few answers missing
    there = tmp_path / "there"
    there.mkdir()
    lines = journal.splitlines()
    (there / "journal.jsonl").write_text("\n".join(lines[:-3]) + "\n")
    moved = tmp_path / "elsewhere" / data.name
    moved.parent.mkdir()
    moved.write_bytes(data.read_bytes())
    model = oracle_model()
    again = settings(moved, there, systems=["flat", "oracle"], construction_dir=tmp_path / "b2")
    resumed = run_evaluation(again, models(model), progress=False, plots=False)
    assert model.count("EvalAnswer") == 3  # only the missing answers
    assert _rows(resumed.results) == _rows(done.results)


def test_interrupted_ingest_resumes_without_redoing_finished_batches(
    data: Path, tmp_path: Path
) -> None:
    out = tmp_path / "ingest"
    crashing = oracle_model()
    crashing.script("ConstructionLines", "T|x\nS|x", Crash())
    one = settings(data, out, systems=["lamina"], judge=False)
    with pytest.raises(Crash):
        run_evaluation(one, models(crashing), progress=False)
    (built,) = (tmp_path / "construction").glob("lamina-session-*/ingest.jsonl")
    finished = Journal(built).read()  # the construction store keeps its own batch journal
    assert finished and len(finished) < 6  # 3 sessions x 2 batches of 4 turns
    model = oracle_model()
    resumed = run_evaluation(one, models(model), progress=False)
    keys = [(i.stage, i.batch) for i in resumed.ingests]
    assert len(keys) == len(set(keys)) == 6
    assert len(resumed.results) == 6
    steps = [e.key for e in Journal(built).read()]  # type: ignore[union-attr]
    assert len(steps) == len(set(steps)) == 6  # finished batches were not built twice


def test_built_memory_is_rebuilt_elsewhere_from_the_committed_files_alone(
    data: Path, tmp_path: Path
) -> None:
    one = settings(data, tmp_path / "here", systems=["lamina"], construction_dir=tmp_path / "b1")
    first_model = oracle_model()
    first = run_evaluation(one, models(first_model), progress=False, plots=False)
    built_calls = len(first_model.calls) - sum(
        first_model.count(t) for t in ("EvalAnswer", "DraftFirst", "JudgeLabel", "QueryRewrite")
    )
    assert built_calls > 0
    # another machine: only the committed files of each key (journal and replies) came over
    there = tmp_path / "b2"
    for path in (tmp_path / "b1").glob("*/ingest.jsonl"):
        (there / path.parent.name).mkdir(parents=True)
        (there / path.parent.name / path.name).write_bytes(path.read_bytes())
    (there / "replies.jsonl").write_bytes((tmp_path / "b1" / "replies.jsonl").read_bytes())
    (lamina_dir,) = there.glob("lamina-session-*")
    journaled = (lamina_dir / "ingest.jsonl").read_text()
    again = settings(data, tmp_path / "there", systems=["lamina"], construction_dir=there)
    model = oracle_model()
    rebuilt = run_evaluation(again, models(model), progress=False, plots=False)
    answer_calls = ("EvalAnswer", "DraftFirst", "JudgeLabel", "QueryRewrite")
    assert len(model.calls) == sum(model.count(t) for t in answer_calls)  # no build call
    assert (lamina_dir / "ingest.jsonl").read_text() == journaled  # journaled once
    assert _rows(rebuilt.results) == _rows(first.results)  # the same memory answered
    assert [i.construction for i in rebuilt.ingests] == [i.construction for i in first.ingests]
    # the next run there finds the store built: nothing is rebuilt a second time
    model = oracle_model()
    run_evaluation(again, models(model), progress=False, plots=False)
    assert model.calls == []


def test_a_new_key_built_from_kept_replies_says_its_seconds_are_not_the_models(
    data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = tmp_path / "built"
    one = settings(data, tmp_path / "a", systems=["lamina"], construction_dir=shared)
    first = run_evaluation(one, models(oracle_model()), progress=False, plots=False)
    assert all(i.kept_replies == 0 for i in first.ingests)
    calls = sum(sum(c.calls for c in i.construction.values()) for i in first.ingests)
    # a new key whose requests are the same (only the declared version changed)
    monkeypatch.setattr(prompts_module, "CONSTRUCTION_PROMPT_VERSION", "same words")
    model = oracle_model()
    two = settings(data, tmp_path / "b", systems=["lamina"], construction_dir=shared)
    second = run_evaluation(two, models(model), progress=False)
    assert second.meta["construction"] != first.meta["construction"]
    assert model.count("ConstructionLines") == 0
    assert sum(i.kept_replies for i in second.ingests) == calls > 0
    report = (second.out / "report.md").read_text()
    assert f"{calls} of its {calls} LLM calls were answered from kept replies" in report


def test_a_store_built_before_its_batch_list_was_kept_is_not_rebuilt(
    data: Path, tmp_path: Path
) -> None:
    built = tmp_path / "built"
    one = settings(data, tmp_path / "a", systems=["lamina"], construction_dir=built)
    run_evaluation(one, models(oracle_model()), progress=False, plots=False)
    (listed,) = built.glob("lamina-session-*/built.jsonl")
    assert len(listed.read_text().splitlines()) == 6  # 3 sessions x 2 batches
    listed.unlink()  # as an older version left it: the store and its journal only
    model = oracle_model()
    two = settings(data, tmp_path / "b", systems=["lamina"], construction_dir=built)
    run_evaluation(two, models(model), progress=False, plots=False)
    assert model.count("ConstructionLines") == 0
    assert len(listed.read_text().splitlines()) == 6


def test_a_resume_with_other_settings_is_refused(data: Path, tmp_path: Path) -> None:
    out = tmp_path / "other"
    run_evaluation(
        settings(data, out, systems=["flat"], judge=False), models(oracle_model()), progress=False
    )
    with pytest.raises(InvalidInputError, match="other settings"):
        run_evaluation(
            settings(data, out, systems=["flat"], top_k=3, judge=False),
            models(oracle_model()),
            progress=False,
        )
    again = run_evaluation(
        settings(data, out, systems=["flat"], top_k=3, judge=False),
        models(oracle_model()),
        fresh=True,
        progress=False,
        plots=False,
    )
    assert len(again.results) == 6 and all(r.judge_label is None for r in again.results)


def test_subset_options_pick_questions(data: Path, tmp_path: Path) -> None:
    run = run_evaluation(
        settings(data, tmp_path / "sub", systems=["flat"], questions=2, adversarial=0, sessions=2),
        models(oracle_model()),
        progress=False,
        plots=False,
    )
    # evidence within sessions 1-2: q0 (D1:3), q1 (D2:4), q4 (D2:4); two spread over them
    assert [r.qid for r in run.results] == ["conv-t:q0", "conv-t:q1"]


def _cli(argv: list[str]) -> argparse.Namespace:
    return build_parser().parse_args(["eval", *argv])


def test_cli_help_documents_the_options(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["eval", "--help"])
    text = capsys.readouterr().out
    for option in (
        "--conversations",
        "--categories",
        "--questions",
        "--adversarial",
        "--systems",
        "--policy",
        "--context-window",
        "--judge-model",
        "--out",
        "--fresh",
        "--report-only",
    ):
        assert option in text


def test_cli_runs_with_injected_models_and_rerenders_the_report(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "cli"
    args = _cli(
        ["--data", str(data), "--systems", "flat", "full-context", "--out", str(out)]
        + ["--context-window", "4000", "--no-progress", "--no-plots"]
    )
    assert run_eval(args, models=models(oracle_model())) == 0
    assert "12 answers scored" in capsys.readouterr().out
    report = (out / "report.md").read_text()
    assert "lamina-bench eval --context-window 4000 --data" in report
    assert "full-context" in report and "flat" in report
    notes = tmp_path / "notes.md"
    notes.write_text("Hand-written analysis.")
    rerun = _cli(["--out", str(out), "--report-only", "--notes", str(notes), "--no-plots"])
    assert run_eval(rerun) == 0
    assert "## Notes\n\nHand-written analysis." in (out / "report.md").read_text()


def test_results_leave_out_the_datasets_text_unless_asked(data: Path, tmp_path: Path) -> None:
    out = tmp_path / "text"
    base = ["--data", str(data), "--systems", "flat", "--out", str(out), "--no-progress"]
    assert run_eval(_cli(base + ["--no-plots", "--keep-text"]), models=models(oracle_model())) == 0
    kept = json.loads((out / "results.json").read_text())
    asked = {q["question"] for q in kept["questions"]}
    assert asked and all(q["gold"] for q in kept["questions"])
    assert kept["meta"]["dataset_text"] == "kept"
    assert "--keep-text" in kept["meta"]["command"]

    assert run_eval(_cli(["--out", str(out), "--report-only", "--no-plots"])) == 0
    shared = json.loads((out / "results.json").read_text())
    assert shared["meta"]["dataset_text"].startswith("left out")
    assert len(shared["questions"]) == len(kept["questions"])
    for before, after in zip(kept["questions"], shared["questions"], strict=True):
        assert not {"question", "gold", "adversarial_answer", "judge_reason"} & after.keys()
        assert after["qid"] == before["qid"] and after["mem0_f1"] == before["mem0_f1"]
    text = (out / "results.json").read_text()
    assert not any(question in text for question in asked)
    # asking to keep text that is already gone does not claim it is there
    assert run_eval(_cli(["--out", str(out), "--report-only", "--no-plots", "--keep-text"])) == 0
    again = json.loads((out / "results.json").read_text())
    assert again["meta"]["dataset_text"].startswith("left out")
    journal = (out / "journal.jsonl").read_text()
    assert not any(question in journal for question in asked)


def test_cli_rejects_bad_settings(data: Path, tmp_path: Path) -> None:
    args = _cli(["--data", str(data), "--out", str(tmp_path / "x"), "--chunk-overlap", "200"])
    with pytest.raises(InvalidInputError, match="chunk_overlap"):
        run_eval(args, models=models(oracle_model()))
    args = _cli(["--data", str(data), "--conversations", "conv-zz", "--out", str(tmp_path / "y")])
    with pytest.raises(InvalidInputError, match="no conversation conv-zz"):
        run_eval(args, models=models(oracle_model()))


def test_the_construction_key_ignores_the_serving_window(data: Path, tmp_path: Path) -> None:
    from lamina_bench.evaluation.harness import open_caches

    one = settings(data, tmp_path / "o", systems=["lamina"], construction_dir=tmp_path / "b")
    keys = []
    for name in ("local qwen (llama.cpp, n_ctx 8192)", "local qwen (llama.cpp, n_ctx 32768)"):
        model = EvalModels(chat_model=oracle_model(), embeddings=FakeEmbeddings(), model_name=name)
        keys.append(open_caches(one, model)["lamina-session"].key)
    other = EvalModels(chat_model=oracle_model(), embeddings=FakeEmbeddings(), model_name="gpt")
    assert keys[0] == keys[1] != open_caches(one, other)["lamina-session"].key


def test_a_resume_may_add_systems_and_keeps_the_answers_it_has(data: Path, tmp_path: Path) -> None:
    """Systems are not part of a run's identity: baselines first, lamina later."""
    out = tmp_path / "staged"
    first = settings(data, out, systems=["flat"], judge=False)
    run_evaluation(first, models(oracle_model()), progress=False, plots=False)
    model = oracle_model()
    more = settings(data, out, systems=["flat", "oracle"], judge=False)
    both = run_evaluation(more, models(model), progress=False, plots=False)
    assert model.count("EvalAnswer") == 6  # only the oracle's six: flat's answers were kept
    assert sorted({r.system for r in both.results}) == ["flat", "oracle"]
    assert len(both.results) == 12


def test_redo_answers_one_system_again_and_keeps_the_others(data: Path, tmp_path: Path) -> None:
    out = tmp_path / "redo"
    two = settings(data, out, systems=["flat", "oracle"], judge=False)
    run_evaluation(two, models(oracle_model()), progress=False, plots=False)
    with pytest.raises(InvalidInputError, match="--redo names systems"):
        run_evaluation(two, models(oracle_model()), redo=["lamina"], progress=False)
    model = oracle_model()
    again = run_evaluation(two, models(model), redo=["flat"], progress=False, plots=False)
    assert model.count("EvalAnswer") == 6  # flat's six again, not the oracle's
    assert len(again.results) == 12
    assert sum(r.system == "flat" for r in again.results) == 6  # the old ones no longer count
    model = oracle_model()
    resumed = run_evaluation(two, models(model), progress=False, plots=False)
    assert model.count("EvalAnswer") == 0
    assert len(resumed.results) == 12  # a plain resume after a redo answers nothing


def test_redo_failed_asks_again_only_where_the_answer_step_failed(
    data: Path, tmp_path: Path
) -> None:
    out = tmp_path / "redo-failed"
    two = settings(data, out, systems=["flat", "oracle"], judge=False)
    run_evaluation(two, models(oracle_model()), progress=False, plots=False)
    journal = out / "journal.jsonl"
    lines = journal.read_text().splitlines()
    failed = next(i for i, x in enumerate(lines) if '"system":"flat"' in x)
    qid = json.loads(lines[failed])["qid"]
    lines[failed] = lines[failed].replace('"notes":[]', '"notes":["answer step failed"]')
    journal.write_text("\n".join(lines) + "\n")
    with pytest.raises(InvalidInputError, match="--redo names systems"):
        run_evaluation(two, models(oracle_model()), redo_failed=["lamina"], progress=False)
    model = oracle_model()
    again = run_evaluation(two, models(model), redo_failed=["flat"], progress=False, plots=False)
    assert model.count("EvalAnswer") == 1  # the failed one, nothing else
    assert len(again.results) == 12
    redone = [r for r in again.results if r.system == "flat" and r.qid == qid]
    assert len(redone) == 1 and not redone[0].step_failed


def test_merge_from_brings_in_another_runs_answers_of_the_same_settings(
    data: Path, tmp_path: Path
) -> None:
    """A long run split over two processes: each answers some systems, then one merges."""
    home, away = tmp_path / "home", tmp_path / "away"
    run_evaluation(settings(data, home, systems=["flat"], judge=False), models(oracle_model()),
                   progress=False, plots=False)  # fmt: skip
    away_run = settings(data, away, systems=["oracle"], judge=False)
    run_evaluation(away_run, models(oracle_model()), progress=False, plots=False)
    both = settings(data, home, systems=["flat", "oracle"], judge=False)
    model = oracle_model()
    merged = run_evaluation(both, models(model), merge_from=[away], progress=False, plots=False)
    assert model.count("EvalAnswer") == 0  # nothing left to answer
    assert sorted(r.system for r in merged.results) == ["flat"] * 6 + ["oracle"] * 6
    again = run_evaluation(both, models(oracle_model()), merge_from=[away], progress=False)
    assert len(again.results) == 12  # merging twice adds nothing
    # a system started over here takes the other run's answers (redo first, then merge)
    redone = settings(data, away, systems=["flat"], judge=False)
    run_evaluation(redone, models(oracle_model()), progress=False, plots=False)
    model = oracle_model()
    moved = run_evaluation(both, models(model), redo=["flat"], merge_from=[away], progress=False)
    assert model.count("EvalAnswer") == 0 and len(moved.results) == 12
    other = settings(data, tmp_path / "other", systems=["oracle"], judge=False, top_k=3)
    run_evaluation(other, models(oracle_model()), progress=False, plots=False)
    with pytest.raises(InvalidInputError, match="other settings"):
        run_evaluation(both, models(oracle_model()), merge_from=[tmp_path / "other"])
    with pytest.raises(InvalidInputError, match="no evaluation run"):
        run_evaluation(both, models(oracle_model()), merge_from=[tmp_path / "nowhere"])


def test_an_interim_report_scores_only_the_questions_every_system_answered(
    data: Path, tmp_path: Path
) -> None:
    out = tmp_path / "interim"
    run_evaluation(settings(data, out, systems=["flat"], judge=False), models(oracle_model()),
                   progress=False, plots=False)  # fmt: skip
    journal = out / "journal.jsonl"
    lines = journal.read_text().splitlines()
    oracle = settings(data, tmp_path / "o", systems=["oracle"], judge=False)
    run_evaluation(oracle, models(oracle_model()), progress=False, plots=False)
    some = [
        x for x in (tmp_path / "o" / "journal.jsonl").read_text().splitlines() if '"answer"' in x
    ]
    journal.write_text("\n".join([*lines, *some[:2]]) + "\n")  # oracle answered two so far
    model = oracle_model()
    both = settings(data, out, systems=["flat", "oracle"], judge=False)
    interim = run_evaluation(both, models(model), interim=True, progress=False, plots=False)
    assert model.calls == []  # nothing answered
    assert len(interim.results) == 4 and {r.system for r in interim.results} == {"flat", "oracle"}
    assert interim.meta["interim"] == {
        "questions_scored": 2,
        "questions_planned": 6,
        "answered": {"flat": 6, "oracle": 2},
    }
    assert "**INTERIM REPORT**" in (out / "report.md").read_text()
    # a system without answers yet is left out rather than emptying the comparison
    three = settings(data, out, systems=["flat", "oracle", "naive-rag"], judge=False)
    again = run_evaluation(three, models(oracle_model()), interim=True, progress=False)
    assert len(again.results) == 4 and again.meta["interim"]["answered"]["naive-rag"] == 0


def test_every_answer_records_the_code_version_and_the_report_flags_a_mix(
    data: Path, tmp_path: Path
) -> None:
    out = tmp_path / "versions"
    one = settings(data, out, systems=["flat", "oracle"], judge=False)
    done = run_evaluation(one, models(oracle_model()), progress=False, plots=False)
    (version,) = {r.code for r in done.results}
    assert version == code_version() and len(version) == 12
    assert f"code version of every answer**: {version}" in (out / "report.md").read_text()
    # an older answer from other code: the report says the system's answers are mixed
    journal = out / "journal.jsonl"
    lines = journal.read_text().splitlines()
    first_flat = next(i for i, x in enumerate(lines) if '"system":"flat"' in x)
    lines[first_flat] = lines[first_flat].replace(f'"code":"{version}"', '"code":"0ld0ld0ld0ld"')
    journal.write_text("\n".join(lines) + "\n")
    run_evaluation(one, models(oracle_model()), progress=False, plots=False)
    report = (out / "report.md").read_text()
    flat = report.split("flat: ", 1)[1].split(";", 1)[0]  # versions in any order
    assert "0ld0ld0ld0ld x1" in flat and f"{version} x5" in flat and "MIXED" in flat
    assert "oracle: " + version + " x6" in report


def test_the_code_version_follows_the_answering_code_only(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    for folder in ("agents", "evaluation", "tests"):
        (package / folder).mkdir(parents=True)
    (package / "agents" / "judge.py").write_text("A = 1\n")
    (package / "errors.py").write_text("E = 1\n")
    (package / "evaluation" / "report.py").write_text("R = 1\n")
    base = code_version(package)
    (package / "evaluation" / "report.py").write_text("R = 2\n")
    (package / "tests" / "test_x.py").write_text("T = 1\n")
    assert code_version(package) == base  # the harness and the tests do not answer
    (package / "agents" / "judge.py").write_text("A = 2\n")
    assert code_version(package) != base


def test_recall_options_reach_lamina_and_are_recorded(data: Path, tmp_path: Path) -> None:
    out = tmp_path / "options"
    args = _cli(
        ["--data", str(data), "--systems", "lamina", "--out", str(out), "--no-judge"]
        + ["--recall-option", "derived_share=0.3"]
        + ["--recall-option", "context_tokens=900", "--no-progress", "--no-plots"]
    )
    model = oracle_model()
    assert run_eval(args, models=models(model)) == 0
    (header,) = [e for e in Journal(out / "journal.jsonl").read() if isinstance(e, RunHeader)]
    assert header.fingerprint["recall"] == {"derived_share": 0.3, "context_tokens": 900}
    report = (out / "report.md").read_text()
    assert "--recall-option derived_share=0.3 --recall-option" in report
    assert "derived memory takes at most 30%" in report  # the report reads the arm
    arms, context = split_recall({"derived_share": 0.3, "context_tokens": 900})
    assert (arms, context) == (ResearchArms(derived_share=0.3), {"context_tokens": 900})
    bad = ["--data", str(data), "--out", str(tmp_path / "bad"), "--recall-option"]
    with pytest.raises(InvalidInputError, match="unknown recall option"):
        run_eval(_cli([*bad, "no_such=1"]), models=models(oracle_model()))
    with pytest.raises(InvalidInputError, match="KEY=VALUE"):
        run_eval(_cli([*bad, "context_tokens"]), models=models(oracle_model()))


def test_exclude_run_chooses_only_questions_the_other_run_did_not(
    data: Path, tmp_path: Path
) -> None:
    main, dev = tmp_path / "main", tmp_path / "dev"
    common = ["--data", str(data), "--systems", "flat", "--no-judge", "--no-progress"]
    run_eval(
        _cli([*common, "--questions", "2", "--out", str(main), "--no-plots"]),
        models=models(oracle_model()),
    )
    chosen = {r.qid for r in answers_of(Journal(main / "journal.jsonl").read())}
    run_eval(
        _cli([*common, "--exclude-run", str(main), "--out", str(dev), "--no-plots"]),
        models=models(oracle_model()),
    )
    other = {r.qid for r in answers_of(Journal(dev / "journal.jsonl").read())}
    assert chosen and other and not chosen & other
    every = {q.qid for qs in load_subset(data, conversations=None).questions.values() for q in qs}
    assert chosen | other == every


def test_every_context_field_is_classified_for_the_construction_key() -> None:
    """A new MemoryContext field must be sorted into construction or recall on purpose:
    a recall-only field in the key would rebuild every stored memory for nothing (the
    long run's 788 turns take about an hour), and a construction field left out of it
    would reuse memory built another way."""
    construction = {
        "attribution_check",  # recall-only, but in the key since the long run was built
        "boundary_gap_minutes",
        "boundary_llm_check",
        "boundary_max_tokens",
        "conflict_k",
        "conflict_max_pairs",
        "conflict_pairs_per_fact",
        "construction_format",
        "construction_frequency_penalty",
        "construction_max_items",
        "construction_max_tokens",
        "construction_tokens_per_item",
        "duplicate_threshold",
        "instructions",
        "max_llm_attempts",
        "merge_threshold",
        "neighbour_k",
        "owner_rules",
        "profile_scenes",
        "scene_max_gap_days",
        "scene_tau",
        "skip_trivial_turns",
        "theta_count",
        "theta_sim",
        "timezone",
        "trigger_policy",
        "update_cues",
    }
    assert set(construction_settings("recurrence")) | set(KEYED_UNLESS) == construction
    every = {f.name for f in dataclasses.fields(MemoryContext)}
    keyed_elsewhere = set(CONSTANT_SETTINGS) | set(CONSTRUCTION_ARMS)
    assert every == (construction - keyed_elsewhere) | RECALL_FIELDS | PROFILE_FIELDS


KEYS_OF_THE_DEFAULT_BUILD = {
    "eager": "lamina-eager-00cd8b4f4b87",
    "recurrence": "lamina-recurrence-f5f8074de7c7",
    "boundary": "lamina-boundary-ea3dc410035e",
    "session": "lamina-session-26ea8979e8ab",
}
"""Construction keys of the default build, taken before the context's construction knobs
became constants (f6e0b25): moving a setting must not send built memory to be built again."""


def test_the_default_builds_keep_their_construction_keys() -> None:
    inputs = KeyInputs(
        data_sha256="0" * 64,
        embeddings="MiniLM",
        model="qwen",
        batch_size=10,
        chunk_words=128,
        chunk_overlap=32,
        sessions=None,
    )
    keys = {p: construction_key(f"lamina-{p}", inputs) for p in KEYS_OF_THE_DEFAULT_BUILD}
    assert keys == KEYS_OF_THE_DEFAULT_BUILD
    # a research arm that changes what is built is in the key under its name
    assert construction_settings("boundary", boundary_max_tokens=320)["boundary_max_tokens"] == 320
    assert construction_settings("boundary", construction_format="json")["construction_format"] == (
        "json"
    )


def test_the_keys_constant_settings_are_lamina_s_constants() -> None:
    """A constant changed in lamina changes what is built, so the key must follow it."""
    from lamina.agents.common import refinement
    from lamina.agents.ingest.extraction import drafting
    from lamina.agents.ingest.nodes import conflicts, episode_trigger, scenes
    from lamina.graphs.options import DEFAULT_MAX_ATTEMPTS

    assert CONSTANT_SETTINGS == {
        "theta_sim": episode_trigger.THETA_SIM,
        "theta_count": episode_trigger.THETA_COUNT,
        "neighbour_k": episode_trigger.NEIGHBOUR_K,
        "merge_threshold": episode_trigger.MERGE_THRESHOLD,
        "boundary_gap_minutes": episode_trigger.BOUNDARY_GAP_MINUTES,
        "boundary_llm_check": False,  # removed: the boundary policy asks no judge
        "construction_max_items": drafting.MAX_ITEMS,
        "construction_max_tokens": drafting.MAX_TOKENS,
        "construction_tokens_per_item": drafting.TOKENS_PER_ITEM,
        "construction_frequency_penalty": drafting.FREQUENCY_PENALTY,
        "skip_trivial_turns": True,  # removed: trivial turns always stay raw only
        "duplicate_threshold": refinement.DUPLICATE_THRESHOLD,
        "conflict_k": conflicts.CONFLICT_K,
        "conflict_pairs_per_fact": conflicts.PAIRS_PER_FACT,
        "conflict_max_pairs": conflicts.MAX_PAIRS,
        "scene_tau": scenes.SCENE_TAU,
        "scene_max_gap_days": scenes.SCENE_MAX_GAP_DAYS,
        "profile_scenes": 8,  # removed: nothing read it
        "max_llm_attempts": DEFAULT_MAX_ATTEMPTS,
        "attribution_check": True,  # removed: recall always checks attribution
    }
    assert drafting.EXTRA_ITEMS == 2  # left out of the key at 2 before it became a constant


def test_a_setting_added_later_enters_the_key_only_away_from_its_old_value() -> None:
    """Built memory keeps its key when a setting that reproduces the old behaviour is added."""
    others = {"instructions": "Never store health data."}
    for name, old in KEYED_UNLESS.items():
        ctx = MemoryContext(**SMALL_MODEL_PROFILE)  # the eval's build
        built = {**dataclasses.asdict(ctx), "owner_rules": ResearchArms().owner_rules_on(ctx)}
        assert built[name] == old  # the evaluation's settings reproduce the old build
        assert name not in construction_settings("boundary")
        other = others.get(name, old + 1 if isinstance(old, int) else not old)
        assert construction_settings("boundary", **{name: other})[name] == other


def test_redo_of_lamina_covers_each_policy_when_several_run(data: Path, tmp_path: Path) -> None:
    out = tmp_path / "policies"
    two = settings(
        data, out, systems=["lamina"], policies=["session", "eager"], judge=False, questions=1
    )
    first = run_evaluation(two, models(oracle_model()), progress=False, plots=False)
    assert {r.system for r in first.results} == {"lamina@session", "lamina@eager"}
    model = oracle_model()
    again = run_evaluation(two, models(model), redo=["lamina"], progress=False, plots=False)
    redone = [e for e in Journal(out / "journal.jsonl").read() if isinstance(e, Redo)]
    assert redone[-1].systems == ["lamina@eager", "lamina@session"]
    assert len(again.results) == len(first.results)  # every answer made again, none twice
    assert model.count("DraftFirst") >= len(first.results)


class StartRecorder:
    """A double of ``EvalModels.start``: records each call and how many calls the model
    had answered by then."""

    def __init__(self, model: SchemaChatModel) -> None:
        self.model = model
        self.model_calls_before: list[int] = []

    def __call__(self) -> None:
        self.model_calls_before.append(len(self.model.calls))


def lazy_models(model: SchemaChatModel, start: StartRecorder) -> EvalModels:
    return dataclasses.replace(models(model), start=start)


def test_the_chat_model_starts_before_its_first_call_and_not_when_nothing_is_left(
    data: Path, tmp_path: Path
) -> None:
    small = settings(data, tmp_path / "small", systems=["lamina", "flat"], questions=2)
    model = oracle_model()
    start = StartRecorder(model)
    first = run_evaluation(small, lazy_models(model, start), progress=False, plots=False)
    assert start.model_calls_before == [0]  # once, before building memory (the first call)
    assert model.count("ConstructionLines") > 0
    # the finished run resumed, as a run and as an interim report: nothing to build or answer
    for interim in (False, True):
        model = oracle_model()
        start = StartRecorder(model)
        again = run_evaluation(
            small, lazy_models(model, start), interim=interim, progress=False, plots=False
        )
        assert start.model_calls_before == [] and model.calls == []
        assert _rows(again.results) == _rows(first.results)
    model = oracle_model()
    start = StartRecorder(model)
    args = _cli(  # the same through the command line: lamina-bench eval --interim
        ["--data", str(data), "--out", str(tmp_path / "small"), "--interim", "--no-progress"]
        + ["--systems", "lamina", "flat", "--policy", "session", "--batch-size", "4"]
        + ["--top-k", "30", "--rag-k", "1", "--chunk-words", "40", "--chunk-overlap", "8"]
        + ["--context-window", "1000", "--questions", "2", "--no-plots"]
    )
    assert run_eval(args, models=lazy_models(model, start)) == 0
    assert start.model_calls_before == [] and model.calls == []
    # built memory, questions left: started before the first answer
    model = oracle_model()
    start = StartRecorder(model)
    flat = settings(data, tmp_path / "flat", systems=["flat"], questions=2)
    run_evaluation(flat, lazy_models(model, start), progress=False, plots=False)
    assert start.model_calls_before == [0] and model.count("EvalAnswer") > 0


def test_the_eval_command_builds_a_local_model_without_loading_it() -> None:
    model = oracle_model()
    servers: list[FakeLocalServer] = []

    def factory(config: Any) -> FakeLocalServer:
        servers.append(FakeLocalServer(model))
        return servers[-1]

    args = _cli(["--local-model", "smollm2", "--local-ctx", "4096"])
    with ExitStack() as stack:
        built, window = build_models(args, stack, local_server_factory=factory)
        assert [s.starts for s in servers] == [0]  # the client is built, nothing is loaded
        assert built.chat_model is model and window == 4096
        assert built.model_name == "local smollm2 (llama.cpp, n_ctx 4096)"
        built.ready()
        built.ready()
        assert [s.starts for s in servers] == [1]
    assert [s.stops for s in servers] == [1]


def test_a_rebuild_cut_short_before_its_first_batch_is_still_a_rebuild(tmp_path: Path) -> None:
    from lamina_bench.evaluation.construction import ConstructionCache
    from lamina_bench.evaluation.records import IngestStep

    folder = tmp_path / "there" / "lamina-session-abc"
    folder.mkdir(parents=True)
    step = IngestStep(stage="lamina-session", conversation="c", batch=0, batches=1, turns=2)
    Journal(folder / "ingest.jsonl").append(step)  # as committed: the journal alone
    cache = ConstructionCache.open(tmp_path / "there", folder.name, FakeEmbeddings())
    assert cache.built() == set()
    cache.store.count("raw", "lamina-session/c")  # the store is created, then the run dies
    assert (folder / "chroma").exists()
    again = ConstructionCache.open(tmp_path / "there", folder.name, FakeEmbeddings())
    assert again.built() == set()  # not taken for a store that holds its journal
    again.record(step)
    assert again.built() == {step.key} and len(again.steps()) == 1  # journaled once
