"""Tenant isolation at the edges: agent tools, agent middleware and the command line.

Hypothesis draws two or three tenants (often prefixes of one another), record ids that
every tenant shares, texts from a small shared vocabulary and queries. Every tenant
holds the same ids and words; each also has a marker token of its own in every text,
title, profile and audit entry, and every tenant but A has records under ids only it
has. Acting as tenant A through

1. the ``search_memory`` tool (sync and async),
2. the ``forget`` tool (by subject and by ids, B-only and shared),
3. ``MemoryMiddleware`` recall (search and answer mode; the prompt the model receives),
4. the CLI ``search``, ``inspect --json`` and ``ask`` (with a scripted model), and
5. tool calls whose arguments name another tenant's namespace,

no tool result, prompt or printed output may contain another tenant's marker or one of
its own ids, and the other tenants' records, profile and audit log must be unchanged.
A positive control per path shows the same check finds B's marker when acting as B.

The namespace strategy is the one of ``test_isolation.py`` (``NAMESPACE_PATTERN``);
test modules are not importable under ``--import-mode=importlib``, so it is rebuilt here.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from lamina.cli import main
from lamina.config import MemoryConfig
from lamina.integrations import MemoryMiddleware, memory_tools
from lamina.integrations.middleware import RecallMode
from lamina.memory import Memory
from lamina.records import EpisodeRecord, FactRecord, RawTurn, SceneRecord
from lamina.records.audit import AuditEntry
from lamina.records.model import NAMESPACE_PATTERN, Granularity, ProfileRecord
from lamina.stores import ChromaMemoryStore
from lamina.testing import (
    SchemaChatModel,
    StorePool,
    ToolCallingChatModel,
    tool_call,
)

T0 = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)
WORDS = ["rex", "dog", "paris", "guitar", "nurse", "garden", "train", "coffee", "berlin", "book"]
PROMPT = "You are a helpful assistant."
_COUNTER = itertools.count()

namespaces = st.from_regex(NAMESPACE_PATTERN, fullmatch=True).map(lambda s: s[:120])
record_ids = st.text(
    # no '~' (it marks B-only ids), no '|' (invalid), no brackets or blanks (the forget
    # tool strips "[raw id]" decorations)
    alphabet=st.characters(codec="utf-8", exclude_categories=("Z", "C"), exclude_characters="|~[]"),
    min_size=1,
    max_size=12,
)
sentences = st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join)
marker_tokens = st.text(alphabet="bcdfghjklmnpqrstvwxz", min_size=3, max_size=8)


@st.composite
def tenants(draw: st.DrawFn) -> list[str]:
    """Two or three distinct namespaces, often prefixes of one another; A comes first."""
    raw = [draw(namespaces)]
    for _ in range(draw(st.integers(min_value=1, max_value=2))):
        parent = draw(st.sampled_from(raw))
        child = draw(namespaces)
        raw.append(draw(st.sampled_from([child, f"{parent}:{child}"])))
    order = draw(st.permutations(raw))  # A is sometimes the longer, sometimes the prefix
    n = next(_COUNTER)  # fresh namespaces per example on the shared store
    out: list[str] = []
    for i, name in enumerate(order):
        ns = f"t{n}-{name}"[:200]
        out.append(ns if ns not in out else f"{ns}x{i}")
    return out


@st.composite
def markers(draw: st.DrawFn, count: int) -> list[str]:
    """One marker word per tenant; none is a substring of another or of the vocabulary.

    No counter here: markers are embedded, so a replayed example must get the same ones.
    """
    return [f"mk{i}{draw(marker_tokens)}zz" for i in range(count)]


@st.composite
def worlds(draw: st.DrawFn) -> dict[str, Any]:
    names = draw(tenants())
    return {
        "tenants": names,
        "markers": draw(markers(len(names))),
        "rids": draw(st.lists(record_ids, min_size=1, max_size=4, unique=True)),
        "texts": draw(st.lists(sentences, min_size=5, max_size=5)),
        "queries": draw(st.lists(sentences, min_size=1, max_size=3)),
    }


@pytest.fixture(scope="module")
def pool() -> StorePool:
    return StorePool()


@dataclass
class UserContext:
    user_id: str | None = None


@dataclass
class World:
    """The seeded tenants of one example; tenant 0 is A, the caller."""

    store: ChromaMemoryStore
    tenants: list[str]
    markers: list[str]
    rids: list[str]
    texts: list[str]
    queries: list[str]

    @property
    def ns_a(self) -> str:
        return self.tenants[0]

    @property
    def ns_b(self) -> str:
        return self.tenants[1]

    @property
    def marker_a(self) -> str:
        return self.markers[0]

    @property
    def marker_b(self) -> str:
        return self.markers[1]

    def shared_ids(self) -> set[str]:
        return {f"{p}-{rid}" for rid in self.rids for p in "rfe"} | {"scene-1"}

    def only_ids(self, tenant: int) -> list[str]:
        return [f"{p}-{rid}~{tenant}only" for rid in self.rids for p in "rfe"] + [
            f"scene~{tenant}only"
        ]

    def foreign_only_ids(self) -> list[str]:
        return [i for t in range(1, len(self.tenants)) for i in self.only_ids(t)]

    def leaks(self, text: str, *, allowed: tuple[str, ...] = ()) -> list[str]:
        """Other tenants' markers and own ids found in ``text`` (exact substrings)."""
        needles = [*self.markers[1:], *self.foreign_only_ids()]
        return [n for n in needles if n in text and n not in allowed]

    def foreign_state(self) -> list[Any]:
        return [snapshot(self.store, ns) for ns in self.tenants[1:]]


