"""The ingest graph with scripted chat models: policies, consolidation, failures."""

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from lamina.agents.common.refinement import fact_id
from lamina.agents.ingest.extraction.drafting import FREQUENCY_PENALTY
from lamina.agents.ingest.nodes.episode_trigger import THETA_COUNT
from lamina.core.context import MemoryContext
from lamina.graphs import ResearchArms
from lamina.graphs.ingest import build_ingest_graph
from lamina.records import EpisodeRecord, FactRecord, SceneRecord
from lamina.stores import ChromaMemoryStore
from lamina.testing import FakeEmbeddings, SchemaChatModel

NS = "user:alice"
T0 = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)
HIKE = "I love hiking in the mountains with my hiking boots"


@pytest.fixture
def store() -> ChromaMemoryStore:
    return ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())


@pytest.fixture
def model() -> SchemaChatModel:
    return SchemaChatModel()


def run(store, model, turns, *, closed=False, arms=None, **ctx: Any) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """Ingest ``turns`` (with ``arms``, a research arm's design) under context ``ctx``."""
    graph = build_ingest_graph(chat_model=model, store=store, arms=arms or ResearchArms()).compile()
    context = MemoryContext(namespace=ctx.pop("namespace", NS), **ctx)
    return graph.invoke({"turns": turns, "session_closed": closed}, context=context)  # type: ignore[no-any-return]


def turn(text: str, minute: int, session: str = "s1", speaker: str = "Alice") -> dict[str, Any]:
    return {
        "speaker": speaker,
        "text": text,
        "occurred_at": T0 + timedelta(minutes=minute),
        "session_id": session,
    }


LINES = "ConstructionLines"


def episode_reply(
    title: str = "Hiking", narrative: str = "Alice talked about hiking.", *items: str
) -> str:
    return "\n".join([f"T|{title}", f"S|{narrative}", *items])


def facts_reply(*statements: str) -> str:
    return episode_reply("Talk", "Alice talked.", *(f"F|t1|Alice|{s}" for s in statements))


# ------------------------------------------------------------------- raw first
def test_raw_turns_are_stored_even_when_every_llm_call_fails(store, model) -> None:  # type: ignore[no-untyped-def]
    model.script(LINES, *[ConnectionError("HTTP 500")] * 9)
    out = run(
        store,
        model,
        [turn("we baked bread", 0), turn("it was a sourdough loaf", 1)],
        closed=True,
        trigger_policy="session",
    )
    assert len(out["new_raw_ids"]) == 2
    assert store.count("raw", NS) == 2
    assert out["failures"] and out["failures"][0].node == "constructor"
    assert all(not c.ok for c in out["llm_calls"])
    assert store.count("episode", NS) == 0
    # the turns stay unconsolidated, so a later trigger retries them
    assert store.count("raw", NS) == len(store.get("raw", NS, where={"consolidated": False}))


@pytest.mark.parametrize(
    "bad", ["not json at all", '{"title": "only a title"}', "", '{"title": 3, "narrative": []}']
)
def test_malformed_output_is_retried_then_recorded_without_data_loss(store, model, bad) -> None:  # type: ignore[no-untyped-def]
    model.script(LINES, bad, bad, bad)
    out = run(store, model, [turn("we baked bread", 0)], closed=True, trigger_policy="session")
    assert model.count(LINES) == 3  # bounded retries
    assert [f.step for f in out["failures"]] == ["episode"]
    assert store.count("raw", NS) == 1 and store.count("episode", NS) == 0


def test_malformed_then_valid_output_recovers(store, model) -> None:  # type: ignore[no-untyped-def]
    model.script(LINES, "```json\n{oops", episode_reply())
    out = run(store, model, [turn("we baked bread", 0)], closed=True, trigger_policy="session")
    assert store.count("episode", NS) == 1
    assert out["failures"] == []
    repair = model.calls[1][1][-1].content
    assert "no usable line" in str(repair)


