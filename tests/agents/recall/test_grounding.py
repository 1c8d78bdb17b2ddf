"""Answers grounded in what they cite (issue 61, item 4): the check, then the recall graph."""

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from lamina.agents.recall.answer import REFUSAL
from lamina.agents.recall.grounding import ground, grounded, own_words
from lamina.core.context import MemoryContext
from lamina.records import RawTurn
from lamina.stores import ChromaMemoryStore
from lamina.testing import FakeEmbeddings, SchemaChatModel

from .test_recall import judged, label_of, recall_graph

NS = "user:priya"
T0 = datetime(2024, 7, 1, 9, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("answer", "question", "cited"),
    [
        ("Juniper", "whats rachel's dog called again?", ["Rachel: juniper! shes a lurcher"]),
        ("Se llama Trufa", "¿Cómo se llama la perra de Ainhoa?", ["Ainhoa: Trufa es muy lista"]),
        ("Sie fährt nach Norwegen", "Wohin fährt Jasmin?", ["Jasmin: Wir fahren nach Norwegen!"]),
        ("Lucía", "Who moved to Valencia?", ["Jorge: lucia se mudó a Valencia"]),
        ("2:04", "what time did molly get?", ["Molly: finished in 2:04 !!"]),
        ("She adopted a dog", "What did Rachel do?", ["Rachel: adopted a rescue dog"]),
        ("Yes", "Did Dev book the flights?", ["Dev: booked the flights!! 12th august"]),
    ],
)
def test_an_answer_its_citations_hold_is_grounded(
    answer: str, question: str, cited: list[str]
) -> None:
    assert grounded(answer, question, cited)


@pytest.mark.parametrize(
    ("answer", "question", "cited"),
    [
        ("blue", "What is Jonas's favourite colour?", ["Jonas: started at Helio Solar today"]),
        ("Jonas", "Who knocked Priya's laptop off the desk?", ["Priya: Pixel knocked my laptop"]),
        ("Toyota Corolla", "what car does rachel drive?", ["Rachel: took juniper to the beach"]),
        ("3:15", "what time did molly get?", ["Molly: finished in 2:04 !!"]),
        ("Anna", "Wie heißt Katharinas Schwester?", []),
        ("Yes", "Did Rachel see the northern lights?", ["Dev: booked the flights"]),
    ],
)
def test_an_answer_its_citations_do_not_hold_is_not(
    answer: str, question: str, cited: list[str]
) -> None:
    assert not grounded(answer, question, cited)


def test_the_question_words_are_the_premise_not_the_answer() -> None:
    assert own_words("Rachel's dog is called Juniper", "what is rachel's dog called") == ["juniper"]
    assert own_words("Ainhoa", "¿Quién es AINHOA?") == []
    # an answer that adds nothing to the question restates it: no answer
    cited = ["Katharina: Meine Schwester kommt am Wochenende zu Besuch"]
    assert not grounded("Katharinas Schwester", "Wie heißt Katharinas Schwester?", cited)
    assert not grounded("Italia", "Wie war Eriks Urlaub in Italien?", ["Erik: Italien!"])


def test_a_shown_memory_on_the_topic_that_holds_the_answer_becomes_its_citation() -> None:
    lines = {
        "a": "Rachel: ok so i did a thing. adopted a rescue dog",
        "b": "Rachel: juniper! shes a lurcher, super skinny",
        "c": "Dev: omg i need to meet her",
    }
    checked = ground("Juniper", "what's Rachel's dog called?", ["c"], lines, ["Rachel", "Dev"])
    assert checked.grounded and checked.recited and checked.cited_ids == ["b"]
    # a line of the answer's person on another topic does not ground a name
    lines = {"p": "Priya: Pixel knocked my laptop off the desk", "j": "Jonas: Priya are you ok"}
    checked = ground(
        "Jonas", "Who knocked Priya's laptop off the desk?", ["p"], lines, ["Priya", "Jonas"]
    )
    assert not checked.grounded and checked.cited_ids == ["p"]


# ------------------------------------------------------------------------- in the graph
@pytest.fixture
def store() -> ChromaMemoryStore:
    s = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    said = [
        ("Priya", "Pixel knocked my laptop off the desk this morning"),
        ("Jonas", "haha classic cat. is the laptop ok?"),
        ("Priya", "screen's fine. Pixel is banned from the desk now"),
        ("Jonas", "I start at Helio Solar on Monday"),
    ]
    s.add(
        NS,
        [
            RawTurn(
                namespace=NS,
                text=text,
                speaker=who,
                session_id="s1",
                turn_index=i,
                occurred_at=T0 + timedelta(minutes=i),
            )
            for i, (who, text) in enumerate(said)
        ],
    )
    return s


def ask(store: ChromaMemoryStore, model: SchemaChatModel, question: str, **kw: Any) -> Any:
    """Recall with the attribution check off: these tests test the grounding checks alone."""
    graph = recall_graph(model, store, attribution=False)
    return graph.invoke({"question": question}, context=MemoryContext(namespace=NS, **kw))


def test_an_invented_answer_is_asked_again_then_refused(store: ChromaMemoryStore) -> None:
    model = SchemaChatModel()
    blue = lambda m: judged("blue", label_of(m, "Helio Solar"))  # noqa: E731
    model.script("DraftFirst", blue, blue)
    out = ask(store, model, "What is Jonas's favourite colour?")
    assert out["refused"] and out["answer"] == REFUSAL and out["citations"] == []
    assert [v["ungrounded"] for v in out["verdicts"]] == [True, True]  # a second round, then no
    assert "blue" in out["verdicts"][0]["missing"]


def test_a_name_its_cited_turn_does_not_hold_is_refused(store: ChromaMemoryStore) -> None:
    model = SchemaChatModel()
    model.script("DraftFirst", lambda m: judged("Jonas", label_of(m, "Pixel knocked")))
    out = ask(store, model, "Who knocked Priya's laptop off the desk?")
    assert out["refused"]


def test_an_answer_cited_under_the_wrong_label_keeps_its_answer(store: ChromaMemoryStore) -> None:
    model = SchemaChatModel()
    model.script("DraftFirst", lambda m: judged("Pixel, the cat", label_of(m, "Helio Solar")))
    out = ask(store, model, "Who knocked Priya's laptop off the desk?")
    assert not out["refused"] and out["answer"] == "Pixel, the cat"
    cited = {m.id: m.text for m in out["candidates"]}
    assert all("Pixel" in cited[c] or "cat" in cited[c] for c in out["citations"])
    assert out["verdicts"][-1]["recited"]


def test_a_plain_answer_that_its_memories_do_not_hold_is_refused(store: ChromaMemoryStore) -> None:
    model = SchemaChatModel()
    model.script("DraftFirst", *["not json at all"] * 3)  # the fallback: a plain answer call
    model.script(
        "AnswerDraft",
        lambda m: '{"answerable": true, "answer": "green", "cited": ["m1"]}',
    )
    out = ask(store, model, "What is Jonas's favourite colour?")
    assert out["refused"] and out["answer_source"] == "fallback"
    assert model.count("AnswerDraft") == 1