def _tenant_records(world: World, tenant: int) -> list[Any]:
    ns, mark = world.tenants[tenant], world.markers[tenant]
    ids = list(world.rids) + ([f"{rid}~{tenant}only" for rid in world.rids] if tenant else [])
    others = [e for t in range(len(world.tenants)) if t != tenant for e in world.only_ids(t)]
    out: list[Any] = []
    for n, rid in enumerate(ids):
        body = f"{world.texts[n % len(world.texts)]} {mark}"
        when = T0 + timedelta(hours=n)
        meta: dict[str, str | int | float | bool] = {"owner": ns}
        out += [
            RawTurn(
                id=f"r-{rid}",
                namespace=ns,
                text=body,
                speaker="Alice",
                session_id="s1",
                turn_index=n,
                occurred_at=when,
                metadata=meta,
            ),
            FactRecord(
                id=f"f-{rid}",
                namespace=ns,
                text=body,
                source_ids=[f"r-{rid}"],
                occurred_at=when,
                metadata=meta,
            ),
            EpisodeRecord(
                id=f"e-{rid}",
                namespace=ns,
                title=f"{WORDS[n % len(WORDS)]} {mark}",
                text=body,
                source_ids=[f"r-{rid}"],
                occurred_at=when,
                metadata=meta,
            ),
        ]
    scene_ids = ["scene-1"] + ([f"scene~{tenant}only"] if tenant else [])
    for sid in scene_ids:
        out.append(
            SceneRecord(
                id=sid,
                namespace=ns,
                title=f"scene {mark}",
                text=f"scene {mark} " + " ".join(world.texts),
                # members also name episodes that exist only in other tenants
                members=[f"e-{rid}" for rid in ids] + [o for o in others if o.startswith("e-")],
                occurred_at=T0,
                metadata={"owner": ns},
            )
        )
    return out


def seed(store: ChromaMemoryStore, drawn: dict[str, Any]) -> World:
    world = World(store=store, **drawn)
    for tenant, ns in enumerate(world.tenants):
        mark = world.markers[tenant]
        store.add(ns, _tenant_records(world, tenant))
        store.put_profile(ProfileRecord(namespace=ns, explicit_facts=[f"likes {mark}"]))
        store.append_audit(
            AuditEntry(
                namespace=ns,
                actor="test",
                action="noop",
                granularity="fact",
                target_id=f"f-{world.rids[0]}",
                reason=f"seeded {mark}",
            )
        )
    return world


def snapshot(store: ChromaMemoryStore, ns: str) -> dict[str, Any]:
    """Everything a namespace holds, comparable with ``==``."""
    profile = store.get_profile(ns)
    return {
        "records": {
            g.value: sorted(r.model_dump_json() for r in store.get(g, ns)) for g in Granularity
        },
        "profile": profile.model_dump_json() if profile else None,
        "audit": sorted(e.model_dump_json() for e in store.list_audit(ns)),
    }