def test_a_malformed_line_drops_that_item_only_and_is_counted(store, model) -> None:  # type: ignore[no-untyped-def]
    reply = episode_reply(
        "Bread", "Alice baked.", "F|t1|Alice|Alice bakes sourdough", "F|t1|", "F|oops"
    )
    model.script(LINES, reply)
    out = run(store, model, [turn("we baked bread", 0)], closed=True, trigger_policy="session")
    assert [f.text for f in store.get("fact", NS)] == ["Alice bakes sourdough"]
    (failure,) = out["failures"]
    assert failure.step == "episode_line" and "dropped 2 malformed line(s)" in failure.error


def test_trivial_turns_stay_raw_without_an_llm_call(store, model) -> None:  # type: ignore[no-untyped-def]
    out = run(
        store,
        model,
        [turn("Wow, thanks!", 0), turn("So cool!", 1)],
        closed=True,
        trigger_policy="session",
    )
    assert len(out["new_raw_ids"]) == 2 and model.calls == []
    assert all(t.trivial for t in store.get("raw", NS))


def test_reingesting_the_same_turns_is_a_no_op(store, model) -> None:  # type: ignore[no-untyped-def]
    turns = [turn("we baked bread", 0), turn("it was a sourdough loaf", 1)]
    first = run(store, model, turns, closed=True, trigger_policy="session")
    calls = len(model.calls)
    second = run(store, model, turns, closed=True, trigger_policy="session")
    assert second["new_raw_ids"] == [] and sorted(second["duplicate_raw_ids"]) == sorted(
        first["new_raw_ids"]
    )
    assert len(model.calls) == calls  # nothing new to consolidate
    assert store.count("raw", NS) == 2 and store.count("episode", NS) == 1


def test_explicit_turn_indexes_give_stable_ids(store, model) -> None:  # type: ignore[no-untyped-def]
    t = {**turn("hi", 0), "turn_index": 7}
    a = run(store, model, [t], trigger_policy="session")
    b = run(store, model, [{**t, "text": "hi (edited)"}], trigger_policy="session")
    assert a["new_raw_ids"] == b["duplicate_raw_ids"]
    assert store.get("raw", NS)[0].text == "hi"  # the stored turn is never overwritten


def test_bad_turns_are_rejected_before_anything_is_stored(store, model) -> None:  # type: ignore[no-untyped-def]
    from lamina.errors import InvalidInputError

    naive = {**turn("x", 0), "occurred_at": datetime(2024, 3, 1)}
    with pytest.raises(InvalidInputError, match="turn #1"):
        run(store, model, [turn("fine", 0), naive])
    with pytest.raises(InvalidInputError, match="non-empty list"):
        run(store, model, [])
    assert store.count("raw", NS) == 0


# -------------------------------------------------------------- trigger policies
def test_recurrence_waits_without_llm_calls_until_theta_count(store, model) -> None:  # type: ignore[no-untyped-def]
    ctx = {"trigger_policy": "recurrence"}
    out = run(
        store,
        model,
        [turn("the stock market fell", 0), turn("my cat sleeps a lot", 1), turn(HIKE + " 1", 2)],
        **ctx,
    )
    assert not out["trigger"].consolidate and "kept in the raw layer" in out["trigger"].reason
    assert model.calls == []
    out = run(store, model, [turn(f"{HIKE} {i}", i) for i in range(3, 3 + THETA_COUNT)], **ctx)
    decision = out["trigger"]
    assert decision.consolidate and "recurrence" in decision.reason
    (job,) = decision.jobs
    assert job.kind == "episode" and len(job.raw_ids) == THETA_COUNT + 1
    ep = store.get("episode", NS)[0]
    assert sorted(ep.source_ids) == sorted(job.raw_ids)
    assert len(store.get("raw", NS, where={"consolidated": True})) == THETA_COUNT + 1


