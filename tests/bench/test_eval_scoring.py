"""Metric unit tests; expected values are computed by hand from EVAL_NOTES.md's definitions."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import pytest

from lamina.llm.structured import LLMCall
from lamina_bench.datasets.locomo import Conversation, Question, Turn
from lamina_bench.evaluation.records import QuestionResult, costs_of, merge_costs, total
from lamina_bench.evaluation.report import _settings_notes
from lamina_bench.evaluation.scoring import (
    bleu1,
    evidence_recall,
    is_refusal,
    locomo_f1,
    locomo_tokens,
    word_tokens,
)
from lamina_bench.evaluation.subset import EvalQuestion, select, spread
from lamina_bench.evaluation.summary import paired_difference, summarize
from lamina_bench.evaluation.transcripts import WordCounter, chunks, transcript


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("Caroline's dog, Rex!", ["caroline", "'s", "dog", ",", "rex", "!"]),
        ("She didn't go to the U.S. in May.", "she did n't go to the u.s. in may .".split()),
        ('"Charlotte\'s Web" (book)', ["``", "charlotte", "'s", "web", "''", "(", "book", ")"]),
        ("7:30 pm on 8 May, 2023", ["7:30", "pm", "on", "8", "may", ",", "2023"]),
        ("It costs $1,000... maybe", ["it", "costs", "$", "1,000", "...", "maybe"]),
        ("I can't; they're here: now", "i ca n't ; they 're here : now".split()),
        ("the kids' toys", ["the", "kids", "'", "toys"]),
    ],
)
def test_word_tokens_follow_treebank_rules(text: str, tokens: list[str]) -> None:
    assert word_tokens(text) == tokens


@pytest.mark.parametrize(
    ("pred", "gold", "expected"),
    [
        ("Adoption agencies", "adoption agencies", 1.0),
        # 2 of 4 predicted unigrams match; longer than the reference: no brevity penalty
        ("she researched adoption agencies", "adoption agencies", 0.5),
        # 1/1 precision, c=1 < r=2: BP = exp(1 - 2/1)
        ("agencies", "adoption agencies", math.exp(-1)),
        # "the" clipped to its single reference count: 1/3; c=3 > r=2
        ("the the the", "the cat", 1 / 3),
        # tokens 7 / may / 2023 all match (3 of 3), reference has 4 tokens (comma): exp(1-4/3)
        ("7 May 2023", "May 7, 2023", math.exp(1 - 4 / 3)),
        ("cat", "dog", 0.0),  # no unigram match: 0 even with method1 smoothing
        ("", "dog", 0.0),
        (None, "dog", 0.0),
    ],
)
def test_bleu1(pred: object, gold: object, expected: float) -> None:
    assert bleu1(pred, gold) == pytest.approx(expected)


def test_locomo_normalisation() -> None:
    # commas dropped, lowercased, punctuation and a/an/the/and removed, Porter-stemmed
    assert locomo_tokens("The Dogs, and a Cat!") == ["dog", "cat"]
    assert locomo_tokens("running 1,000 miles") == ["run", "1000", "mile"]


@pytest.mark.parametrize(
    ("pred", "gold", "category", "expected"),
    [
        ("adoption agencies", "Adoption agencies", 2, 1.0),
        # multiset overlap: pred {rex:2, dog:1}, gold {rex:1}: P = 1/3, R = 1 -> 0.5
        ("Rex Rex dog", "Rex", 4, 0.5),
        # category 3: gold cut at ';' -> "yes"
        ("yes", "Yes; she likes the outdoors", 3, 1.0),
        # category 1: gold parts pottery / painting; best over pred parts: 1 and 0 -> 0.5
        ("pottery, swimming", "pottery, painting", 1, 0.5),
        # category 1, one pred part vs two gold parts: "pottery painting" vs "pottery"
        # F1 = 2*(1/2*1)/(1/2+1) = 2/3, vs "painting" also 2/3 -> mean 2/3
        ("pottery and painting", "pottery, painting", 1, 2 / 3),
        ("Not mentioned in the conversation", "whatever", 5, 1.0),
        ("No information available.", "x", 5, 1.0),
        ("Biscuit", "Biscuit", 5, 0.0),
        ("", "Rex", 4, 0.0),
    ],
)
def test_locomo_f1_per_category(pred: str, gold: str, category: int, expected: float) -> None:
    assert locomo_f1(pred, gold, category) == pytest.approx(expected)


def test_refusal_and_evidence_recall() -> None:
    assert is_refusal("That is NOT MENTIONED anywhere")
    assert not is_refusal("Biscuit")
    session_of = {"D1:1": "s1", "D1:2": "s1", "D2:1": "s2", "D3:1": "s3"}
    assert evidence_recall(["D1:1", "D2:1"], ["D1:2", "D2:1"], session_of) == (0.5, 1.0)
    assert evidence_recall(["D1:1", "D3:1"], ["D1:1"], session_of) == (0.5, 0.5)
    assert evidence_recall([], ["D1:1"], session_of) == (None, None)


def test_costs_sum_per_node_and_mark_estimates() -> None:
    calls = [
        LLMCall("judge", "Verdict", 1, "prompt", True, 0.5, 10, 2),
        LLMCall("judge", "Verdict", 2, "prompt", True, 0.25, 20, 3),
        LLMCall("answer", "AnswerDraft", 1, "prompt", True, 1.0),
    ]
    plain = costs_of(calls)
    assert plain["judge"].prompt_tokens == 30 and plain["judge"].completion_tokens == 5
    assert plain["judge"].calls == 2 and plain["judge"].latency_s == pytest.approx(0.75)
    assert plain["answer"].unknown_calls == 1 and plain["answer"].tokens == 0
    estimated = costs_of(calls[2:], estimate=(100, 7))
    assert estimated["answer"].estimated_calls == 1 and estimated["answer"].tokens == 107
    merged = merge_costs(plain, estimated)
    assert total(merged).tokens == 35 + 107 and total(merged).calls == 4


def _conversation() -> Conversation:
    turns = []
    for s in (1, 2):
        when = datetime(2023, 5, s, 12, tzinfo=UTC)
        for t in range(3):
            turns.append(
                Turn(f"D{s}:{t + 1}", f"session_{s}", t, "Ann", f"word{s}{t} " * 4, None, when)
            )
    questions = [
        Question("c", f"q{n}", "a", cat, frozenset(ev), frozenset())
        for n, (cat, ev) in enumerate([(4, {"D1:1"}), (2, {"D2:1"}), (5, {"D2:2"}), (1, {"D2:3"})])
    ]
    sessions = {"D1:1": "session_1", "D2:1": "session_2", "D2:2": "session_2", "D2:3": "session_2"}
    questions = [
        Question(
            q.conversation,
            q.text,
            q.answer,
            q.category,
            q.evidence,
            frozenset(sessions[e] for e in q.evidence),
        )
        for q in questions
    ]
    return Conversation("c", ("Ann", "Bob"), turns, questions)


def test_transcript_keeps_the_most_recent_turns_within_budget() -> None:
    conv = _conversation()
    counter = WordCounter()
    whole = transcript(conv, 10_000, counter)
    assert whole.dropped == 0 and whole.kept[0] == "D1:1"
    assert whole.text.count("--- session_") == 2
    cut = transcript(conv, 30, counter)
    assert cut.dropped > 0 and cut.kept[-1] == "D2:3"
    assert cut.kept == [t.dia_id for t in conv.turns][cut.dropped :]
    assert cut.tokens <= 30


def test_chunks_overlap_and_map_back_to_turns() -> None:
    conv = _conversation()
    parts = chunks(conv, 10, 4)
    words = [w for c in parts for w in c.text.split()]
    assert all(len(c.text.split()) <= 10 for c in parts)
    assert parts[1].text.split()[:4] == parts[0].text.split()[-4:]  # 4 words of overlap
    assert len(words) > sum(len(t.text.split()) for t in conv.turns)  # headers + overlap
    assert {d for c in parts for d in c.dia_ids} == {t.dia_id for t in conv.turns}
    with pytest.raises(ValueError):
        chunks(conv, 5, 5)


def test_select_spreads_and_keeps_file_order() -> None:
    conv = _conversation()
    subset = select([conv], questions=2, adversarial=0)
    assert [q.qid for q in subset.questions["c"]] == ["c:q0", "c:q1"]
    subset = select([conv], questions=1, adversarial=1, pick="first")
    assert [(q.qid, q.category) for q in subset.questions["c"]] == [("c:q0", 4), ("c:q2", 5)]
    adversarial = subset.questions["c"][1]
    assert adversarial.gold == "Not mentioned in the conversation"
    assert adversarial.adversarial_answer == "a"
    first_session = select([conv], sessions=1)
    assert [q.qid for q in first_session.questions["c"]] == ["c:q0"]
    assert len(first_session.conversations[0].turns) == 3
    items = select([conv]).questions["c"]
    assert spread(items, 2, "spread") == [items[0], items[2]]


def test_balanced_pick_shares_the_questions_between_categories() -> None:
    def item(n: int, category: int) -> EvalQuestion:
        return EvalQuestion(f"c:q{n}", "c", category, f"q{n}", "a", ())

    items = [item(n, 4) for n in range(12)] + [item(12 + n, c) for n, c in enumerate([1, 2, 2])]
    chosen = spread(items, 6, "balanced")
    categories = [q.category for q in chosen]
    assert sorted(categories) == [1, 2, 2, 4, 4, 4]  # category 1 has one: its share goes on
    assert chosen == sorted(chosen, key=items.index)  # file order kept
    assert [q.qid for q in chosen if q.category == 4] == ["c:q0", "c:q4", "c:q8"]  # spread
    assert spread(items, 100, "balanced") == items


def test_judge_labels_with_mem0_semantics() -> None:
    from lamina.llm.structured import StructuredCaller
    from lamina.testing import ScriptedChatModel
    from lamina_bench.evaluation.judge import Judge

    model = ScriptedChatModel().enqueue(
        '{"reason": "same dog", "label": "correct"}',
        "no idea",
        "still no JSON",
        '{"label": "MAYBE"}',
    )
    judge = Judge(StructuredCaller(model, max_attempts=3), WordCounter(), name="scripted")
    verdict = judge.judge("What is the dog called?", "Biscuit", "It is called Biscuit")
    assert verdict.label == "CORRECT" and verdict.correct and verdict.reason == "same dog"
    prompt = str(model.calls[0][0].content)
    assert "Gold answer: Biscuit" in prompt and "Generated answer: It is called Biscuit" in prompt
    assert len(model.calls[0]) == 2  # one user message (+ the JSON instructions of the helper)
    failed = judge.judge("What is the dog called?", "Biscuit", "Rex")
    assert failed.label == "ERROR" and not failed.correct
    assert failed.costs["eval_judge"].calls == 3
    calls = len(model.calls)
    empty = judge.judge("What is the dog called?", "Biscuit", "  ")
    assert empty.label == "WRONG" and len(model.calls) == calls


def test_the_paired_difference_covers_only_the_questions_both_systems_answered() -> None:
    def answer(system: str, qid: str, f1: float, category: int = 1) -> QuestionResult:
        return QuestionResult(
            system=system, conversation="c", qid=qid, category=category, answer="a",
            raw_answer="a", refused=False, locomo_f1=f1,
        )  # fmt: skip

    ours = [answer("lamina", f"q{i}", 1.0) for i in range(4)]
    ours.append(answer("lamina", "q9", 0.0, category=5))  # category 5: not in the F1
    theirs = [answer("flat", f"q{i}", 0.5) for i in range(3)]  # q3 unanswered: left out
    diff = paired_difference(ours + theirs, "lamina", "flat")
    assert diff == {"mean": 0.5, "ci95_low": 0.5, "ci95_high": 0.5, "n": 3}
    assert paired_difference(ours, "lamina", "flat") is None
    mixed = [answer("flat", "q0", 1.0), answer("flat", "q1", 0.0), answer("flat", "q2", 1.0)]
    spread_out = paired_difference(ours + mixed, "lamina", "flat")
    assert spread_out is not None and spread_out["ci95_low"] < spread_out["mean"] < 0.5
    summary = summarize(ours + theirs, [], ["lamina", "flat"], paired=["lamina"])
    assert summary["paired_f1"] == {"lamina": {"flat": diff}}


def test_the_report_describes_the_context_order_the_run_used() -> None:
    def notes(recall: dict[str, object]) -> str:
        return "\n".join(_settings_notes({"settings": {"recall": recall}}))

    assert "shown in relevance order" in notes({})  # the library default
    assert "cut to 600 context tokens" in notes({"context_tokens": 600})