def strings(value: Any) -> Iterator[str]:
    """Every string inside parsed JSON (escapes undone, so substring checks are exact).

    Skips ``members``: A's own scene was seeded naming other tenants' episode ids (so that
    recall expansion is tested); listing them back is showing A's data, not B's.
    """
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield str(k)
            if k != "members":
                yield from strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)


def prompt_text(messages: list[BaseMessage]) -> str:
    return "\n".join(m.text for m in messages)


def run_agent(
    memory: Memory, user: str, *calls: AIMessage, use_async: bool = False
) -> tuple[list[ToolMessage], ToolCallingChatModel]:
    """One agent turn whose scripted model makes ``calls`` and then says done."""
    model = ToolCallingChatModel().enqueue(*calls, "done")
    agent: Any = create_agent(model, tools=memory_tools(memory, k=50), context_schema=UserContext)
    request = {"messages": [{"role": "user", "content": "hi"}]}
    if use_async:
        out = asyncio.run(agent.ainvoke(request, context=UserContext(user)))
    else:
        out = agent.invoke(request, context=UserContext(user))
    return [m for m in out["messages"] if isinstance(m, ToolMessage)], model


def _labels(messages: list[BaseMessage]) -> list[str]:
    return sorted(set(re.findall(r"\[(m\d+)\]", prompt_text(messages))))


def _shown(messages: list[BaseMessage]) -> str:
    """An answer its citations hold: the shown memory lines themselves (answers are grounded)."""
    memories = prompt_text(messages).split("Memories:\n<data>")[1]
    return memories.split("</data>")[0].strip()[:280]


def recall_model(world: World, answers: int = 1) -> SchemaChatModel:
    """A memory model that retries with other tenants' markers, then cites all it sees."""
    model = SchemaChatModel()
    insufficient = json.dumps({"sufficient": False, "missing": "more"})
    rewrite = json.dumps({"queries": [*world.markers[1:], *world.queries][:3]})

    def cite(messages: list[BaseMessage]) -> str:
        return json.dumps(
            {"sufficient": True, "answer": _shown(messages), "cited": [*_labels(messages), "m999"]}
        )

    for _ in range(answers):
        model.script("DraftFirst", insufficient, cite)
        model.script("QueryRewrite", rewrite)
    return model


def assert_model_saw_no_leak(world: World, model: SchemaChatModel) -> None:
    for title, messages in model.calls:
        assert world.leaks(prompt_text(messages)) == [], title


# -- 1. search_memory ----------------------------------------------------------------------


@given(worlds(), st.booleans())
def test_search_memory_tool_returns_only_the_callers_memories(
    pool: StorePool, drawn: dict[str, Any], use_async: bool
) -> None:
    world = seed(pool.next(), drawn)
    memory = Memory(store=world.store, chat_model=SchemaChatModel())
    before = world.foreign_state()
    queries = [*world.queries, *world.markers[1:], *world.foreign_only_ids()[:3], world.marker_a]
    found, model = run_agent(
        memory,
        world.ns_a,
        *[tool_call("search_memory", {"query": q}) for q in queries],
        use_async=use_async,
    )
    assert len(found) == len(queries)
    for message in found:
        assert message.status == "success", message.content
        assert world.leaks(message.text) == [], message.text
        assert world.marker_a in message.text  # A's own memories are found
        shown = set(re.findall(r"^\[\w+ (\S+)\]", message.text, flags=re.MULTILINE))
        assert shown and shown <= world.shared_ids()
    for call in model.calls:
        assert world.leaks(prompt_text(call)) == []
    # positive control: the same check sees B's marker when B is the caller
    (own,), _ = run_agent(memory, world.ns_b, tool_call("search_memory", {"query": world.marker_b}))
    assert world.marker_b in own.text and world.marker_a not in own.text
    assert world.foreign_state() == before


# -- 2. forget -----------------------------------------------------------------------------