def test_recurrence_merges_into_a_similar_episode_first(store, model) -> None:  # type: ignore[no-untyped-def]
    store.add(
        NS,
        [
            EpisodeRecord(
                id="hike", namespace=NS, title="Hiking", text=f"Alice: {HIKE}", occurred_at=T0
            )
        ],
    )
    model.script(LINES, episode_reply("Hiking", "Alice hikes, now with new boots."))
    out = run(
        store,
        model,
        [turn(HIKE, 10)],
        trigger_policy="recurrence",
    )
    (job,) = out["trigger"].jobs
    assert job.kind == "merge" and job.episode_id == "hike"
    merged = store.get("episode", NS, ["hike"])[0]
    assert merged.text == f"Alice: {HIKE} Alice hikes, now with new boots."  # appended
    assert out["new_raw_ids"][0] in merged.source_ids
    assert store.count("episode", NS) == 1
    merge_prompt = str(model.calls[0][1][-1].content)
    assert "Known episode" in merge_prompt and "<data>" in merge_prompt


def test_eager_extracts_facts_every_turn_and_asks_the_boundary_judge(store, model) -> None:  # type: ignore[no-untyped-def]
    model.script(
        "BoundaryDecision",
        json.dumps({"new_episode": False}),
        json.dumps({"new_episode": True, "reason": "topic shift to cooking"}),
    )
    model.script(
        LINES,
        episode_reply(
            "Talk",
            "Alice talked.",
            "F|t1|Alice|Alice hikes",
            "F|t2|Alice|Alice hikes often",
            "F|t3|Alice|Alice cooks pasta",
        ),
    )
    turns = [turn(HIKE, 0), turn(HIKE + " again", 1), turn("I cooked pasta tonight", 2)]
    out = run(store, model, turns, trigger_policy="eager")
    kinds = [j.kind for j in out["trigger"].jobs]
    assert kinds.count("turn_facts") == 1 and kinds.count("episode") == 1  # one facts call
    episode_job = next(j for j in out["trigger"].jobs if j.kind == "episode")
    assert len(episode_job.raw_ids) == 2
    assert "topic shift to cooking" in out["trigger"].reason
    assert model.count("BoundaryDecision") == 2  # no judge for the very first turn
    assert {f.text for f in store.get("fact", NS)} >= {"Alice hikes", "Alice cooks pasta"}


@pytest.mark.parametrize(
    ("second", "ctx", "why"),
    [
        (turn("next day chat", 1, session="s2"), {}, "session s1 ended"),
        (turn("a much later topic: taxes", 600), {}, "time gap"),
        (turn("word " * 50, 1), {"arms": ResearchArms(boundary_max_tokens=40)}, "saturation"),
    ],
)
def test_boundary_heuristics(store, model, second, ctx, why) -> None:  # type: ignore[no-untyped-def]
    out = run(store, model, [turn("first topic", 0), second], trigger_policy="boundary", **ctx)
    (job,) = [j for j in out["trigger"].jobs if j.kind == "episode"]
    assert why in out["trigger"].reason and len(job.raw_ids) == 1
    assert model.count("BoundaryDecision") == 0


def test_session_policy_consolidates_closed_sessions(store, model) -> None:  # type: ignore[no-untyped-def]
    turns = [turn("apple pie", 0, "s1"), turn("banana bread", 1, "s1"), turn("cherry jam", 2, "s2")]
    out = run(store, model, turns, trigger_policy="session")
    (job,) = out["trigger"].jobs
    assert len(job.raw_ids) == 2 and "session s1 closed" in out["trigger"].reason
    out = run(store, model, [turn("date cake", 3, "s2")], trigger_policy="session", closed=True)
    (job,) = out["trigger"].jobs
    assert len(job.raw_ids) == 2


def test_trigger_decision_shows_in_the_update_stream(store, model) -> None:  # type: ignore[no-untyped-def]
    graph = build_ingest_graph(chat_model=model, store=store).compile()
    updates = list(
        graph.stream(
            {"turns": [turn("x", 0)]}, stream_mode="updates", context=MemoryContext(namespace=NS)
        )
    )
    trigger = next(u["episode_trigger"] for u in updates if "episode_trigger" in u)
    assert trigger["trigger"].policy == "boundary" and trigger["trigger"].reason  # the default


