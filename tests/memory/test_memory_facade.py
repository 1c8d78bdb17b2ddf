"""The Memory facade: input normalisation, add/search/answer, the local model lifecycle."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from lamina import AnswerResult, Memory, MemoryConfig, MemoryHit
from lamina.core.state import TurnInput
from lamina.errors import (
    InvalidInputError,
    InvalidTypeError,
    NamespaceError,
    RecordNotFoundError,
)
from lamina.memory import AddResult
from lamina.memory.inputs import to_turns
from lamina.records import FactRecord, RawTurn
from lamina.stores import ChromaMemoryStore
from lamina.testing import FakeEmbeddings, FakeLocalServer, SchemaChatModel

NS = "user:alice"
T0 = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def store() -> ChromaMemoryStore:
    return ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())


@pytest.fixture
def model() -> SchemaChatModel:
    return SchemaChatModel()


@pytest.fixture
def memory(store: ChromaMemoryStore, model: SchemaChatModel) -> Memory:
    return Memory(store=store, chat_model=model)


@pytest.fixture
def servers(model: SchemaChatModel) -> list[FakeLocalServer]:
    return []


def local_memory(store: ChromaMemoryStore, servers: list[FakeLocalServer], model: SchemaChatModel):  # type: ignore[no-untyped-def]
    def factory(config: MemoryConfig) -> FakeLocalServer:
        server = FakeLocalServer(model)
        servers.append(server)
        return server

    return Memory(store=store, local_server_factory=factory)


# ------------------------------------------------------------ input normalisation
def test_plain_string_is_one_user_turn_in_the_default_daily_session() -> None:
    [turn] = to_turns("I love tea", namespace=NS, at=T0)
    assert (turn.speaker, turn.text, turn.occurred_at) == ("user", "I love tea", T0)
    assert turn.session_id == f"{NS}:2024-03-01"


def test_the_default_session_follows_the_utc_day() -> None:
    late = datetime(2024, 3, 1, 23, 30, tzinfo=UTC).astimezone(
        __import__("zoneinfo").ZoneInfo("Asia/Tokyo")
    )
    [turn] = to_turns("hi", namespace=NS, at=late)
    assert turn.session_id == f"{NS}:2024-03-01"


def test_langchain_messages_map_roles_and_names_to_speakers() -> None:
    turns = to_turns(
        [HumanMessage("hello"), AIMessage("hi there"), HumanMessage("yo", name="Bob")],
        namespace=NS,
        at=T0,
        session_id="s1",
    )
    assert [t.speaker for t in turns] == ["user", "assistant", "Bob"]
    assert [t.session_id for t in turns] == ["s1"] * 3
    # a batch without times keeps its order
    assert turns[0].occurred_at < turns[1].occurred_at < turns[2].occurred_at


def test_openai_dicts_turninput_dicts_and_turninputs_are_accepted() -> None:
    explicit = TurnInput(speaker="Carol", text="x marks", occurred_at=T0, session_id="s9")
    turns = to_turns(
        [
            {"role": "user", "content": "first"},
            {"role": "assistant", "content": [{"type": "text", "text": "second"}]},
            {"speaker": "Dan", "text": "third", "occurred_at": "2024-03-02T10:00:00+00:00"},
            explicit,
        ],
        namespace=NS,
        at=T0,
    )
    assert [(t.speaker, t.text) for t in turns] == [
        ("user", "first"),
        ("assistant", "second"),
        ("Dan", "third"),
        ("Carol", "x marks"),
    ]
    assert turns[2].session_id == f"{NS}:2024-03-02"
    assert turns[3].session_id == "s9"


def test_speaker_argument_names_plain_strings() -> None:
    [turn] = to_turns("hello", namespace=NS, at=T0, speaker="Alice")
    assert turn.speaker == "Alice"


@pytest.mark.parametrize(
    ("value", "error"),
    [
        ([], InvalidInputError),
        ("   ", InvalidInputError),
        ({"role": "user", "content": "x", "mood": "happy"}, InvalidInputError),
        (42, InvalidTypeError),
        ([b"bytes"], InvalidTypeError),
        ({"speaker": "a", "text": "b", "occurred_at": "yesterday"}, InvalidInputError),
    ],
)
def test_bad_inputs_are_rejected_with_clear_errors(value: object, error: type) -> None:
    with pytest.raises(error):
        to_turns(value, namespace=NS, at=T0)


def test_naive_at_is_rejected(memory: Memory) -> None:
    with pytest.raises(InvalidInputError, match="naive"):
        memory.add("hi", namespace=NS, at=datetime(2024, 1, 1))
    assert memory.store.count("raw", NS) == 0


# ------------------------------------------------------------------------ add
def test_add_stores_the_raw_turn_and_reports_duplicates(memory: Memory) -> None:
    first = memory.add("I adopted a dog called Rex", namespace=NS, at=T0, speaker="Alice")
    assert isinstance(first, AddResult) and len(first.new_raw_ids) == 1
    [stored] = memory.store.get("raw", NS, first.new_raw_ids)
    assert isinstance(stored, RawTurn)
    assert (stored.speaker, stored.text, stored.session_id) == (
        "Alice",
        "I adopted a dog called Rex",
        f"{NS}:2024-03-01",
    )
    again = memory.add("I adopted a dog called Rex", namespace=NS, at=T0, speaker="Alice")
    assert again.new_raw_ids == [] and again.duplicate_raw_ids == first.new_raw_ids
    assert memory.store.count("raw", NS) == 1


def test_add_without_at_uses_now_in_utc(memory: Memory) -> None:
    before = datetime.now(UTC)
    result = memory.add("hello", namespace=NS)
    [stored] = memory.store.get("raw", NS, result.new_raw_ids)
    assert before <= stored.occurred_at <= datetime.now(UTC)


def test_add_with_every_llm_call_failing_keeps_the_turns(store: ChromaMemoryStore) -> None:
    model = SchemaChatModel()
    model.script("ConstructionLines", *[ConnectionError("HTTP 500")] * 9)
    config = MemoryConfig(context={"trigger_policy": "session"})
    memory = Memory(config=config, store=store, chat_model=model)
    result = memory.add(
        [{"role": "user", "content": "we baked bread"}, {"role": "assistant", "content": "nice"}],
        namespace=NS,
        at=T0,
        session_closed=True,
    )
    assert len(result.new_raw_ids) == 2 and store.count("raw", NS) == 2
    assert result.failures and result.failures[0].node == "constructor"
    assert result.llm_calls and not any(c.ok for c in result.llm_calls)


def test_add_consolidates_per_the_configured_trigger_policy(store: ChromaMemoryStore) -> None:
    model = SchemaChatModel()
    model.script(
        "ConstructionLines", "T|Baking\nS|Alice baked bread.\nF|t1|Alice|Alice bakes bread"
    )
    config = MemoryConfig(context={"trigger_policy": "session"})
    memory = Memory(config=config, store=store, chat_model=model)
    said = {"namespace": NS, "at": T0, "session_id": "s1", "speaker": "Alice"}
    open_session = memory.add("we baked bread", **said)
    assert open_session.llm_calls == [] and store.count("episode", NS) == 0
    closed = memory.add("it was a good loaf", session_closed=True, **said)
    assert store.count("episode", NS) == 1
    assert {w.granularity for w in closed.written} >= {"episode", "fact"}
    assert [f.text for f in store.get("fact", NS)] == ["Alice bakes bread"]


@pytest.mark.parametrize(
    ("argument", "message"),
    [
        ({"store": "chroma"}, "store must be a lamina MemoryStore .*got str"),
        ({"store": {"raw": []}}, "store must be a lamina MemoryStore .*got dict"),
        ({"checkpointer": "sqlite:///x.db"}, "checkpointer must be a LangGraph .*got str"),
    ],
)
def test_a_store_or_checkpointer_of_another_type_is_refused_at_construction(
    argument: dict[str, Any], message: str
) -> None:
    """They were accepted, and the first call that used them raised AttributeError."""
    argument.setdefault("store", ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings()))
    with pytest.raises(InvalidTypeError, match=message):
        Memory(chat_model=SchemaChatModel(), **argument)


def test_add_rejects_a_bad_namespace(memory: Memory) -> None:
    with pytest.raises(NamespaceError):
        memory.add("hi", namespace="bad namespace!", at=T0)


def test_add_with_a_checkpointer_runs_each_call_on_its_own_thread(store, model) -> None:  # type: ignore[no-untyped-def]
    saver = InMemorySaver()
    memory = Memory(store=store, chat_model=model, checkpointer=saver)
    one = memory.add("first turn here", namespace=NS, at=T0)
    two = memory.add("second turn here", namespace=NS, at=T0 + timedelta(minutes=1))
    assert len(one.new_raw_ids) == 1 and len(two.new_raw_ids) == 1
    assert one.new_raw_ids != two.new_raw_ids
    threads = {c.config["configurable"]["thread_id"] for c in saver.list(None)}
    assert len(threads) == 2 and all(t.startswith(f"{NS}/add/") for t in threads)


# --------------------------------------------------------------------- search
def seed(store: ChromaMemoryStore) -> None:
    store.add(
        NS,
        [
            RawTurn(
                namespace=NS,
                text="My dog Rex loves the park",
                speaker="Alice",
                session_id="s1",
                turn_index=0,
                occurred_at=T0,
            ),
            FactRecord(
                id="f-old",
                namespace=NS,
                text="Alice lives in Paris",
                occurred_at=T0,
                valid_from=T0,
                valid_to=T0 + timedelta(days=10),
                superseded_by="f-new",
            ),
            FactRecord(
                id="f-new",
                namespace=NS,
                text="Alice lives in Berlin",
                occurred_at=T0 + timedelta(days=10),
                valid_from=T0 + timedelta(days=10),
            ),
        ],
    )


def test_search_merges_granularities_without_any_llm_call(memory, model) -> None:  # type: ignore[no-untyped-def]
    seed(memory.store)
    hits = memory.search("Where does Alice live?", namespace=NS)
    assert all(isinstance(h, MemoryHit) for h in hits)
    assert {h.granularity for h in hits} == {"raw", "fact"}
    assert "f-old" not in [h.id for h in hits]  # current facts only
    assert hits[0].id == "f-new"
    assert hits == sorted(hits, key=lambda h: -h.score)
    raw = next(h for h in hits if h.granularity == "raw")
    assert raw.speaker == "Alice" and raw.ranks
    assert model.calls == []


def test_search_as_of_returns_what_held_then(memory: Memory) -> None:
    seed(memory.store)
    then = memory.search("Alice lives", namespace=NS, granularities=["fact"], as_of=T0)
    assert [h.id for h in then] == ["f-old"]
    later = memory.search(
        "Alice lives", namespace=NS, granularities=["fact"], as_of=T0 + timedelta(days=20)
    )
    assert [h.id for h in later] == ["f-new"]


def test_search_respects_k_granularities_and_namespace(memory: Memory) -> None:
    seed(memory.store)
    assert len(memory.search("Alice", namespace=NS, k=1)) == 1
    assert {h.granularity for h in memory.search("Rex", namespace=NS, granularities=["raw"])} == {
        "raw"
    }
    assert memory.search("Alice lives in Berlin", namespace="user:bob") == []


@pytest.mark.parametrize(
    "kwargs",
    [{"k": 0}, {"granularities": ["nope"]}, {"as_of": datetime(2024, 1, 1)}],
)
def test_search_rejects_bad_arguments(memory: Memory, kwargs: dict[str, Any]) -> None:
    with pytest.raises(InvalidInputError):
        memory.search("x", namespace=NS, **kwargs)


def test_search_spells_out_a_speaker_named_by_a_nickname(
    memory: Memory, store: ChromaMemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    turns = [("Katherine", "I went hiking"), ("user", "use the manual"), ("Marco", "me too")]
    for n, (speaker, text) in enumerate(turns):
        memory.add(text, namespace=NS, speaker=speaker, at=T0 + timedelta(minutes=n), infer=False)
    asked: list[str] = []
    search = store.search
    monkeypatch.setattr(store, "search", lambda q, *a, **kw: asked.append(q) or search(q, *a, **kw))
    memory.search("Where did Kate go hiking?", namespace=NS, granularities=["raw"])
    memory.search("Where did Katherine go hiking?", namespace=NS, granularities=["raw"])
    memory.search("Use the manual", namespace=NS, granularities=["raw"])  # a role, no name
    assert asked == [
        "Where did Kate go hiking? (Katherine)",
        "Where did Katherine go hiking?",
        "Use the manual",
    ]


def test_a_lone_surrogate_in_a_query_or_question_is_refused(memory: Memory) -> None:
    with pytest.raises(InvalidInputError, match="query holds a lone UTF-16 surrogate"):
        memory.search("dog \ud800", namespace=NS)
    with pytest.raises(InvalidInputError, match="question holds a lone UTF-16 surrogate"):
        memory.answer("where is my dog \ud800", namespace=NS)  # before any model call


# --------------------------------------------------------------------- answer
def cite_berlin(messages: list[Any]) -> str:
    """A DraftFirst reply citing the memory line that says Berlin."""
    line = next(x for x in str(messages[1].content).splitlines() if "Berlin" in x)
    return json.dumps(
        {"sufficient": True, "answer": "Berlin", "cited": [line[1 : line.index("]")]]}
    )


def test_answer_runs_the_recall_graph_and_cites(memory, model) -> None:  # type: ignore[no-untyped-def]
    seed(memory.store)
    model.script("DraftFirst", cite_berlin)
    result = memory.answer("Where does she live?", namespace=NS)
    assert isinstance(result, AnswerResult)
    assert result.answer == "Berlin" and not result.refused
    assert result.citations == ["f-new"]
    assert "f-new" in [m.id for m in result.memories]
    assert "f-old" not in [m.id for m in result.memories]  # superseded: not current
    assert result.rounds == 1
    assert [c.node for c in result.llm_calls] == ["judge"]  # one call on the sufficient path


def test_answer_refuses_when_memory_is_empty(memory, model) -> None:  # type: ignore[no-untyped-def]
    result = memory.answer("What is my cat called?", namespace=NS)
    assert result.refused and result.citations == [] and result.memories == []


def test_answer_rejects_an_empty_question(memory: Memory) -> None:
    with pytest.raises(InvalidInputError):
        memory.answer("  ", namespace=NS)


# ------------------------------------------------------ history and inspection
def test_history_follows_the_fact_supersession_chain(memory: Memory) -> None:
    from lamina.records import AuditEntry

    seed(memory.store)
    for target in ("f-old", "f-new", "other"):
        memory.store.append_audit(
            AuditEntry(
                namespace=NS, actor="test", action="update", granularity="fact", target_id=target
            )
        )
    for fact in ("f-new", "f-old"):
        entries = memory.history(fact, namespace=NS)
        assert [e.target_id for e in entries if e.action == "update"] == ["f-old", "f-new"]
        assert {e.target_id for e in entries if e.action == "add"} == {"f-old", "f-new"}
    with pytest.raises(RecordNotFoundError, match="'f-new' in namespace 'user:bob'"):
        memory.history("f-new", namespace="user:bob")  # another tenant's id is unknown here


def test_inspect_and_profile(memory: Memory) -> None:
    seed(memory.store)
    everything = memory.inspect(namespace=NS)
    assert set(everything) == {"raw", "fact", "episode", "scene"}
    assert [r.id for r in everything["fact"]] == ["f-old", "f-new"]
    assert [r.id for r in memory.inspect(namespace=NS, granularity="fact", limit=1)["fact"]] == [
        "f-new"
    ]
    assert memory.profile(namespace=NS) is None
    with pytest.raises(InvalidInputError):
        memory.inspect(namespace=NS, limit=0)


# ------------------------------------------------------------------ lifecycle
def test_the_local_model_starts_lazily_is_reused_and_stops_on_close(store, model) -> None:  # type: ignore[no-untyped-def]
    servers: list[FakeLocalServer] = []
    memory = local_memory(store, servers, model)
    assert memory.chat_model_source == "local"
    assert servers == []  # constructing starts nothing
    seed(store)
    memory.search("Alice", namespace=NS)
    memory.inspect(namespace=NS)
    memory.history("f-new", namespace=NS)
    assert servers == []  # retrieval only: no LLM, no server
    memory.add("hello there", namespace=NS, at=T0)
    memory.add("hello again", namespace=NS, at=T0 + timedelta(minutes=1))
    assert len(servers) == 1 and servers[0].starts == 1
    assert servers[0].options == {"temperature": 0.0, "max_tokens": 1024}
    assert memory.local_server is servers[0]
    memory.close()
    assert servers[0].stops == 1
    memory.close()
    assert servers[0].stops == 1
    with pytest.raises(InvalidInputError, match="closed"):
        memory.add("more", namespace=NS, at=T0)


def test_context_manager_stops_the_server(store, model) -> None:  # type: ignore[no-untyped-def]
    servers: list[FakeLocalServer] = []
    with local_memory(store, servers, model) as memory:
        memory.add("hello there", namespace=NS, at=T0)
        assert servers[0].stops == 0
    assert servers[0].stops == 1


def test_close_without_a_started_server_starts_nothing(store, model) -> None:  # type: ignore[no-untyped-def]
    servers: list[FakeLocalServer] = []
    local_memory(store, servers, model).close()
    assert servers == []


def test_an_explicit_chat_model_never_starts_a_server(store, model) -> None:  # type: ignore[no-untyped-def]
    started: list[MemoryConfig] = []
    memory = Memory(store=store, chat_model=model, local_server_factory=started.append)  # type: ignore[arg-type]
    memory.add("hi there", namespace=NS, at=T0)
    assert started == [] and memory.chat_model_source == "explicit"


def test_an_endpoint_from_the_environment_wins_over_the_local_model(store) -> None:  # type: ignore[no-untyped-def]
    memory = Memory.from_env(
        {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}, store=store
    )
    assert memory.chat_model_source == "endpoint"
    chat = memory._models.get()
    assert chat.openai_api_base == "http://127.0.0.1:9/v1"  # type: ignore[attr-defined]
    assert chat.max_tokens == 1024  # type: ignore[attr-defined]
    explicit = Memory.from_env(
        {"OPENAI_API_KEY": "sk-test"}, store=store, chat_model=SchemaChatModel()
    )
    assert explicit.chat_model_source == "explicit"


def test_default_config_opens_a_persistent_store_under_data_dir(tmp_path: Path) -> None:
    config = MemoryConfig(data_dir=tmp_path / "data")
    memory = Memory(config=config, embeddings=FakeEmbeddings(), chat_model=SchemaChatModel())
    memory.add("persist me please", namespace=NS, at=T0)
    assert (tmp_path / "data" / "chroma").is_dir()
    reopened = Memory(config=config, embeddings=FakeEmbeddings(), chat_model=SchemaChatModel())
    assert reopened.store.count("raw", NS) == 1


def test_store_and_embeddings_together_are_rejected(store) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InvalidInputError, match="embeddings"):
        Memory(store=store, embeddings=FakeEmbeddings())
    with pytest.raises(InvalidTypeError):
        Memory(store=store, chat_model="gpt-4o")  # type: ignore[arg-type]


# ---------------------------------------------------------------------- async
def test_async_twins(memory, model) -> None:  # type: ignore[no-untyped-def]
    seed(memory.store)
    model.script("DraftFirst", cite_berlin)

    async def scenario() -> tuple[Any, ...]:
        added = await memory.aadd("Rex chased a ball", namespace=NS, at=T0, speaker="Alice")
        hits = await memory.asearch("Rex ball", namespace=NS, granularities=["raw"])
        answer = await memory.aanswer("Where does she live?", namespace=NS)
        history = await memory.ahistory("f-new", namespace=NS)
        profile = await memory.aprofile(namespace=NS)
        forgot = await memory.aforget(namespace=NS, memory_ids=added.new_raw_ids)
        return added, hits, answer, history, profile, forgot

    added, hits, answer, history, profile, forgot = asyncio.run(scenario())
    assert len(added.new_raw_ids) == 1
    assert hits[0].id == added.new_raw_ids[0]
    assert answer.answer == "Berlin" and answer.citations == ["f-new"]
    assert [(e.action, e.target_id) for e in history] == [("add", "f-old"), ("add", "f-new")]
    # the fake model writes no fact; the seeded "My dog Rex ..." names a relation
    assert profile is not None and profile.about("Alice") == ["Alice's dog is Rex."]
    assert forgot.deleted == {"raw": added.new_raw_ids}
    assert memory.store.get("raw", NS, added.new_raw_ids) == []


def test_a_configured_sqlite_checkpointer_is_opened_lazily_and_closed(store, tmp_path) -> None:  # type: ignore[no-untyped-def]
    import sqlite3

    db = tmp_path / "ck" / "checkpoints.sqlite"
    config = MemoryConfig(checkpointer=str(db))
    memory = Memory(config=config, store=store, chat_model=SchemaChatModel())
    assert memory.checkpointer is None and not db.exists()
    memory.add("checkpoint me", namespace=NS, at=T0)
    # a sync SqliteSaver has no async API: the async twin runs it in a thread
    added = asyncio.run(memory.aadd("and me", namespace=NS, at=T0 + timedelta(minutes=1)))
    assert len(added.new_raw_ids) == 1
    memory.close()
    with sqlite3.connect(db) as conn:
        threads = {row[0] for row in conn.execute("SELECT DISTINCT thread_id FROM checkpoints")}
    assert len(threads) == 2 and all(t.startswith(f"{NS}/add/") for t in threads)


def test_the_root_package_file_imports_on_its_own() -> None:
    """pytest imports the repository root's ``__init__.py`` standalone when the checkout's
    folder is not a Python identifier (``lamina-main``); that must not fail."""
    import importlib.util

    import lamina

    path = Path(lamina.__file__)
    spec = importlib.util.spec_from_file_location("checkout_root", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.LaminaError is lamina.LaminaError
    assert module.Memory is Memory
    assert module.__version__ == lamina.__version__


def test_a_closed_memory_refuses_every_call_and_changes_nothing(store, model, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """After ``close()`` each public call, sync or async, raises the closed Memory's
    InvalidInputError, and the store it was given (still open) is left as it was: reads,
    update, delete and forget used to answer and write through a closed Memory on Chroma."""
    memory = Memory(store=store, chat_model=model)
    memory.add("I have a dog named Biscuit", namespace=NS, speaker="Alice", at=T0, infer=False)
    turn = memory.get_all(namespace=NS)[0]
    before = {g: store.get(g, NS) for g in ("raw", "fact", "episode", "scene")}
    memory.close()
    file = tmp_path / "export.jsonl"
    file.write_text("")
    calls: dict[str, Any] = {
        "add": lambda: memory.add("more", namespace=NS, at=T0, infer=False),
        "add_facts": lambda: memory.add_facts(["has a cat"], namespace=NS, subject="Alice"),
        "answer": lambda: memory.answer("What is the dog called?", namespace=NS),
        "search": lambda: memory.search("Biscuit", namespace=NS),
        "get_all": lambda: memory.get_all(namespace=NS),
        "history": lambda: memory.history(turn.id, namespace=NS),
        "profile": lambda: memory.profile(namespace=NS),
        "inspect": lambda: memory.inspect(namespace=NS),
        "namespaces": lambda: memory.namespaces(),
        "update": lambda: memory.update(turn.id, "I have a cat", namespace=NS),
        "delete": lambda: memory.delete(turn.id, namespace=NS),
        "delete_all": lambda: memory.delete_all(namespace=NS),
        "forget": lambda: memory.forget(namespace=NS, subject="dog"),
        "export": lambda: memory.export(file, namespace=NS),
        "import_": lambda: memory.import_(file, namespace=NS),
        "flush": lambda: memory.flush(NS),
        "set_default_ttl": lambda: memory.set_default_ttl(NS, None),
        "default_ttl": lambda: memory.default_ttl(NS),
        "sweep_expired": lambda: memory.sweep_expired(),
        "aadd": lambda: asyncio.run(memory.aadd("more", namespace=NS, at=T0, infer=False)),
        "aanswer": lambda: asyncio.run(memory.aanswer("What dog?", namespace=NS)),
        "asearch": lambda: asyncio.run(memory.asearch("Biscuit", namespace=NS)),
        "aget_all": lambda: asyncio.run(memory.aget_all(namespace=NS)),
        "aprofile": lambda: asyncio.run(memory.aprofile(namespace=NS)),
        "aupdate": lambda: asyncio.run(memory.aupdate(turn.id, "a cat", namespace=NS)),
        "aforget": lambda: asyncio.run(memory.aforget(namespace=NS, subject="dog")),
        "aflush": lambda: asyncio.run(memory.aflush(NS)),
    }
    not_refused = []
    for name, call in calls.items():
        try:
            call()
            not_refused.append(name)
        except Exception as e:  # noqa: BLE001 - each call's outcome is listed below
            if not (isinstance(e, InvalidInputError) and "this Memory is closed" in str(e)):
                not_refused.append(f"{name}: {type(e).__name__}")
    assert not_refused == []
    assert {g: store.get(g, NS) for g in ("raw", "fact", "episode", "scene")} == before
    assert file.read_text() == ""
    assert store.search("Biscuit", "raw", NS)  # the store itself is not closed


def test_every_call_has_an_async_twin(store, model) -> None:  # type: ignore[no-untyped-def]
    """Each public call has an ``a``-prefixed coroutine twin, as the docs promise; the
    twins of ``namespaces``, ``inspect`` and ``sweep_expired`` answer as their calls do
    (the three had none)."""
    from lamina.memory.spans import TRACED_CALLS  # every public call

    missing = [
        n for n in TRACED_CALLS if not asyncio.iscoroutinefunction(getattr(Memory, f"a{n}", None))
    ]
    assert missing == []
    memory = Memory(store=store, chat_model=model)
    memory.add("I have a dog named Biscuit", namespace=NS, speaker="Alice", at=T0, infer=False)
    memory.add("a note", namespace=NS, at=T0, infer=False, ttl=timedelta(hours=1))
    assert asyncio.run(memory.anamespaces()) == memory.namespaces() == {NS: {"raw": 2}}
    assert asyncio.run(memory.ainspect(namespace=NS, limit=1)) == memory.inspect(
        namespace=NS, limit=1
    )
    later = datetime.now(UTC) + timedelta(hours=2)
    assert asyncio.run(memory.asweep_expired(NS, now=later)) == 1
    assert memory.namespaces() == {NS: {"raw": 1}}