@given(worlds(), st.booleans())
def test_forget_tool_never_deletes_another_tenants_memories(
    pool: StorePool, drawn: dict[str, Any], use_async: bool
) -> None:
    world = seed(pool.next(), drawn)
    memory = Memory(store=world.store, chat_model=SchemaChatModel())
    before = world.foreign_state()
    foreign_ids = world.foreign_only_ids()
    shared = f"r-{world.rids[0]}"
    word = world.texts[0].split()[0]  # in every tenant's texts
    calls = [
        *[tool_call("forget", {"memory_id": i}) for i in foreign_ids[:4]],
        tool_call("forget", {"memory_id": f"[episode {foreign_ids[2]}]"}),
        *[tool_call("forget", {"subject": m}) for m in world.markers[1:]],
        tool_call("forget", {"memory_id": shared}),  # A has it too: A's copy goes
        tool_call("forget", {"subject": word}),
    ]
    results, model = run_agent(memory, world.ns_a, *calls, use_async=use_async)
    assert len(results) == len(calls)
    for asked, message in zip(foreign_ids[:4], results, strict=False):
        assert message.text == f"No memory was deleted. Not found in this user's memory: {asked}."
    assert results[4].text.endswith(f"Not found in this user's memory: {foreign_ids[2]}.")
    by_marker = results[5 : 5 + len(world.markers) - 1]
    assert [m.text for m in by_marker] == ["No memory was deleted."] * len(by_marker)
    own, by_word = results[-2], results[-1]
    assert own.text.startswith("Deleted ") and shared in own.text, own.text
    for message in (own, by_word):
        assert message.status == "success" and world.leaks(message.text) == [], message.text
    for call in model.calls:  # B-only ids appear only where the model itself named them
        tool_texts = [m.text for m in call if isinstance(m, ToolMessage)]
        for text in tool_texts:
            assert world.leaks(text, allowed=tuple(foreign_ids[:4])) == [], text
    assert world.foreign_state() == before
    left = [r for g in Granularity for r in world.store.get(g, world.ns_a)]
    assert all(word not in r.text for r in left), "forget by subject removed A's records"
    assert shared not in {r.id for r in world.store.get("raw", world.ns_a)}


# -- 3. MemoryMiddleware -------------------------------------------------------------------


@given(worlds(), st.sampled_from(["search", "answer"]))
def test_middleware_injects_only_the_callers_memories(
    pool: StorePool, drawn: dict[str, Any], mode: RecallMode
) -> None:
    world = seed(pool.next(), drawn)
    llm = recall_model(world)
    memory = Memory(store=world.store, chat_model=llm)
    before = world.foreign_state()
    model = ToolCallingChatModel().enqueue("ok")
    agent = create_agent(
        model,
        system_prompt=PROMPT,
        middleware=[MemoryMiddleware(memory, k=50, mode=mode)],
        context_schema=UserContext,
    )
    question = " ".join(world.queries)
    out = agent.invoke(
        {"messages": [{"role": "user", "content": question}]}, context=UserContext(world.ns_a)
    )
    (call,) = model.calls
    seen = prompt_text(call)
    assert "<memories>" in seen and world.marker_a in seen, out.get("memory_errors")
    assert world.leaks(seen) == [], seen
    shown = set(re.findall(r"^\[\w+ (\S+)\]", seen, flags=re.MULTILINE))
    assert shown and shown <= world.shared_ids()
    assert_model_saw_no_leak(world, llm)
    assert world.foreign_state() == before
    # the exchange was remembered for A, and only for A
    assert question in [r.text for r in world.store.get("raw", world.ns_a)]


# -- 4. the command line -------------------------------------------------------------------


@pytest.fixture(scope="module")
def cli_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cli-data")