# ----------------------------------------------------------------- consolidation
def test_constructor_merges_a_cluster_into_a_near_duplicate_episode(store, model) -> None:  # type: ignore[no-untyped-def]
    store.add(
        NS,
        [
            EpisodeRecord(
                id="bread",
                namespace=NS,
                title="Bread",
                text="Alice: we baked bread Alice: it was sourdough",
                occurred_at=T0,
            )
        ],
    )
    out = run(
        store,
        model,
        [turn("we baked bread", 0), turn("it was a sourdough loaf", 1)],
        closed=True,
        trigger_policy="session",
    )
    assert [w.action for w in out["written"] if w.granularity == "episode"] == ["merged"]
    assert store.count("episode", NS) == 1


def test_refined_facts_are_deduplicated(store, model) -> None:  # type: ignore[no-untyped-def]
    store.add(
        NS,
        [
            FactRecord(
                namespace=NS,
                text="Alice bakes bread",
                occurred_at=T0,
                id=__import__("lamina.agents.common.refinement", fromlist=["x"]).fact_id(
                    NS, "Alice bakes bread"
                ),
            )
        ],
    )
    model.script(
        LINES,
        facts_reply(
            "Alice bakes bread.",
            "Alice likes sourdough",
            "alice likes  sourdough",
            "Alice likes sourdough",
        ),
    )
    out = run(
        store, model, [turn("we baked sourdough bread", 0)], closed=True, trigger_policy="session"
    )
    texts = sorted(f.text for f in store.get("fact", NS))
    assert texts == ["Alice bakes bread", "Alice likes sourdough"]
    assert [w.granularity for w in out["written"]].count("fact") == 1


def test_a_turn_restated_twice_is_kept_once(store, model) -> None:  # type: ignore[no-untyped-def]
    """Three notes of one turn say one thing; a note of another turn stays."""
    dance = (
        "Alice will host a dance competition next month.",
        "Alice is hosting a dance competition next month.",
        "Alice will host a dance",
    )
    notes = [f"F|t1|Alice|{s}" for s in dance] + ["F|t2|Alice|Alice bakes bread on Sundays."]
    model.script(LINES, episode_reply("Talk", "Alice talked.", *notes))
    turns = [
        turn("I'm hosting a dance competition next month!", 0),
        turn("I bake bread on Sundays", 1),
    ]
    out = run(store, model, turns, closed=True, trigger_policy="session")
    texts = sorted(f.text.split(" (")[0] for f in store.get("fact", NS))
    assert texts == [
        "Alice bakes bread on Sundays.",
        "Alice will host a dance competition next month",
    ]
    assert out["checks"].count("repeat_merged") == 2


def test_facts_carry_subject_kind_sources_and_the_parsers_event_time(store, model) -> None:  # type: ignore[no-untyped-def]
    model.script(
        LINES,
        episode_reply(
            "Running",
            "Alice plans a marathon.",
            "P|t2|Alice|Alice will run a marathon next month",
            "F|t9|Theo|Theo, Alice's brother, ran track on 3 March 2024",
            "L|t1|Alice|Alice loves running",
        ),
    )
    out = run(
        store,
        model,
        [
            turn("I love running marathons", 0),
            turn("my marathon is next month!", 1),
            turn("my brother Theo ran track in March", 2),
        ],
        closed=True,
        trigger_policy="session",
    )
    facts = {f.text: f for f in store.get("fact", NS)}
    plan = facts["Alice will run a marathon next month (April 2024)"]
    assert plan.kind == "foresight" and plan.subject == "Alice"
    assert (plan.start_time, plan.end_time) == (
        datetime(2024, 4, 1, tzinfo=UTC),
        datetime(2024, 4, 30, tzinfo=UTC),
    )
    assert plan.source_ids == [out["new_raw_ids"][1]]
    theo = facts["Theo, Alice's brother, ran track on 3 March 2024"]
    assert theo.subject == "Theo"  # about Theo, though Alice said it
    # an unknown label: the one turn that says it (else the whole excerpt)
    assert theo.source_ids == [out["new_raw_ids"][2]]
    assert facts["Alice loves running"].kind == "preference"


