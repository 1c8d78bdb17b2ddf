"""The construction call: the line format, the JSON path, the journal, salience."""

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import HumanMessage, SystemMessage

from lamina.agents.common.journal import SqliteReplyJournal, journal_key
from lamina.agents.ingest.extraction.drafting import EXTRA_ITEMS, MAX_ITEMS, item_budget
from lamina.agents.ingest.extraction.lines import parse_lines
from lamina.agents.ingest.extraction.salience import is_trivial
from lamina.core.context import SMALL_MODEL_PROFILE, MemoryContext
from lamina.graphs import ResearchArms
from lamina.graphs.ingest import build_ingest_graph
from lamina.stores import ChromaMemoryStore
from lamina.testing import FakeEmbeddings, SchemaChatModel

NS = "user:maya"
T0 = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)


def test_lines_are_read_one_by_one() -> None:
    reply = "\n".join(
        [
            "Sure, here are the notes:",
            "T|Theo's bakery",
            "S|Maya told Sam about the bakery.",
            "- F|t2|Theo|Theo opened a bakery.",
            "P: t3 | Sam | Sam will run a marathon.",
            "L|Sam|Sam loves bread.",
            "F|t2|",
            "F|x9y|Theo|bad label",
            "```",
        ]
    )
    parsed = parse_lines(reply)
    assert parsed.draft.title == "Theo's bakery"
    assert parsed.draft.summary == "Maya told Sam about the bakery."
    assert [(f.kind, f.source, f.subject) for f in parsed.draft.facts] == [
        ("fact", "t2", "Theo"),
        ("foresight", "t3", "Sam"),
        ("preference", None, "Sam"),
    ]
    assert parsed.dropped == ["F|t2|", "F|x9y|Theo|bad label"]


def test_an_item_under_the_summary_tag_or_no_tag_is_a_fact() -> None:
    reply = "\n".join(
        [
            "T|Maria's volunteering",
            "S|Maria told John about the shelter.",
            "S|t5|Maria|Maria hopes to get into local politics.",
            "t9|John|John wants schools funded properly.",
            "S|[t2] | John | John loves helping the community.",
        ]
    )
    draft = parse_lines(reply).draft
    assert draft.summary == "Maria told John about the shelter."
    assert [(f.kind, f.source, f.subject, f.statement) for f in draft.facts] == [
        ("fact", "t5", "Maria", "Maria hopes to get into local politics."),
        ("fact", "t9", "John", "John wants schools funded properly."),
        ("fact", "t2", "John", "John loves helping the community."),
    ]


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_any_reply_parses_without_raising(text: str) -> None:
    parsed = parse_lines(text)
    assert all(f.statement and f.subject for f in parsed.draft.facts)


def test_journal_keys_change_with_model_prompt_cap_and_text(tmp_path: Path) -> None:
    msgs = [SystemMessage("rules"), HumanMessage("turns")]
    key = journal_key("qwen", "v1", 100, msgs)
    assert key == journal_key("qwen", "v1", 100, list(msgs))
    others = {
        journal_key("gpt", "v1", 100, msgs),
        journal_key("qwen", "v2", 100, msgs),
        journal_key("qwen", "v1", 101, msgs),
        journal_key("qwen", "v1", 100, [SystemMessage("rules"), HumanMessage("turns!")]),
    }
    assert key not in others and len(others) == 4
    db = SqliteReplyJournal(tmp_path / "j.sqlite")
    db.put(key, "T|x")
    db.close()
    again = SqliteReplyJournal(tmp_path / "j.sqlite")  # a new process reads it back
    assert again.get(key) == "T|x" and again.get("missing") is None and again.hits == 1