@given(drawn=worlds())
def test_cli_search_inspect_and_ask_stay_in_the_namespace(
    pool: StorePool, drawn: dict[str, Any], cli_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    world = seed(pool.next(), drawn)
    llm = recall_model(world, answers=2)
    before = world.foreign_state()

    def factory(config: MemoryConfig) -> Memory:
        return Memory(store=world.store, chat_model=llm)

    def cli(*args: str, ns: str = world.ns_a) -> str:
        status = main(
            [*args, "--namespace", ns, "--data-dir", str(cli_dir)], memory_factory=factory
        )
        out, err = capsys.readouterr()
        assert status == 0, err
        assert world.leaks(err) == [] or ns != world.ns_a, err
        return out

    def as_json(out: str) -> Any:
        data = json.loads(out)
        if isinstance(data, dict):  # the Judge's own queries: this model types B's markers
            data = {k: v for k, v in data.items() if k not in ("verdicts", "queries")}
        for text in strings(data):
            assert world.leaks(text) == [], text
        return data

    a_ids = world.shared_ids()
    for query in [*world.queries, *world.markers[1:]]:
        hits = as_json(cli("search", query, "-k", "50", "--json"))
        assert hits and {h["id"] for h in hits} <= a_ids
        assert all(world.marker_a in h["text"] for h in hits)
        printed = cli("search", query, "-k", "50")
        assert world.leaks(printed) == [] and world.marker_a in printed
    report = as_json(cli("inspect", "--json", "--audit", "--profile", "--limit", "100"))
    assert report["namespace"] == world.ns_a
    counts = {g: part["count"] for g, part in report["granularities"].items()}
    assert counts == {
        "raw": len(world.rids),
        "fact": len(world.rids),
        "episode": len(world.rids),
        "scene": 1,
    }
    for part in report["granularities"].values():
        for record in part["latest"]:
            assert record["namespace"] == world.ns_a and record["id"] in a_ids
    assert report["profile"]["explicit_facts"] == [f"likes {world.marker_a}"]
    assert [e["reason"] for e in report["audit"]] == [f"seeded {world.marker_a}"]
    printed = cli("inspect", "--audit", "--profile", "--limit", "100")
    assert world.leaks(printed) == [] and world.marker_a in printed
    answer = as_json(cli("ask", world.queries[0], "--json"))
    assert answer["citations"] and set(answer["citations"]) <= a_ids
    assert all(m["id"] in a_ids for m in answer["memories"])
    printed = cli("ask", world.queries[0])
    assert world.leaks(printed) == [] and "citations:" in printed
    assert_model_saw_no_leak(world, llm)
    # positive control: B's own search shows B's marker through the same command
    own = json.loads(cli("search", world.marker_b, "-k", "50", "--json", ns=world.ns_b))
    assert any(world.marker_b in h["text"] for h in own)
    assert world.foreign_state() == before


# -- 5. tool arguments naming another tenant -----------------------------------------------


@given(worlds(), st.booleans())
def test_tool_arguments_cannot_select_another_tenant(
    pool: StorePool, drawn: dict[str, Any], use_async: bool
) -> None:
    world = seed(pool.next(), drawn)
    memory = Memory(store=world.store, chat_model=SchemaChatModel())
    before = world.foreign_state()
    ns_b, b_id = world.ns_b, world.only_ids(1)[0]
    sneaky: dict[str, Any] = {
        "namespace": ns_b,
        "user_id": ns_b,
        "runtime": {"context": {"user_id": ns_b}},
        "context": {"user_id": ns_b},
    }
    note = f"note {world.marker_a} {world.queries[0]}"
    calls = [
        tool_call("search_memory", {"query": world.marker_b, **sneaky}),
        tool_call("search_memory", {"query": world.queries[0], **sneaky}),
        tool_call("forget", {"memory_id": b_id, **sneaky}),
        tool_call("forget", {"subject": world.marker_b, **sneaky}),
        # last: storing may start consolidation, whose fake replies rewrite A's profile
        tool_call("remember", {"text": note, **sneaky}),
    ]
    results, model = run_agent(memory, world.ns_a, *calls, use_async=use_async)
    assert len(results) == len(calls)
    search_b, search_q, forgot_id, forgot_subject, remembered = results
    for message in (search_b, search_q):
        assert message.status == "success" and world.leaks(message.text) == [], message.text
        assert world.marker_a in message.text
    assert remembered.text.startswith("Remembered as [raw "), remembered.text
    assert forgot_id.text == f"No memory was deleted. Not found in this user's memory: {b_id}."
    assert forgot_subject.text == "No memory was deleted."
    for call in model.calls:
        for sent in call:
            if isinstance(sent, ToolMessage):
                assert world.leaks(sent.text, allowed=(b_id,)) == [], sent.text
    assert note in [r.text for r in world.store.get("raw", world.ns_a)]
    assert world.foreign_state() == before