def test_the_parsers_date_wins_over_the_models(store, model) -> None:  # type: ignore[no-untyped-def]
    model.script(
        LINES,
        episode_reply(
            "Loan",
            "The bank approved it.",
            "F|t1|Theo|The bank approved Theo's loan on 2 March 2024",
        ),
    )
    run(
        store,
        model,
        [turn("Theo's loan got approved yesterday!", 0)],
        closed=True,
        trigger_policy="session",
    )
    (fact,) = store.get("fact", NS)
    assert fact.text == "The bank approved Theo's loan on 29 February 2024"
    assert fact.point_in_time == datetime(2024, 2, 29, tzinfo=UTC)


def test_construction_prompt_shows_resolved_dates(store, model) -> None:  # type: ignore[no-untyped-def]
    run(
        store,
        model,
        [turn("I adopted a puppy yesterday", 0)],
        closed=True,
        trigger_policy="session",
    )
    prompt = next(m for t, m in model.calls if t == LINES)
    assert "(Friday 1 March 2024)" in str(prompt[-1].content)
    assert "I adopted a puppy yesterday (29 February 2024)" in str(prompt[-1].content)


def test_scenes_assimilate_similar_episodes_and_split_others(store, model) -> None:  # type: ignore[no-untyped-def]
    model.script(
        LINES,
        episode_reply("Hiking", HIKE, "L|t1|Alice|Alice loves hiking"),
        episode_reply("Hiking 2", HIKE + " again", "F|t1|Maya|Maya owns hiking boots"),
        episode_reply("Taxes", "Alice filed her quarterly tax report"),
    )
    ctx = {"trigger_policy": "session"}
    run(store, model, [turn("hiking in the alps", 0, "s1")], closed=True, **ctx)
    run(store, model, [turn("more hiking in the alps with Maya", 60, "s2")], closed=True, **ctx)
    (scene,) = store.get("scene", NS)
    assert isinstance(scene, SceneRecord) and len(scene.members) == 2
    assert scene.text.splitlines() == [
        f"1 March 2024: Hiking. {HIKE}.",
        f"1 March 2024: Hiking 2. {HIKE} again.",
    ]
    assert scene.centroid
    run(store, model, [turn("filing quarterly taxes", 120, "s3")], closed=True, **ctx)
    assert store.count("scene", NS) == 2
    profile = store.get_profile(NS)
    assert profile is not None and model.count(LINES) == 3  # no summary or profile calls
    assert profile.about("Alice") == ["Alice loves hiking"]
    assert profile.about("Maya") == ["Maya owns hiking boots"]


def test_scene_max_time_gap_starts_a_new_scene(store, model) -> None:  # type: ignore[no-untyped-def]
    model.script(LINES, episode_reply("Hiking", HIKE), episode_reply("Hiking", HIKE))
    ctx = {"trigger_policy": "session"}
    run(store, model, [turn("hiking in the alps", 0, "s1")], closed=True, **ctx)
    late = turn("hiking in the alps again", 60 * 24 * 30, "s2")
    run(store, model, [late], closed=True, **ctx)
    assert store.count("scene", NS) == 2


def test_contradicted_facts_are_superseded_and_audited(store, model) -> None:  # type: ignore[no-untyped-def]
    old = FactRecord(
        id=fact_id(NS, "Alice lives in Boston"),
        namespace=NS,
        text="Alice lives in Boston",
        subject="Alice",
        occurred_at=T0 - timedelta(days=90),
        valid_from=T0 - timedelta(days=90),
    )
    store.add(NS, [old])
    model.script(LINES, facts_reply("Alice lives in Denver"))
    model.script("SupersessionCheck", json.dumps({"verdicts": [{"pair": "p1", "outdated": True}]}))
    out = run(store, model, [turn("I moved to Denver!", 0)], closed=True, trigger_policy="session")
    assert [c.old_id for c in out["conflicts"]] == [old.id]
    kept = store.get("fact", NS, [old.id])[0]
    assert kept.superseded_by == fact_id(NS, "Alice lives in Denver")
    assert kept.valid_to == T0
    assert kept.is_valid_at(T0 - timedelta(days=30)) and not kept.is_valid_at(
        T0 + timedelta(days=1)
    )
    (entry,) = store.list_audit(NS)
    assert (
        entry.action == "supersede"
        and entry.before == "Alice lives in Boston"
        and entry.reason == "Alice: the newer fact replaces the older one"
    )
    assert entry.source_ids == out["new_raw_ids"]
    assert [f.text for f in store.get("fact", NS, where={"superseded": False})] == [
        "Alice lives in Denver"
    ]