def _ingest(
    model: SchemaChatModel,
    store: ChromaMemoryStore,
    journal: Any = None,
    arms: ResearchArms | None = None,
    **ctx: Any,
) -> Any:
    graph = build_ingest_graph(
        chat_model=model, store=store, journal=journal, arms=arms or ResearchArms()
    ).compile()
    turns = [
        {
            "speaker": "Maya",
            "text": "My brother Theo opened a bakery last week!",
            "occurred_at": T0,
            "session_id": "s1",
        },
        {
            "speaker": "Sam",
            "text": "Amazing, I love fresh bread and pastries",
            "occurred_at": T0 + timedelta(minutes=1),
            "session_id": "s1",
        },
    ]
    context = MemoryContext(namespace=NS, trigger_policy="session", **ctx)
    return graph.invoke({"turns": turns, "session_closed": True}, context=context)


def model_facts(store: ChromaMemoryStore) -> list[Any]:
    """The facts the model wrote (not the relations read from the turns)."""
    return [f for f in store.get("fact", NS) if f.metadata.get("derived_by") != "relations"]


REPLY = (
    "T|Bakery\nS|Maya's brother Theo opened a bakery.\nF|t1|Theo|Theo opened a bakery last week."
)


def test_a_repeated_build_reuses_the_journal_instead_of_calling_the_model(tmp_path: Path) -> None:
    journal = SqliteReplyJournal(tmp_path / "j.sqlite")
    first = SchemaChatModel().script("ConstructionLines", REPLY)
    store = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    _ingest(first, store, journal)
    assert first.count("ConstructionLines") == 1
    (fact,) = model_facts(store)
    assert fact.text == "Theo opened a bakery last week (19–25 February 2024)."
    assert fact.subject == "Theo"
    second = SchemaChatModel()  # would answer with an empty draft if it were asked
    fresh = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    out = _ingest(second, fresh, journal)
    assert second.calls == [] and out["llm_calls"] == [] and journal.hits == 1
    assert [f.text for f in model_facts(fresh)] == [fact.text]


def test_the_json_format_asks_for_the_schema() -> None:
    reply = {
        "title": "Bakery",
        "summary": "Theo opened a bakery.",
        "facts": [
            {
                "kind": "fact",
                "source": "t1",
                "subject": "Theo",
                "statement": "Theo opened a bakery.",
            }
        ],
    }
    model = SchemaChatModel().script("ConstructionDraft", json.dumps(reply))
    store = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    _ingest(model, store, arms=ResearchArms(construction_format="json"))
    assert model.count("ConstructionDraft") == 1 and model.count("ConstructionLines") == 0
    assert [(f.subject, f.text) for f in model_facts(store)] == [("Theo", "Theo opened a bakery.")]


def _capturing(seen: list[tuple[Any, dict[str, Any]]]) -> SchemaChatModel:
    """A scripted model that records every call's messages and keyword arguments."""

    class Capturing(SchemaChatModel):
        def _generate(self, messages, stop=None, run_manager=None, **kwargs):  # type: ignore[no-untyped-def]
            seen.append((messages, kwargs))
            return super()._generate(messages, stop, run_manager, **kwargs)

    return Capturing()


def test_output_is_capped_per_call() -> None:
    seen: list[tuple[Any, dict[str, Any]]] = []
    _ingest(_capturing(seen), ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings()))
    caps = [kwargs.get("max_tokens") for _, kwargs in seen]
    assert caps and all(isinstance(cap, int) and 0 < cap <= 480 for cap in caps)


def test_the_notes_asked_for_follow_the_excerpts_turns() -> None:
    """One note per turn plus ``EXTRA_ITEMS``, never above ``MAX_ITEMS``; the output cap
    follows the notes asked for."""
    assert item_budget(6) == (8, min(480, 70 + 28 * 8))
    assert item_budget(6, extra=0) == (6, 70 + 28 * 6)
    assert item_budget(30, extra=0)[0] == MAX_ITEMS
    assert item_budget(0, extra=0)[0] == 1
    seen: list[tuple[Any, dict[str, Any]]] = []
    store = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    _ingest(_capturing(seen), store)
    asked = [str(messages[-1].content) for messages, _ in seen]
    assert asked
    for prompt in asked:  # the excerpt's turn labels and two more, at most MAX_ITEMS
        wanted = re.search(r"at most (\d+) F, P or L notes", prompt)
        labels = len(re.findall(r"^\[t\d+\] ", prompt, re.M))
        assert wanted and int(wanted.group(1)) == min(MAX_ITEMS, labels + EXTRA_ITEMS)


