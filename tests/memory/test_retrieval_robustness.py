"""Retrieval as real people write: typos, name variants, chat style, emoji, long turns.

Everything goes through the public path (``Memory.add(..., infer=False)`` then
``Memory.search``) with the real offline embedder (MiniLM, the library default), so the
dense and BM25 channels and their fusion are all exercised. Bad queries (empty, only
stop-words, only emoji or punctuation, 10,000 words, control characters) must give a
clear lamina error or a short list of hits, never a crash; that part also runs with the
static embedder.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from lamina import Memory, MemoryConfig
from lamina.embedders.choice import make_embeddings
from lamina.errors import InvalidInputError, InvalidTypeError
from lamina.stores import ChromaMemoryStore

pytestmark = pytest.mark.integration

NS = "user:katherine"
T0 = datetime(2024, 5, 8, 18, 0, tzinfo=UTC)
FILLER = (
    "The weather was grey all week and the garden needed watering. We talked about "
    "groceries, the neighbours' new fence, and whether to repaint the hallway. "
)
BOOK = "Anyway, for March the book club picked The Overstory by Richard Powers. "
LONG_TURN = FILLER * 18 + BOOK + FILLER * 3
"""About 600 words; the book sits past the first 256 tokens MiniLM reads."""
TURNS = [
    ("Katherine", "I finally adopted a rescue greyhound, her name is Biscuit"),
    ("Marco", "Congrats! I signed up for a pottery class downtown"),
    ("Katherine", "My sister Priyanka is moving to Lisbon in September"),
    ("Marco", "I ran my first half marathon last Sunday, 2 hours 5 minutes"),
    ("Katherine", "I went hiking at Mount Rainier with my cousins"),
    ("Marco", "I went hiking in Yosemite with my brother"),
    ("Katherine", "just got promoted to team lead 🎉🎉🥳"),
    ("Marco", "lol my car broke down again, gonna sell it n get a bike"),
    ("Katherine", LONG_TURN),
    ("Marco", "My daughter started learning the violin"),
    ("Katherine", "We're planning a trip to Kyoto for the cherry blossoms"),
    ("Marco", "Thanks, talk soon!"),
    ("José", "I'm learning to make paella from my abuela's recipe"),
    ("Katherine", "Zoë and I are repainting the nursery a sage green"),
]


class NoServer:
    """A local server factory that fails the test if anything asks for a model."""

    def __call__(self, config: MemoryConfig) -> Any:
        raise AssertionError("retrieval asked for a chat model")


def _memory(embedder: str) -> Memory:
    store = ChromaMemoryStore.ephemeral(embeddings=make_embeddings(embedder))
    memory = Memory(store=store, local_server_factory=NoServer())
    for i, (speaker, text) in enumerate(TURNS):
        memory.add(
            text, namespace=NS, at=T0 + timedelta(minutes=i), speaker=speaker,
            session_id="s1", infer=False,
        )  # fmt: skip
    return memory


@pytest.fixture(scope="module")
def memory() -> Memory:
    return _memory("minilm")


def top(memory: Memory, query: str, k: int = 2) -> list[str]:
    """The texts of the first ``k`` raw hits for ``query``."""
    return [h.text for h in memory.search(query, namespace=NS, granularities=["raw"], k=k)]


def said(fragment: str) -> str:
    """The one turn containing ``fragment``."""
    (text,) = [t for _, t in TURNS if fragment in t]
    return text


# ------------------------------------------------------------------- how people write
@pytest.mark.parametrize(
    ("query", "fragment"),
    [
        ("What is the name of Katherines greyhund?", "greyhound"),
        ("when does her sistr move to lisbn", "Lisbon"),
        ("kathrine dog name", "greyhound"),
    ],
)
def test_typos_in_the_question(memory: Memory, query: str, fragment: str) -> None:
    assert said(fragment) in top(memory, query)


@pytest.mark.parametrize(
    ("query", "fragment"),
    [
        ("Why is Marco getting a bike?", "bike"),  # the turn is lower-case chat style
        ("did marco sell his car", "bike"),  # so is the question
        ("WHAT INSTRUMENT IS MARCOS DAUGHTER LEARNING", "violin"),
        ("Katherine’s greyhound’s name", "greyhound"),  # typographic apostrophes
    ],
)
def test_chat_style_and_case(memory: Memory, query: str, fragment: str) -> None:
    assert said(fragment) in top(memory, query)


@pytest.mark.parametrize(
    ("query", "fragment"),
    [
        ("What is Jose learning to cook?", "paella"),  # accent dropped in the question
        ("what is josé learning to cook", "paella"),
        ("what colour is Zoe painting the nursery", "nursery"),  # Zoë in the turn
    ],
)
def test_accents_written_or_dropped(memory: Memory, query: str, fragment: str) -> None:
    assert said(fragment) in top(memory, query, k=1)


def test_the_full_name_picks_the_right_persons_turn(memory: Memory) -> None:
    hits = top(memory, "Where did Katherine go hiking?", k=3)
    assert hits.index(said("Rainier")) < hits.index(said("Yosemite"))


def test_a_nickname_picks_the_right_persons_turn(memory: Memory) -> None:
    hits = top(memory, "Where did Kate go hiking?", k=3)
    assert hits.index(said("Rainier")) < hits.index(said("Yosemite"))


def test_emoji_in_the_turn_and_in_the_question(memory: Memory) -> None:
    assert said("promoted") in top(memory, "who got promoted 🎉")
    assert top(memory, "🎉🎉", k=1) == [said("promoted")]  # only emoji: the emoji turn


def test_a_fact_past_the_embedders_window_is_still_found(memory: Memory) -> None:
    assert top(memory, "Which book did the book club pick for March?", k=1) == [LONG_TURN]


def test_a_ten_thousand_word_turn_is_stored_whole_and_found(memory: Memory) -> None:
    words = ("lorem ipsum dolor sit amet " * 2000).split()
    text = " ".join(words[:5000] + ["my", "locker", "code", "is", "4417"] + words[5000:])
    namespace = "user:long-turn"
    memory.add(text, namespace=namespace, at=T0, speaker="Marco", session_id="s", infer=False)
    memory.add("see you at the gym", namespace=namespace, at=T0, speaker="Marco", infer=False)
    hits = memory.search("what is my locker code", namespace=namespace, granularities=["raw"])
    assert hits[0].text == text and len(hits[0].text.split()) == 10_005


# --------------------------------------------------------------------- bad queries
@pytest.fixture(scope="module", params=["minilm", "static"])
def any_memory(request: pytest.FixtureRequest, memory: Memory) -> Memory:
    if request.param == "minilm":
        return memory
    pytest.importorskip("wordllama")
    return _memory(request.param)


@pytest.mark.parametrize("query", ["", "   ", "\n\t"])
def test_an_empty_query_is_a_clear_error(any_memory: Memory, query: str) -> None:
    with pytest.raises(InvalidInputError, match="empty"):
        any_memory.search(query, namespace=NS)


@pytest.mark.parametrize("query", [None, b"greyhound", 42])
def test_a_query_that_is_not_text_is_a_clear_error(any_memory: Memory, query: object) -> None:
    with pytest.raises(InvalidTypeError, match="str"):
        any_memory.search(query, namespace=NS)  # type: ignore[arg-type]


QUERIES = {
    "stop words only": "the and of is to it",
    "emoji only": "🎉🥳😀",
    "punctuation only": "?!... ---",
    "control characters": "\x00\x01\x1b[31m",
    "10,000 words": " ".join(["blah"] * 5000 + ["Kyoto", "cherry", "blossoms"] + ["meh"] * 4997),
    "one 20,000-character word": "a" * 20_000,
    "right-to-left and combining marks": "مرحبا שלום ё̈",
}


@pytest.mark.parametrize("query", list(QUERIES.values()), ids=list(QUERIES))
def test_odd_queries_give_a_few_hits_never_a_crash(any_memory: Memory, query: str) -> None:
    hits = any_memory.search(query, namespace=NS, k=3)
    assert len(hits) <= 3
    assert all(h.text in {t for _, t in TURNS} for h in hits)  # only this namespace's turns


def test_a_long_pasted_query_still_finds_its_topic(any_memory: Memory) -> None:
    hits = any_memory.search(QUERIES["10,000 words"], namespace=NS, granularities=["raw"], k=3)
    assert said("Kyoto") in [h.text for h in hits]


def test_a_lone_surrogate_in_the_query_is_a_clear_error(any_memory: Memory) -> None:
    with pytest.raises(InvalidInputError, match="surrogate"):
        any_memory.search("greyhound \ud800", namespace=NS)