def test_no_conflict_check_call_without_similar_facts(store, model) -> None:  # type: ignore[no-untyped-def]
    model.script(LINES, facts_reply("Alice bakes bread"))
    run(store, model, [turn("I bake bread", 0)], closed=True, trigger_policy="session")
    assert model.count("SupersessionCheck") == 0


def test_namespaces_do_not_mix_during_consolidation(store, model) -> None:  # type: ignore[no-untyped-def]
    run(store, model, [turn(HIKE, 0)], closed=True, trigger_policy="session", namespace="user:bob")
    run(store, model, [turn(HIKE, 0)], closed=True, trigger_policy="session")
    for gran in ("raw", "episode", "scene"):
        assert {r.namespace for r in store.get(gran, NS)} == {NS}
        assert store.count(gran, "user:bob") == store.count(gran, NS) == 1


def test_graph_topology_snapshot(store, model, graph_edges) -> None:  # type: ignore[no-untyped-def]
    from langgraph.graph import END

    from lamina.core.nodes import FINISH

    assert FINISH == END
    assert graph_edges(build_ingest_graph(chat_model=model, store=store)) == [
        "__start__ --> raw_write;",
        "constructor -.-> __end__;",
        "constructor -.-> judge;",
        "episode_trigger -.-> __end__;",
        "episode_trigger -.-> constructor;",
        "judge -.-> __end__;",
        "judge -.-> refresher;",
        "raw_write --> episode_trigger;",
        "refresher --> __end__;",
    ]


def run_session(store, model, turns: list[Any], **ctx: Any) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """Ingest ``turns`` as one session that closes and is consolidated."""
    return run(store, model, turns, closed=True, trigger_policy="session", **ctx)


def run_plants_chat(store, model, **ctx: Any) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """Alice asks Bob to water her plants; the session closes and is consolidated."""
    return run_session(
        store,
        model,
        [
            turn("Can you water my plants while I travel?", 0),
            turn("Sure, happy to water the plants!", 1, speaker="Bob"),
        ],
        **ctx,
    )


def test_construction_drops_unsupported_facts_and_files_facts_by_grammar(store, model) -> None:  # type: ignore[no-untyped-def]
    model.script(
        LINES,
        episode_reply(
            "Plans",
            "Alice asked Bob to water her plants.",
            "F|t1|Alice|Alice will water the plants while she travels",
            "F|t1|Alice|Alice is moving to Berlin for a new job",
            "F|t2|Alice|Alice thanked Bob for the plants",
        ),
    )
    out = run_plants_chat(store, model, small_model=True)  # the small model's profile
    facts = {f.text: f for f in store.get("fact", NS)}
    assert "Alice is moving to Berlin for a new job" not in facts  # no word of it was said
    water = facts["Bob will water the plants while she travels"]  # "you" = Bob
    assert water.subject == "Bob" and water.metadata["owner_check"] == "corrected"
    assert sorted(out["checks"]).count("unsupported_dropped") == 1
    assert "owner_corrected" in out["checks"]


def test_a_statement_of_names_only_is_dropped_and_counted(store, model) -> None:  # type: ignore[no-untyped-def]
    model.script(
        LINES,
        episode_reply(
            "Plans",
            "Alice asked Bob to water her plants.",
            "F|t2|Bob|Bob, Bob, Bob",
            "F|t2|Bob|Bob will water the plants",
        ),
    )
    out = run_plants_chat(store, model)
    assert {f.text for f in store.get("fact", NS)} == {"Bob will water the plants"}
    assert out["checks"].count("empty_dropped") == 1