def test_salience_keeps_anything_that_could_matter() -> None:
    for chatter in ["Wow, that's so cool!", "Thanks!", "Haha yes, totally agree.", "Sounds great!"]:
        assert is_trivial(chatter), chatter
    for content in [
        "we baked bread",
        "Thanks, Mel!",  # a name
        "It cost 20 dollars",  # a number
        "great",  # with an image
    ]:
        caption = "a photo of a cake" if content == "great" else None
        assert not is_trivial(content, caption=caption), content


def test_a_fact_is_filed_under_the_person_its_sentence_is_about() -> None:
    from lamina.agents.ingest.ownership.owner_check import subject_of

    assert subject_of("Theo opened a bakery.", "Maya") == "Theo"  # not the speaker
    assert subject_of("Maya's brother Theo opened a bakery.", "Theo") == "Theo"
    assert subject_of("The bank approved the loan.", "Theo") == "Theo"
    assert subject_of("She likes dogs.", "Mel") == "Mel"
    assert subject_of("LGBTQ groups helped Caroline.", "Caroline") == "Caroline"
    people = ["Joanna", "Nate", "Grace Park"]
    assert subject_of("Joanna Thanks Nate for the card.", "Nate", people) == "Joanna"
    assert subject_of("Grace Park ran a marathon.", "Nate", people) == "Grace Park"
    assert subject_of("Omar Khan joined a club.", "Nate", people) == "Omar Khan"


def test_the_profile_holds_each_persons_own_facts_only() -> None:
    reply = "\n".join(
        [
            "T|Bakery",
            "S|Maya talked about Theo's bakery.",
            "F|t1|Maya|Theo had always dreamed of owning a bakery.",
            "L|t2|Sam|Sam loves fresh bread.",
        ]
    )
    store = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    # the model filed Theo's dream under Maya; the small model's owner rules refile it
    _ingest(SchemaChatModel().script("ConstructionLines", reply), store, small_model=True)
    profile = store.get_profile(NS)
    assert profile is not None
    assert profile.about("Theo") == ["Theo had always dreamed of owning a bakery."]
    # Maya's own fact is the relation her turn names ("My brother Theo ...")
    assert profile.about("Maya") == ["Maya's brother is Theo."]
    assert profile.about("Sam") == ["Sam loves fresh bread."]


def test_the_facade_keeps_a_construction_journal_on_disk(tmp_path: Path) -> None:
    from lamina import Memory, MemoryConfig

    config = MemoryConfig(data_dir=tmp_path, context={"trigger_policy": "session"})
    turns = ["My brother Theo opened a bakery last week!", "Sam loves fresh bread and pastries"]
    first = SchemaChatModel().script("ConstructionLines", REPLY)
    with Memory(config=config, chat_model=first) as memory:
        memory.add(turns, namespace="user:a", at=T0, session_id="s1", session_closed=True)
    assert first.count("ConstructionLines") == 1
    assert (tmp_path / "construction_journal.sqlite").exists()
    second = SchemaChatModel()
    with Memory(config=config, chat_model=second) as memory:  # a restarted process
        memory.add(turns, namespace="user:b", at=T0, session_id="s1", session_closed=True)
        facts = memory.store.get("fact", "user:b")
    assert second.calls == []  # the same turns were built from the journal
    assert sorted(f.subject for f in facts) == ["Theo", "user"]  # "The user's brother is Theo."


def test_a_merge_keeps_only_the_sentences_it_did_not_have() -> None:
    from lamina.agents.ingest.nodes.episodes import extend_narrative

    known = "Maya told Sam about the bakery. Theo bakes bread."
    assert extend_narrative(known, "Maya told Sam about the bakery. Theo hired Ana.") == (
        "Maya told Sam about the bakery. Theo bakes bread. Theo hired Ana."
    )
    assert extend_narrative(known, "theo bakes bread.") == known


