"""The ``sessions`` context layout: raw turns grouped by session day under one date line."""

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from lamina.agents.recall.context import best_last, cut_to_budget, render_context, render_for
from lamina.agents.recall.retriever import pool_settings
from lamina.core.context import MemoryContext
from lamina.core.state import Candidate
from lamina.errors import InvalidInputError

UTC_ZONE = ZoneInfo("UTC")
DAY1 = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
DAY2 = datetime(2023, 6, 1, 9, 0, tzinfo=UTC)


def words(text: str) -> int:
    return len(text.split())


def turn(session: str, i: int, text: str, start: datetime = DAY1, **kw: object) -> Candidate:
    return Candidate(
        granularity="raw",
        id=f"{session}:{i}",
        text=text,
        speaker="Caroline" if i % 2 else "Melanie",
        session_id=session,
        turn_index=i,
        occurred_at=start + timedelta(minutes=i),
        score=1.0,
        **kw,  # type: ignore[arg-type]
    )


NOTE = Candidate(
    granularity="fact",
    id="f1",
    text="Caroline moved to Porto.",
    occurred_at=DAY2,
    score=0.5,
    source_ids=["x"],
)


def test_relevance_order_groups_turns_by_session_day_with_the_best_block_last() -> None:
    best = turn("s1", 4, "Sunflowers mean warmth.")
    asked = turn("s1", 3, "What do flowers mean to you?")
    far = turn("s1", 9, "Bye!")
    other = turn("s2", 2, "We went camping.", start=DAY2)
    ranking = [best.id, NOTE.id, other.id, asked.id, far.id]
    ordered = best_last([far, other, asked, best, NOTE], ranking)
    text, labels = render_context(ordered, UTC_ZONE, ordered=True, layout="sessions")
    assert text.splitlines() == [
        "[m1] (fact, 1 June 2023) Caroline moved to Porto.",
        "(1 June 2023)",
        "[m2] 09:02 Melanie: We went camping.",
        "(8 May 2023)",
        "[m3] 13:59 Caroline: What do flowers mean to you?",
        "[m4] 14:00 Melanie: Sunflowers mean warmth.",
        "...",
        "[m5] 14:05 Caroline: Bye!",
    ]
    assert labels == {"m1": "f1", "m2": other.id, "m3": asked.id, "m4": best.id, "m5": far.id}


def test_conversation_order_puts_blocks_in_time_order_and_derived_memory_after() -> None:
    memories = [NOTE, turn("s2", 1, "later day", start=DAY2), turn("s1", 1, "first day")]
    text, labels = render_context(memories, UTC_ZONE, layout="sessions")
    assert text.splitlines() == [
        "(8 May 2023)",
        "[m1] 13:57 Caroline: first day",
        "(1 June 2023)",
        "[m2] 09:01 Caroline: later day",
        "[m3] (fact, 1 June 2023) Caroline moved to Porto.",
    ]
    assert labels["m3"] == "f1"


def test_a_shared_image_and_the_data_rule_hold_in_a_session_block() -> None:
    shown = turn("s1", 1, "look </data> here", media_caption="a dog")
    text, _ = render_context([shown], UTC_ZONE, layout="sessions")
    assert text.splitlines()[1] == "[m1] 13:57 Caroline: look &lt;/data> here [shared image: a dog]"


def test_the_sessions_layout_fits_more_turns_in_the_same_budget() -> None:
    raw = [turn(f"s{i % 3}", i, "w w w w") for i in range(60)]
    cut = {
        layout: cut_to_budget(
            raw,
            [],
            budget=120,
            derived_share=0.2,
            limit=100,
            tz=UTC_ZONE,
            count=words,
            layout=layout,
        )
        for layout in ("turns", "sessions")
    }
    rendered = render_context(cut["sessions"], UTC_ZONE, layout="sessions")[0]
    assert words(rendered) <= 120  # the date lines and gap marks are paid for
    assert len(cut["sessions"]) > len(cut["turns"])
    # the turns left out are the least relevant: the cut keeps a prefix of the ranking
    assert [m.id for m in cut["sessions"]] == [m.id for m in raw[: len(cut["sessions"])]]


def test_the_context_setting_reaches_the_pool_and_the_rendering() -> None:
    ctx = MemoryContext(context_layout="sessions")
    assert pool_settings(ctx, retry=False).layout == "sessions"
    assert pool_settings(MemoryContext(), retry=False).layout == "turns"
    text, _ = render_for([turn("s1", 1, "hi there")], ctx, UTC_ZONE)
    assert text.splitlines()[0] == "(8 May 2023)"
    plain, _ = render_for([turn("s1", 1, "hi there")], MemoryContext(), UTC_ZONE)
    assert plain == "[m1] (8 May 2023, 13:57) Caroline: hi there"


def test_an_unknown_layout_is_refused() -> None:
    with pytest.raises(InvalidInputError, match="context_layout"):
        MemoryContext(context_layout="blocks")  # type: ignore[arg-type]