def test_a_fact_under_the_wrong_turn_label_is_sourced_from_the_turn_that_says_it(  # type: ignore[no-untyped-def]
    store, model
) -> None:
    model.script(
        LINES,
        episode_reply(
            "Pets and pottery",
            "Alice adopted a greyhound; Bob took up pottery.",
            "F|t2|Alice|Alice adopted a greyhound called Biscuit",
            "F|t1|Bob|Bob started pottery classes",
        ),
    )
    out = run_session(
        store,
        model,
        [
            turn("We adopted a greyhound called Biscuit!", 0),
            turn("Lovely! I started pottery classes on Monday.", 1, speaker="Bob"),
        ],
    )
    raw = {t.text: t.id for t in store.get("raw", NS)}
    sources = {f.text: f.source_ids for f in store.get("fact", NS)}
    assert sources == {
        "Alice adopted a greyhound called Biscuit": [raw["We adopted a greyhound called Biscuit!"]],
        "Bob started pottery classes": [raw["Lovely! I started pottery classes on Monday."]],
    }
    assert out["checks"].count("source_corrected") == 2
    assert "unsupported_dropped" not in out["checks"]


def test_a_turn_that_says_clearly_more_of_a_fact_is_its_source(store, model) -> None:  # type: ignore[no-untyped-def]
    # "dogs" alone is a quarter of the note, enough support for the cited turn; the
    # next turn holds all of it, so it is the source (the margin is half the words)
    model.script(
        LINES,
        episode_reply(
            "Dogs",
            "Alice told Bob about her dogs.",
            "F|t1|Alice|Alice goes on adventures with her dogs very often",
            "F|t1|Alice|Alice got new collars for her dogs and their tags",
        ),
    )
    out = run_session(
        store,
        model,
        [
            turn("I got new collars and tags for my dogs!", 0),
            turn("We go on adventures together very often with the dogs.", 1),
        ],
    )
    raw = {t.text: t.id for t in store.get("raw", NS)}
    sources = {f.text: f.source_ids for f in store.get("fact", NS)}
    assert sources == {
        "Alice goes on adventures with her dogs very often": [
            raw["We go on adventures together very often with the dogs."]
        ],
        # the other turn holds "dogs" too, a quarter of this one: the cited turn stays
        "Alice got new collars for her dogs and their tags": [
            raw["I got new collars and tags for my dogs!"]
        ],
    }
    assert out["checks"].count("source_corrected") == 1


class _Plain(SchemaChatModel):
    """A scripted model that keeps each call's options."""

    options_seen: list[dict[str, Any]] = []

    def next_reply(self, prompt: list[Any], **kwargs: Any) -> Any:
        self.options_seen.append(kwargs)
        return super().next_reply(prompt, **kwargs)


class _OptionsSeen(_Plain):
    """The same, with a frequency penalty setting (as ``ChatOpenAI`` has)."""

    frequency_penalty: float | None = None


def test_a_construction_call_carries_the_frequency_penalty(store) -> None:  # type: ignore[no-untyped-def]
    model = _OptionsSeen(options_seen=[])
    model.script(LINES, episode_reply("Hike", "Alice hiked.", "F|t1|Alice|Alice hiked Snowdon"))
    run(
        store,
        model,
        [turn("I hiked Snowdon today", 0)],
        closed=True,
        trigger_policy="session",
    )
    assert [o.get("frequency_penalty") for o in model.options_seen] == [FREQUENCY_PENALTY]
    assert [f.text for f in store.get("fact", NS)][0].startswith("Alice hiked Snowdon")


def test_a_model_without_a_frequency_penalty_setting_is_not_sent_one(store) -> None:  # type: ignore[no-untyped-def]
    model = _Plain(options_seen=[])
    model.script(LINES, episode_reply("Hike", "Alice hiked.", "F|t1|Alice|Alice hiked Snowdon"))
    run(store, model, [turn("I hiked Snowdon today", 0)], closed=True, trigger_policy="session")
    assert model.options_seen and "frequency_penalty" not in model.options_seen[0]
    assert len(store.get("fact", NS)) == 1