def test_a_summary_that_repeats_itself_is_stored_once() -> None:
    reply = "T|Family\nS|Mel likes family time. Cara thanked her. Mel likes family time.\n"
    store = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    _ingest(SchemaChatModel().script("ConstructionLines", reply), store)
    (episode,) = store.get("episode", NS)
    assert episode.text == "Mel likes family time. Cara thanked her."


def test_a_note_copied_from_the_prompts_example_is_dropped_and_counted() -> None:
    reply = (
        "T|Chess\nS|Omar joined.\n"
        "F|t1|Omar|Omar, Priya's cousin, joined a chess club in the week of 24–30 April 2023.\n"
        "F|t1|Theo|Theo opened a bakery."
    )
    store = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    out = _ingest(SchemaChatModel().script("ConstructionLines", reply), store)
    assert [f.text for f in model_facts(store)] == ["Theo opened a bakery."]
    assert any("copied from the prompt's example" in f.error for f in out["failures"])


def test_a_pets_fact_is_filed_under_its_owner_with_its_text_kept() -> None:
    """The model put the pet first; the grammar files it under Maya, and the text stands
    (restating would give "Maya is her new pet")."""
    model = SchemaChatModel().script(
        "ConstructionLines",
        "T|Rocket\nS|Maya adopted a greyhound.\nF|t1|Rocket|Rocket is her new pet.",
    )
    store = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    graph = build_ingest_graph(chat_model=model, store=store).compile()
    turns = [
        {
            "speaker": "Maya",
            "text": "We adopted a greyhound and named him Rocket. He is our new pet!",
            "occurred_at": T0,
            "session_id": "s1",
        }
    ]
    # the owner rules file a pet's news under its keeper: the small model's profile
    context = MemoryContext(namespace=NS, trigger_policy="session", **SMALL_MODEL_PROFILE)
    graph.invoke({"turns": turns, "session_closed": True}, context=context)
    (fact,) = store.get("fact", NS)
    assert (fact.subject, fact.text) == ("Maya", "Rocket is her new pet.")
    assert fact.metadata["owner_check"] == "corrected"


def test_a_pets_news_in_a_later_session_is_its_keepers() -> None:
    """'We had to rehome Clover' names no rabbit; the first session's 'my rabbit Clover'
    (a relation fact) says whose Clover is, so the model's owner, the rabbit, is corrected."""
    model = SchemaChatModel().script(
        "ConstructionLines",
        "T|Clover\nS|Noah keeps a rabbit.\nF|t1|Noah|Noah's rabbit lives in a hutch.",
        "T|Rehoming\nS|Clover was rehomed.\nF|t1|Clover|Clover will need a new home.",
    )
    store = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    graph = build_ingest_graph(chat_model=model, store=store).compile()
    context = MemoryContext(namespace=NS, trigger_policy="session", **SMALL_MODEL_PROFILE)
    said = ["My rabbit Clover lives in a hutch in the garden.", "We had to rehome Clover."]
    for n, text in enumerate(said):
        turn = {"speaker": "Noah", "text": text, "occurred_at": T0 + timedelta(days=30 * n),
                "session_id": f"s{n}"}  # fmt: skip
        graph.invoke({"turns": [turn], "session_closed": True}, context=context)
    news = next(f for f in model_facts(store) if "new home" in f.text)
    assert (news.subject, news.text) == ("Noah", "Clover will need a new home.")
    assert news.metadata["owner_check"] == "corrected"


def test_a_relation_named_in_passing_is_a_fact_about_the_speaker() -> None:
    """'My brother Theo opened a bakery' also says who Theo is to Maya; no model needed."""
    store = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    out = _ingest(SchemaChatModel().script("ConstructionLines", REPLY), store)
    (relation,) = [f for f in store.get("fact", NS) if f not in model_facts(store)]
    assert (relation.subject, relation.text) == ("Maya", "Maya's brother is Theo.")
    assert relation.source_ids == [t.id for t in store.get("raw", NS) if "brother" in t.text]
    assert out["checks"].count("relations_named") == 1


def test_the_examples_relation_and_notes_copied_onto_real_people_are_repaired() -> None:
    """The example teaches "Omar, Priya's cousin, ..." and "Jonas loves chess"; a small
    model wrote "Melanie, Caroline's cousin, ..." about two friends and "Caroline loves
    chess" under a turn about adoption. The support check alone passed both."""
    reply = (
        "T|Bakery\nS|Sam, Maya's cousin, loves bread. Theo, Maya's brother, opened a bakery.\n"
        "F|t2|Sam|Sam, Maya's cousin, loves fresh bread.\n"
        "L|t2|Sam|Sam loves chess.\n"
        "F|t1|Theo|Theo, Maya's brother, opened a bakery last week."
    )
    store = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    out = _ingest(SchemaChatModel().script("ConstructionLines", reply), store)
    assert sorted(f.text for f in model_facts(store)) == [
        "Sam loves fresh bread.",  # nobody said cousin: the relation is cut, the rest kept
        "Theo, Maya's brother, opened a bakery last week (19–25 February 2024).",  # said
    ]
    (episode,) = store.get("episode", NS)
    assert episode.text == "Sam loves bread. Theo, Maya's brother, opened a bakery."
    assert out["checks"].count("relation_unsaid") == 1
    assert out["checks"].count("example_copied") == 1


def test_a_reply_cut_at_its_token_limit_loses_its_unfinished_last_line() -> None:
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage

    from lamina.agents.ingest.extraction.lines import complete

    text = "\n".join(
        [
            "T|Repairs",
            "S|John saw repairs.",
            "F|t1|John|John saw the school repaired.",
            "F|t2|John|John saw how",
        ]
    )
    model = GenericFakeChatModel(
        messages=iter(
            [
                AIMessage(text, response_metadata={"finish_reason": "length"}),
                AIMessage(text, response_metadata={"finish_reason": "stop"}),
            ]
        )
    )
    cut = complete(model, [HumanMessage("x")], 40)
    assert cut.cut_off
    parsed = parse_lines(cut.text, cut_off=cut.cut_off)
    assert parsed.cut == "F|t2|John|John saw how"
    assert [f.statement for f in parsed.draft.facts] == ["John saw the school repaired."]
    whole = complete(model, [HumanMessage("x")], 40)
    assert not whole.cut_off
    assert len(parse_lines(whole.text, cut_off=whole.cut_off).draft.facts) == 2
    assert parse_lines("\n\n", cut_off=True).cut is None


def test_the_agents_own_turns_are_context_never_the_only_source_of_a_fact() -> None:
    from langchain_core.messages import AIMessage

    from lamina import Memory, MemoryConfig

    reply = (
        "T|New job\nS|Jonas starts at Helio Solar.\n"
        "F|t2|Helio Solar|Helio Solar is a solar company based in Leeds.\n"
        "F|t2|Jonas|Jonas starts as a data engineer at Helio Solar.\n"
    )
    model = SchemaChatModel().script("ConstructionLines", reply)
    config = MemoryConfig(store="memory", context={"trigger_policy": "session"})
    messages = [
        {"role": "user", "name": "Jonas", "content": "I start as a data engineer at Helio Solar"},
        AIMessage("Congrats! Helio Solar is a solar company based in Leeds, I think."),
    ]
    with Memory(config=config, chat_model=model) as memory:
        memory.add(messages, namespace=NS, at=T0, session_id="s1", session_closed=True)
        raw = memory.store.get("raw", NS)
        facts = memory.store.get("fact", NS)
    roles = {t.speaker: t.metadata.get("role") for t in raw}
    assert roles == {"Jonas": None, "assistant": "assistant"}  # both stored, the reply marked
    assert [f.text for f in facts if f.metadata.get("derived_by") != "relations"] == [
        "Jonas starts as a data engineer at Helio Solar."
    ]
    jonas = next(f for f in facts if f.subject == "Jonas")
    assert [t.speaker for t in raw if t.id in jonas.source_ids] == ["Jonas"]  # re-sourced
