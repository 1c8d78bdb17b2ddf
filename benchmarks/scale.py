"""Scale benchmark: ingest throughput, query latency and peak memory of ``ChromaMemoryStore``.

Every size runs in a fresh child process (this script re-invoked with an internal flag),
so the peak RSS reported for a size belongs to that size alone. Each child:

1. opens ``ChromaMemoryStore.persistent(<temporary dir>)`` with the real offline
   ``MiniLMEmbeddings()`` (the default deployment), and removes the directory at the end;
2. ingests ``size`` synthetic raw turns into ONE namespace with ``store.add`` in batches,
   embedding every turn for real, and times the split between embedding, Chroma upsert,
   the BM25 mirror update and the rest (validation, index text, metadata encoding);
3. drops the BM25 mirror and times its cold build from Chroma (what the first query
   after a restart pays);
4. runs the same set of generated queries through ``store.search`` in five scenarios:
   hybrid, dense, bm25, hybrid with a time window and hybrid with a ``speaker`` filter,
   and reports p50 / p95 / mean / max latency, plus where hybrid time goes.

The BM25 mirror is created on the empty namespace before ingest, so ``add`` keeps it in
step as it does in a long-running process; the cold build is measured separately.

Batch size: ``store.add`` batches of 64, 256 and 1024 turns were compared on 2,000 turns
(each twice, interleaved). Embedding cost per turn was the same for all three (about 33
turns per CPU-second on the shared 2-core dev box), but Chroma's upsert time per 2,000
turns fell from 3.5-7.4 s (64) and 3.4-4.0 s (256) to 1.5-1.7 s (1024), so 1024 is the
default (``--batch-size``).

A scenario stops early once ``--budget-s`` is spent (after ``--min-queries``); the report
shows how many queries ran, so slow configurations do not make ``make bench`` take hours.
Figures include the 1-minute load average: on a shared machine, compare the CPU-time
columns, which other processes disturb much less than wall time.

Usage::

    .venv/bin/python benchmarks/scale.py                      # sizes 10000 100000
    .venv/bin/python benchmarks/scale.py --sizes 2000 --json /tmp/scale.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

NAMESPACE = "bench:scale"
DEFAULT_SIZES = (10_000, 100_000)
DEFAULT_BATCH = 1024
DEFAULT_QUERIES = 200
DEFAULT_BUDGET_S = 120.0
DEFAULT_MIN_QUERIES = 30
DEFAULT_SEED = 20240501
WARMUP_QUERIES = 20
K = 10
EPOCH = datetime(2023, 1, 2, 8, 0, tzinfo=UTC)
SPAN_DAYS = 730
WINDOW_DAYS = 90
WORKER_FLAG = "--_worker"

# --------------------------------------------------------------------------- vocabulary
FIRST_NAMES = """Caroline Melanie Joanna Nate Audrey Andrew John Maria Tim Evan Sam Gina Jon Deborah
Jolene Calvin Dave James Priya Omar Lena Hugo Ines Tomas Yuki Kenji Aisha Rahul Sofia Mateo
Chloe Liam Noah Emma Olivia Ava Mia Lucas Ethan Zoe Nora Felix Ivy Leo Ruby Oscar Hazel Theo
Clara Max Alice Bruno Dana Elif Farah Gabriel Hana Isaac Jade Kofi Lara Milo Nadia Owen Paula
Quinn Rosa Silas Tara Umar Vera Wes Ximena Yara Zane Beatrix Cyrus Delia Emil Freya Gideon
Helga Ilya Juno Kai Luca Magnus Nell Otto Pia Rufus Saskia Tobias Ulla Viggo Wanda Xavier""".split()

PLACES = """park beach library museum gym cafe bakery market harbor lake forest trail stadium
theater cinema studio office school campus hospital clinic airport station bridge garden
vineyard farm cabin lodge hotel hostel restaurant diner pub brewery gallery church temple
mall pier island canyon desert valley mountain hill river waterfall zoo aquarium arena rink
pool court field ranch village town city suburb downtown plaza square boardwalk marina
observatory planetarium bookstore warehouse workshop garage attic basement kitchen backyard
porch balcony rooftop classroom auditorium conference shelter clinic orchard meadow""".split()

ACTIVITIES = """hiking camping painting pottery swimming running cycling skiing surfing climbing
kayaking fishing baking cooking gardening knitting sewing dancing singing drumming reading
writing journaling volunteering mentoring tutoring coding gaming chess yoga pilates boxing
fencing archery sailing rowing skating snowboarding birdwatching stargazing photography
filming podcasting blogging woodworking carving sculpting calligraphy origami quilting
brewing fermenting foraging hunting horseback-riding bowling golfing tennis badminton
volleyball basketball football soccer baseball cricket rugby hockey marathon triathlon
meditation therapy counseling fundraising protesting canvassing parenting babysitting
adopting fostering traveling backpacking roadtripping sightseeing shopping thrifting
collecting restoring decorating renovating moving packing studying teaching interviewing
""".split()

OBJECTS = """guitar piano violin ukulele drum camera lens tripod notebook journal sketchbook
canvas easel brush palette bicycle helmet skateboard surfboard kayak tent backpack sleeping-bag
lantern compass map passport ticket suitcase laptop tablet phone headphones speaker keyboard
monitor printer book novel cookbook magazine comic poster painting sculpture vase mug teapot
kettle oven blender skillet wok knife cutting-board apron recipe cake pie bread cookie muffin
scarf sweater jacket boots sneakers sandals hat gloves necklace bracelet ring earrings watch
glasses umbrella blanket pillow lamp candle plant succulent orchid bonsai aquarium leash collar
kite puzzle board-game dice trophy medal certificate diploma letter postcard photo album
scrapbook car truck van motorcycle scooter boat canoe sailboat tractor telescope microscope
binoculars drone robot charger battery toolbox hammer saw drill ladder shovel rake wheelbarrow
""".split()

ADJECTIVES = """new old little big tiny huge beautiful lovely quiet noisy busy peaceful cozy bright
dark sunny rainy snowy windy warm cold hot chilly fresh stale sweet sour spicy salty bitter
colorful vintage modern rustic elegant simple fancy cheap expensive rare common local foreign
favorite strange funny serious gentle wild calm crowded empty hidden famous secret handmade
homemade broken shiny dusty wooden metal ceramic glass leather woolen silk cotton green blue
red yellow purple orange pink golden silver""".split()

ANIMALS = """dog cat puppy kitten horse pony rabbit hamster parrot turtle snake lizard goldfish
chicken goat sheep cow pig duck owl hawk eagle fox deer bear wolf otter seal dolphin whale
""".split()

FOODS = """pasta pizza sushi ramen tacos curry salad soup sandwich burger pancakes waffles
omelette risotto paella dumplings noodles steak salmon shrimp lasagna burrito falafel hummus
kimchi bibimbap pho gumbo chili stew brownies cheesecake tiramisu gelato smoothie lemonade
coffee tea cocoa cider""".split()

FEELINGS = """happy excited proud nervous anxious grateful tired exhausted relieved thrilled
curious hopeful lonely overwhelmed inspired motivated calm frustrated nostalgic""".split()

TOPICS = """career family friendship health fitness money school college marriage wedding
divorce pregnancy adoption retirement promotion interview startup charity election vacation
holiday birthday anniversary graduation funeral surgery recovery breakup move renovation
identity community faith music art science history politics climate""".split()

WEEKDAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()
MONTHS = """January February March April May June July August September October November
December""".split()
RELATIVE = """yesterday today tonight recently lately last-week last-month last-year
this-morning this-weekend next-week next-month""".split()

SYLLABLES = """ba be bi bo bu da de di do du ka ke ki ko ku la le li lo lu ma me mi mo mu na ne
ni no nu ra re ri ro ru sa se si so su ta te ti to tu va ve vi vo vu za zo ran len mar dor
kin ton vel sar tis bel cor dan fen gar hol jor kes lin mor nes per quin ros sten tor ul
vin wen yor zel ash brook dale field ford ham hurst ley mere mont stead thorpe wick""".split()

SENTENCES = [
    "I went {activity} at the {place} near {town} with {name} last {weekday}.",
    "{name} gave me a {adj} {object} for my birthday and I love it.",
    "Did you ever finish the {object} you started in {month}?",
    "We had {food} at a {adj} {place} in {town} after the {topic} talk.",
    "My {animal} keeps chewing on the {object}, it drives me crazy.",
    "I have been {feeling} about {topic} since {relative}.",
    "{name} {surname} is teaching me {activity} every {weekday} morning.",
    "That {adj} {place} in {town} reminds me of when we were kids.",
    "I bought a {adj} {object} at the {place} for only {number} dollars.",
    "We are planning a trip to {town} in {month} to go {activity}.",
    "{name} says the {food} at the {place} is the best in {town}.",
    "Honestly {activity} has helped me so much with {topic}.",
    "I painted a {adj} {animal} on a {object} and gave it to {name}.",
    "Our {topic} group meets at the {place} on {weekday} evenings.",
    "It took me {number} hours to fix the {object}, but it works now.",
    "Remember the {adj} {object} we found at the {place} in {town}?",
    "I felt so {feeling} when {name} told me about the {topic} news.",
    "Next {month} I want to try {activity} and maybe {activity2} too.",
    "The kids loved the {animal} at the {place}, they want one now.",
    "{name} and {name2} are moving to {town} because of {topic}.",
    "I'm reading a {adj} novel about {topic} and {activity}.",
    "We celebrated {topic} with {food} and a {adj} {object}.",
    "Thanks for the {object}, {name}! It looks {adj} in the {place}.",
    "Since {month} I've been {activity} {number} times a week.",
    "My grandmother in {town} taught me {activity} with an old {object}.",
    "What time does the {place} open on {weekday}?",
    "I lost my {object} somewhere between the {place} and the {place2}.",
    "That sounds {adj}! How long have you been into {activity}?",
    "I'm {feeling} because the {topic} meeting got moved to {weekday}.",
    "We adopted a {animal} named {name} from the shelter in {town}.",
]

QUERIES = [
    "when did {name} go {activity}",
    "what did {name} buy at the {place}",
    "{activity} in {town}",
    "who gave a {object} as a birthday gift",
    "{name} {surname} {topic}",
    "where does the {topic} group meet",
    "how does {name} feel about {topic}",
    "{food} at the {place} in {town} with {name}",
    "what {animal} did they adopt from the shelter",
    "trip to {town} in {month} for {activity}",
    "{adj} {object} found at the {place}",
    "how many hours to fix the {object}",
]


@dataclass(frozen=True)
class Vocabulary:
    """Word lists for synthetic turns and queries, with generated surnames and towns."""

    surnames: tuple[str, ...]
    towns: tuple[str, ...]
    speakers: tuple[str, ...]

    @property
    def size(self) -> int:
        """Number of distinct words the generator can draw from."""
        lists: list[Sequence[str]] = [
            FIRST_NAMES, PLACES, ACTIVITIES, OBJECTS, ADJECTIVES, ANIMALS, FOODS, FEELINGS,
            TOPICS, WEEKDAYS, MONTHS, RELATIVE, self.surnames, self.towns,
        ]  # fmt: skip
        return len({w for words in lists for w in words})


def _coined(rng: random.Random, count: int, taken: set[str]) -> tuple[str, ...]:
    out: list[str] = []
    while len(out) < count:
        word = "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 3))).capitalize()
        if word not in taken:
            taken.add(word)
            out.append(word)
    return tuple(out)


def build_vocabulary(seed: int) -> Vocabulary:
    """Return the deterministic vocabulary for ``seed`` (about 3,000 distinct words).

    Args:
        seed: Seed of the random generator that coins surnames and town names.

    Returns:
        The vocabulary; the first 8 first names are the speakers.
    """
    rng = random.Random(seed)
    taken = {w.capitalize() for w in FIRST_NAMES + PLACES + ACTIVITIES + OBJECTS}
    surnames = _coined(rng, 1500, taken)
    towns = _coined(rng, 800, taken)
    return Vocabulary(surnames=surnames, towns=towns, speakers=tuple(FIRST_NAMES[:8]))


def _fill(template: str, rng: random.Random, vocab: Vocabulary) -> str:
    slots = {
        "name": rng.choice(FIRST_NAMES),
        "name2": rng.choice(FIRST_NAMES),
        "surname": rng.choice(vocab.surnames),
        "town": rng.choice(vocab.towns),
        "place": rng.choice(PLACES),
        "place2": rng.choice(PLACES),
        "activity": rng.choice(ACTIVITIES),
        "activity2": rng.choice(ACTIVITIES),
        "object": rng.choice(OBJECTS),
        "adj": rng.choice(ADJECTIVES),
        "animal": rng.choice(ANIMALS),
        "food": rng.choice(FOODS),
        "feeling": rng.choice(FEELINGS),
        "topic": rng.choice(TOPICS),
        "weekday": rng.choice(WEEKDAYS),
        "month": rng.choice(MONTHS),
        "relative": rng.choice(RELATIVE).replace("-", " "),
        "number": str(rng.randint(2, 90)),
    }
    return template.format(**slots).replace("-", " ")


def make_sentence(rng: random.Random, vocab: Vocabulary) -> str:
    """Return one synthetic turn of 8 to 40 words built from template sentences.

    Args:
        rng: The random generator (advanced in place).
        vocab: Words to fill the templates with.

    Returns:
        The turn text.
    """
    target = rng.randint(8, 40)
    words: list[str] = []
    while len(words) < target:
        words.extend(_fill(rng.choice(SENTENCES), rng, vocab).split())
    if len(words) > 40:
        words = words[:40]
        words[-1] = words[-1].rstrip(",.!?") + "."
    return " ".join(words)


def make_query(rng: random.Random, vocab: Vocabulary) -> str:
    """Return one query of 3 to 12 words: a question template or a bag of keywords.

    Args:
        rng: The random generator (advanced in place).
        vocab: Words to fill the templates with.

    Returns:
        The query text.
    """
    target = rng.randint(3, 12)
    if rng.random() < 0.5:
        words = _fill(rng.choice(QUERIES), rng, vocab).split()
    else:
        words = []
    pools: list[Sequence[str]] = [
        FIRST_NAMES, vocab.towns, PLACES, ACTIVITIES, OBJECTS, ADJECTIVES, FOODS, TOPICS, ANIMALS,
    ]  # fmt: skip
    while len(words) < target:
        words.append(rng.choice(rng.choice(pools)).replace("-", " "))
    return " ".join(words[:12])


def generate_turns(size: int, seed: int, vocab: Vocabulary) -> Iterator[Any]:
    """Yield ``size`` deterministic ``RawTurn`` records, session by session.

    Sessions of 10 to 60 turns alternate between two of the speakers and start at a
    random time within ``SPAN_DAYS`` of ``EPOCH``; turns are 20 s to 4 min apart.

    Args:
        size: How many turns to yield.
        seed: Seed of the random generator.
        vocab: Words and speakers to draw from.

    Yields:
        ``RawTurn`` records of namespace ``NAMESPACE``.
    """
    from lamina.records import RawTurn

    rng = random.Random(seed)
    made = 0
    session = 0
    while made < size:
        pair = rng.sample(vocab.speakers, 2)
        start = EPOCH + timedelta(seconds=rng.uniform(0, SPAN_DAYS * 86_400))
        session_id = f"session-{session:06d}"
        at = start
        for turn_index in range(min(rng.randint(10, 60), size - made)):
            caption = f"a photo of a {rng.choice(ADJECTIVES)} {rng.choice(OBJECTS)}"
            yield RawTurn(
                namespace=NAMESPACE,
                text=make_sentence(rng, vocab),
                speaker=pair[turn_index % 2],
                session_id=session_id,
                turn_index=turn_index,
                occurred_at=at,
                recorded_at=at + timedelta(seconds=1),
                media_caption=caption if rng.random() < 0.03 else None,
                metadata={"source": "synthetic"},
            )
            at += timedelta(seconds=rng.randint(20, 240))
            made += 1
        session += 1


def _batches(items: Iterator[Any], size: int) -> Iterator[list[Any]]:
    batch: list[Any] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


# ------------------------------------------------------------------------ measurement
@dataclass(frozen=True, kw_only=True)
class Settings:
    """What one worker measures."""

    size: int
    """Number of synthetic turns."""
    batch_size: int = DEFAULT_BATCH
    """Turns per ``store.add`` call."""
    queries: int = DEFAULT_QUERIES
    """Queries per scenario (at most)."""
    budget_s: float = DEFAULT_BUDGET_S
    """Wall-clock budget per scenario; a scenario stops early once it is spent."""
    min_queries: int = DEFAULT_MIN_QUERIES
    """Queries a scenario runs even past its budget."""
    seed: int = DEFAULT_SEED
    """Seed of every generator."""


@dataclass
class Stopwatch:
    """Accumulates the wall time and call count of one wrapped method."""

    seconds: float = 0.0
    calls: int = 0

    def reset(self) -> None:
        """Zero the counters."""
        self.seconds, self.calls = 0.0, 0


@dataclass
class Probes:
    """Stopwatches installed on the store's collaborators (instance attributes only)."""

    watches: dict[str, Stopwatch] = field(default_factory=dict)

    def wrap(self, name: str, obj: Any, method: str) -> bool:
        """Time every call of ``obj.method`` under ``name``; return False if it is absent."""
        original = getattr(obj, method, None)
        if obj is None or not callable(original):
            return False
        watch = self.watches.setdefault(name, Stopwatch())

        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                watch.seconds += time.perf_counter() - start
                watch.calls += 1

        setattr(obj, method, timed)
        return True

    def reset(self) -> None:
        """Zero every stopwatch."""
        for watch in self.watches.values():
            watch.reset()

    def seconds(self, name: str) -> float | None:
        """Return the accumulated seconds of ``name`` (None if it was never installed)."""
        watch = self.watches.get(name)
        return watch.seconds if watch else None


def latency_stats(samples_s: Sequence[float]) -> dict[str, float]:
    """Summarise latencies given in seconds as milliseconds.

    Args:
        samples_s: One wall time per call, in seconds.

    Returns:
        ``n``, ``p50_ms``, ``p95_ms``, ``p99_ms``, ``mean_ms`` and ``max_ms``.
    """
    ms = np.asarray(samples_s, dtype=np.float64) * 1000.0
    return {
        "n": int(ms.size),
        "p50_ms": float(np.percentile(ms, 50)),
        "p95_ms": float(np.percentile(ms, 95)),
        "p99_ms": float(np.percentile(ms, 99)),
        "mean_ms": float(ms.mean()),
        "max_ms": float(ms.max()),
    }


def rss_mib() -> dict[str, float]:
    """Return the current and peak resident set size of this process in MiB."""
    current = 0.0
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                current = int(line.split()[1]) / 1024
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    return {"rss_mib": round(current, 1), "peak_rss_mib": round(peak, 1)}


def dir_mib(path: Path) -> float:
    """Return the total size of the files under ``path`` in MiB."""
    total = sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return round(total / 2**20, 1)


def _log(message: str) -> None:
    print(f"[scale] {message}", file=sys.stderr, flush=True)


def _error(e: BaseException) -> str:
    return f"{type(e).__name__}: {str(e)[:300]}"


def _raw_collection(store: Any) -> Any:
    """The store's Chroma collection of raw turns (private; None if it moved)."""
    from lamina.records import Granularity

    collections = getattr(store, "_collections", None)
    return collections.get(Granularity.RAW) if isinstance(collections, dict) else None


# ---------------------------------------------------------------------------- phases
def ingest(store: Any, settings: Settings, vocab: Vocabulary) -> dict[str, Any]:
    """Add ``settings.size`` synthetic turns in batches, timing only the ``store.add`` calls.

    The BM25 mirror of the namespace is created (empty) first, so ``add`` updates it as
    in a long-running process.

    Args:
        store: An empty ``ChromaMemoryStore``.
        settings: Size, batch size and seed.
        vocab: Vocabulary of the generator.

    Returns:
        Wall and CPU throughput, and the time split (seconds) of embedding, Chroma
        upsert, BM25 update and the rest (validation, index text, metadata encoding).
    """
    from lamina.records import Granularity

    size = settings.size
    index = store.lexical_index(Granularity.RAW, NAMESPACE)
    probes = Probes()
    probes.wrap("embed", store.embeddings, "embed_documents")
    probes.wrap("chroma", _raw_collection(store), "upsert")
    probes.wrap("bm25", index, "upsert")
    added, elapsed, cpu, next_report = 0, 0.0, 0.0, time.perf_counter() + 30
    for batch in _batches(generate_turns(size, settings.seed, vocab), settings.batch_size):
        start, start_cpu = time.perf_counter(), time.process_time()
        store.add(NAMESPACE, batch)
        elapsed += time.perf_counter() - start
        cpu += time.process_time() - start_cpu
        added += len(batch)
        if time.perf_counter() >= next_report:
            rate = added / elapsed
            eta = (size - added) / rate
            _log(f"  ingest {added:,}/{size:,} at {rate:.0f} turns/s, ETA {eta:.0f} s")
            next_report = time.perf_counter() + 30
    split: dict[str, float | None] = {n: probes.seconds(n) for n in ("embed", "chroma", "bm25")}
    split["other"] = max(0.0, elapsed - sum(v for v in split.values() if v is not None))
    embed = split["embed"]
    return {
        "turns": added,
        "batch_size": settings.batch_size,
        "seconds": elapsed,
        "turns_per_s": added / elapsed,
        "cpu_seconds": cpu,
        "turns_per_cpu_s": added / cpu,
        "split_s": split,
        "split_pct": {k: None if v is None else 100.0 * v / elapsed for k, v in split.items()},
        "embed_turns_per_s": added / embed if embed else None,
        "without_embed_turns_per_s": added / (elapsed - embed) if embed else None,
    }


def _scenarios(vocab: Vocabulary, rng: random.Random, n: int) -> dict[str, list[dict[str, Any]]]:
    from lamina.stores import TimeWindow

    def window() -> Any:
        after = EPOCH + timedelta(days=rng.uniform(0, SPAN_DAYS - WINDOW_DAYS))
        return TimeWindow(after=after, before=after + timedelta(days=WINDOW_DAYS))

    return {
        "hybrid": [{"mode": "hybrid"} for _ in range(n)],
        "dense": [{"mode": "dense"} for _ in range(n)],
        "bm25": [{"mode": "bm25"} for _ in range(n)],
        "hybrid+window": [{"mode": "hybrid", "window": window()} for _ in range(n)],
        "hybrid+speaker": [
            {"mode": "hybrid", "where": {"speaker": rng.choice(vocab.speakers)}} for _ in range(n)
        ],
    }


def _timed_search(store: Any, query: str, **kwargs: Any) -> tuple[float | None, str | None]:
    """Return (milliseconds, None) for one search, or (None, error) if it raised."""
    from lamina.records import Granularity

    start = time.perf_counter()
    try:
        store.search(query, Granularity.RAW, NAMESPACE, k=K, **kwargs)
    except Exception as e:  # reported, not fatal: the other figures are still useful
        return None, _error(e)
    return 1000 * (time.perf_counter() - start), None


def cold_start(store: Any, query: str) -> dict[str, Any]:
    """Time the first dense query after ingest, then the BM25 mirror's cold build.

    The mirror kept in step during ingest is dropped (``refresh_lexical``) and rebuilt
    from Chroma, as after a restart. If the rebuild fails, the error is recorded and the
    ingest-time mirror is put back, so query latency can still be measured.

    Args:
        store: The store after ingest.
        query: A query for the first dense and first hybrid search.

    Returns:
        ``first_dense_query_ms``, ``bm25_cold_build_s``, ``first_hybrid_query_ms`` and
        ``errors`` (a list of messages; empty when all went well).
    """
    from lamina.records import Granularity

    out: dict[str, Any] = {"errors": []}
    out["first_dense_query_ms"], err = _timed_search(store, query, mode="dense")
    if err:
        out["errors"].append(f"first dense query: {err}")
    kept = store.lexical_index(Granularity.RAW, NAMESPACE)
    store.refresh_lexical()
    start = time.perf_counter()
    try:
        store.lexical_index(Granularity.RAW, NAMESPACE)
        out["bm25_cold_build_s"] = time.perf_counter() - start
    except Exception as e:
        out["bm25_cold_build_s"] = None
        message = f"BM25 cold build failed after {time.perf_counter() - start:.1f} s: {_error(e)}"
        lexical = getattr(store, "_lexical", None)
        if isinstance(lexical, dict):
            lexical[(Granularity.RAW, NAMESPACE)] = kept
            message += " (queries then ran on the BM25 mirror that add() kept in step)"
        out["errors"].append(message)
    out["first_hybrid_query_ms"], err = _timed_search(store, query, mode="hybrid")
    if err:
        out["errors"].append(f"first hybrid query: {err}")
    return out


def _run_scenario(
    store: Any, queries: list[str], kwargs_list: list[dict[str, Any]], settings: Settings
) -> dict[str, Any]:
    """Time the queries of one scenario until done or past its budget."""
    from lamina.records import Granularity

    samples: list[float] = []
    hits = 0
    cpu = time.process_time()
    deadline = time.perf_counter() + settings.budget_s
    for i, (q, kwargs) in enumerate(zip(queries, kwargs_list, strict=True)):
        if i >= settings.min_queries and time.perf_counter() > deadline:
            break
        start = time.perf_counter()
        try:
            hits += len(store.search(q, Granularity.RAW, NAMESPACE, k=K, **kwargs))
        except Exception as e:
            return {"error": _error(e)}
        samples.append(time.perf_counter() - start)
    n = len(samples)
    return {
        **latency_stats(samples),
        "cpu_mean_ms": 1000 * (time.process_time() - cpu) / n,
        "mean_hits": hits / n,
        "budget_cut": n < len(queries),
    }


def query_latency(
    store: Any, queries: list[str], vocab: Vocabulary, settings: Settings
) -> tuple[dict[str, dict[str, Any]], dict[str, float | None]]:
    """Run the queries in each scenario and time them; break hybrid time down by stage.

    Args:
        store: The store after ingest and cold start.
        queries: Query texts (each scenario runs them in order, within its budget).
        vocab: Vocabulary (for the speakers of the ``where`` scenario).
        settings: Budget, minimum query count and seed.

    Returns:
        Latency stats (or ``{"error": ...}``) per scenario, and the mean milliseconds
        per hybrid query spent in query embedding, Chroma query, Chroma get (records
        only BM25 found), BM25 search and the rest (record decoding, fusion, filters).
    """
    from lamina.records import Granularity

    for q in queries[:WARMUP_QUERIES]:
        if _timed_search(store, q, mode="hybrid")[1]:
            break  # the hybrid scenario will report the error
    collection = _raw_collection(store)
    probes = Probes()
    probes.wrap("embed_query", store.embeddings, "embed_query")
    probes.wrap("chroma_query", collection, "query")
    probes.wrap("chroma_get", collection, "get")
    probes.wrap("bm25_search", store.lexical_index(Granularity.RAW, NAMESPACE), "search")
    stats: dict[str, dict[str, Any]] = {}
    breakdown: dict[str, float | None] = {}
    scenarios = _scenarios(vocab, random.Random(settings.seed + 1), len(queries))
    for name, kwargs_list in scenarios.items():
        probes.reset()
        stats[name] = _run_scenario(store, queries, kwargs_list, settings)
        if name == "hybrid" and "error" not in stats[name]:
            n = stats[name]["n"]
            parts = ("embed_query", "chroma_query", "chroma_get", "bm25_search")
            breakdown = {p: _per_query_ms(probes.seconds(p), n) for p in parts}
            known = sum(v for v in breakdown.values() if v is not None)
            breakdown["other"] = stats[name]["mean_ms"] - known
        _log(f"  {name}: {_latency_cell(stats[name])}")
    return stats, breakdown


def _per_query_ms(seconds: float | None, n: int) -> float | None:
    return None if seconds is None else 1000 * seconds / n


def run_size(settings: Settings) -> dict[str, Any]:
    """Measure one size in this process on a fresh persistent store in a temporary dir.

    Args:
        settings: What to measure.

    Returns:
        Every figure for this size (JSON-serialisable); ``errors`` lists what failed.
    """
    from lamina.embedders import MiniLMEmbeddings
    from lamina.stores import ChromaMemoryStore

    size = settings.size
    vocab = build_vocabulary(settings.seed)
    qrng = random.Random(settings.seed + 2)
    queries = [make_query(qrng, vocab) for _ in range(settings.queries)]
    tmp = Path(tempfile.mkdtemp(prefix="lamina-scale-"))
    try:
        store = ChromaMemoryStore.persistent(tmp / "chroma", embeddings=MiniLMEmbeddings())
        store.embeddings.embed_query("warm up the model")  # load ONNX outside the timings
        baseline = rss_mib()
        load_start = os.getloadavg()[0]
        _log(f"size {size:,}: ingesting in batches of {settings.batch_size} into {tmp}")
        ingest_stats = ingest(store, settings, vocab)
        after_ingest = rss_mib()
        _log(
            f"size {size:,}: ingest {ingest_stats['seconds']:.1f} s "
            f"({ingest_stats['turns_per_s']:.1f} turns/s); cold start"
        )
        cold = cold_start(store, queries[0])
        for message in cold["errors"]:
            _log(f"  ERROR {message}")
        latency, breakdown = query_latency(store, queries, vocab, settings)
        errors = list(cold.pop("errors"))
        errors += [f"{name}: {s['error']}" for name, s in latency.items() if "error" in s]
        return {
            "size": size,
            "vocabulary_words": vocab.size,
            "ingest": ingest_stats,
            "cold": cold,
            "queries": latency,
            "hybrid_breakdown_mean_ms": breakdown,
            "memory": {"after_model_load": baseline, "after_ingest": after_ingest},
            "peak_rss_mib": rss_mib()["peak_rss_mib"],
            "disk_mib": dir_mib(tmp),
            "loadavg_1min": {"start": load_start, "end": os.getloadavg()[0]},
            "errors": errors,
        }
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# ------------------------------------------------------------------------- reporting
SCENARIO_ORDER = ("hybrid", "dense", "bm25", "hybrid+window", "hybrid+speaker")
NA = "n/a"


def _dig(data: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(data, dict) or data.get(key) is None:
            return None
        data = data[key]
    return data


def _num(value: Any, spec: str) -> str:
    return NA if value is None else format(value, spec)


def _latency_cell(s: dict[str, Any]) -> str:
    if "error" in s:
        return "ERROR"
    cut = "*" if s.get("budget_cut") else ""
    return (
        f"{s['p50_ms']:.1f} / {s['p95_ms']:.1f} / {s['mean_ms']:.1f} "
        f"({s['cpu_mean_ms']:.1f}) n={s['n']}{cut}"
    )


def _row(cells: Sequence[str], widths: Sequence[int]) -> str:
    pairs = enumerate(zip(cells, widths, strict=True))
    return "  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in pairs)


def _table(title: str, header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = [title, _row(header, widths), _row(["-" * w for w in widths], widths)]
    lines += [_row(r, widths) for r in rows]
    return "\n".join(lines)


def _ingest_table(results: Sequence[dict[str, Any]]) -> str:
    rows = []
    for r in results:
        i = r.get("ingest") or {}
        pct = i.get("split_pct") or {}
        rows.append([
            f"{r['size']:,}", _num(i.get("batch_size"), "d"), _num(i.get("seconds"), ".1f"),
            _num(i.get("turns_per_s"), ".1f"), _num(i.get("turns_per_cpu_s"), ".1f"),
            _num(i.get("embed_turns_per_s"), ".1f"),
            _num(i.get("without_embed_turns_per_s"), ".0f"),
            *(_num(pct.get(k), ".1f") for k in ("embed", "chroma", "bm25", "other")),
        ])  # fmt: skip
    return _table(
        "Ingest with real embedding (store.add into persistent Chroma, BM25 mirror live)",
        ["turns", "batch", "total s", "turns/s", "turns/cpu-s", "embed/s", "rest/s", "embed %",
         "chroma %", "bm25 %", "other %"],
        rows,
    )  # fmt: skip


def _latency_table(results: Sequence[dict[str, Any]], sizes: list[str]) -> str:
    rows = []
    for name in SCENARIO_ORDER:
        cells = [name]
        for r in results:
            s = _dig(r, "queries", name)
            cells.append(NA if s is None else _latency_cell(s))
        rows.append(cells)
    return _table(
        f"Query latency, k={K}: p50 / p95 / mean wall ms (mean CPU ms), n queries "
        "(* = stopped by --budget-s)",
        ["scenario", *sizes],
        rows,
    )


def _misc_table(results: Sequence[dict[str, Any]], sizes: list[str]) -> str:
    def line(label: str, spec: str, *keys: str) -> list[str]:
        return [label, *(_num(_dig(r, *keys), spec) for r in results)]

    rows = [
        line("BM25 cold build (s)", ".2f", "cold", "bm25_cold_build_s"),
        line("first hybrid after build (ms)", ".1f", "cold", "first_hybrid_query_ms"),
        line("first dense after ingest (ms)", ".1f", "cold", "first_dense_query_ms"),
        line("RSS after model load (MiB)", ".0f", "memory", "after_model_load", "rss_mib"),
        line("RSS after ingest (MiB)", ".0f", "memory", "after_ingest", "rss_mib"),
        line("peak RSS (MiB)", ".0f", "peak_rss_mib"),
        line("on-disk size (MiB)", ".0f", "disk_mib"),
        line("worker wall time (s)", ".0f", "worker_wall_s"),
        line("load avg 1 min at start", ".1f", "loadavg_1min", "start"),
        line("load avg 1 min at end", ".1f", "loadavg_1min", "end"),
    ]
    return _table("Cold start, memory and disk", ["", *sizes], rows)


def format_report(results: Sequence[dict[str, Any]]) -> str:
    """Return the human-readable tables for a list of per-size results.

    Args:
        results: What :func:`run_size` returned (plus ``worker_wall_s``), one per size.

    Returns:
        The report: tables separated by blank lines, then the errors, if any.
    """
    sizes = [f"{r['size']:,}" for r in results]
    parts = ("embed_query", "chroma_query", "chroma_get", "bm25_search", "other")
    breakdown = _table(
        "Hybrid query, mean ms by stage",
        ["stage", *sizes],
        [[p, *(_num(_dig(r, "hybrid_breakdown_mean_ms", p), ".2f") for r in results)]
         for p in parts],
    )  # fmt: skip
    blocks = [
        _ingest_table(results),
        _latency_table(results, sizes),
        breakdown,
        _misc_table(results, sizes),
    ]
    errors = [f"  {r['size']:,}: {e}" for r in results for e in r.get("errors", [])]
    if errors:
        blocks.append("\n".join(["ERRORS", *errors]))
    return "\n\n".join(blocks)


def environment() -> dict[str, Any]:
    """Return versions and machine facts that the figures depend on."""
    from importlib.metadata import version

    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "chromadb": version("chromadb"),
        "onnxruntime": version("onnxruntime"),
        "numpy": version("numpy"),
        "rank_bm25": version("rank-bm25"),
    }


# ----------------------------------------------------------------------------- driver
def _spawn(settings: Settings) -> dict[str, Any]:
    """Run one size in a child process; return its result (with ``errors`` on failure)."""
    with tempfile.TemporaryDirectory(prefix="lamina-scale-out-") as out_dir:
        out = Path(out_dir) / "result.json"
        cmd = [
            sys.executable, str(Path(__file__).resolve()), WORKER_FLAG, str(settings.size),
            "--batch-size", str(settings.batch_size), "--queries", str(settings.queries),
            "--budget-s", str(settings.budget_s), "--min-queries", str(settings.min_queries),
            "--seed", str(settings.seed), "--_out", str(out),
        ]  # fmt: skip
        start = time.perf_counter()
        env = {**os.environ, "ANONYMIZED_TELEMETRY": "False"}
        child = subprocess.Popen(cmd, env=env)
        try:
            returncode = child.wait()
        finally:
            if child.poll() is None:  # we are being stopped: let the worker clean up
                child.terminate()
                child.wait(timeout=60)
        if returncode != 0 or not out.exists():
            result: dict[str, Any] = {
                "size": settings.size,
                "errors": [f"worker exited with status {returncode}"],
            }
        else:
            result = json.loads(out.read_text(encoding="utf-8"))
        result["worker_wall_s"] = time.perf_counter() - start
        return result


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Parse the command line.

    Args:
        argv: Arguments without the program name (default ``sys.argv[1:]``).

    Returns:
        The parsed options.
    """
    parser = argparse.ArgumentParser(
        description="Scale benchmark of ChromaMemoryStore (persistent Chroma, real offline "
        "MiniLM embeddings): ingest throughput with its time split, BM25 cold build, "
        "query latency per search mode and filter, and peak RSS. Each size runs in its "
        "own subprocess in a temporary directory that is removed afterwards. No timing "
        "is asserted; the exit status is 1 if anything failed (errors are listed at the "
        "end of the report and in the JSON), else 0.",
    )
    parser.add_argument(
        "--sizes", type=int, nargs="+", default=list(DEFAULT_SIZES), metavar="N",
        help="numbers of synthetic raw turns, one fresh store each (default: %(default)s)",
    )  # fmt: skip
    parser.add_argument(
        "--batch-size", type=int, default=DEFAULT_BATCH, metavar="N",
        help="turns per store.add call (default: %(default)s, the best of 64/256/1024)",
    )  # fmt: skip
    parser.add_argument(
        "--queries", type=int, default=DEFAULT_QUERIES, metavar="N",
        help=f"queries per scenario (default: %(default)s, after {WARMUP_QUERIES} warm-up "
        "hybrid queries)",
    )  # fmt: skip
    parser.add_argument(
        "--budget-s", type=float, default=DEFAULT_BUDGET_S, metavar="S",
        help="wall-clock budget per scenario: once spent, the scenario stops after "
        "--min-queries and reports how many ran (default: %(default)s)",
    )  # fmt: skip
    parser.add_argument(
        "--min-queries", type=int, default=DEFAULT_MIN_QUERIES, metavar="N",
        help="queries each scenario runs whatever the budget (default: %(default)s)",
    )  # fmt: skip
    parser.add_argument(
        "--seed", type=int, default=DEFAULT_SEED,
        help="seed of all generators (default: %(default)s)",
    )  # fmt: skip
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write all figures here")
    parser.add_argument(WORKER_FLAG, type=int, metavar="N", help=argparse.SUPPRESS)
    parser.add_argument("--_out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if min(*args.sizes, args.batch_size, args.queries, args.min_queries) < 1:
        parser.error("--sizes, --batch-size, --queries and --min-queries must be positive")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark (or, with the internal worker flag, one size) and report it.

    Args:
        argv: Arguments without the program name (default ``sys.argv[1:]``).

    Returns:
        The process exit status: 1 if any size recorded an error, else 0.
    """
    args = parse_args(argv)
    common = {
        "batch_size": args.batch_size, "queries": args.queries, "budget_s": args.budget_s,
        "min_queries": args.min_queries, "seed": args.seed,
    }  # fmt: skip
    signal.signal(signal.SIGTERM, _stop)  # so `finally` blocks remove temporary dirs
    if args._worker is not None:
        result = run_size(Settings(size=args._worker, **common))
        args._out.write_text(json.dumps(result), encoding="utf-8")
        return 0
    results: list[dict[str, Any]] = []
    env = environment()
    try:
        for size in args.sizes:
            results.append(_spawn(Settings(size=size, **common)))
            _log(f"size {size:,} done in {results[-1]['worker_wall_s']:.0f} s")
            _write_json(args.json, common, args.sizes, env, results)  # keep partial results
    except (KeyboardInterrupt, SystemExit):
        _log("stopped; reporting the sizes that finished")
        if not results:
            return 1
        results.append({"size": size, "errors": ["stopped before this size finished"]})
    print(
        f"lamina scale benchmark: namespace={NAMESPACE!r}, seed={args.seed}, "
        f"{env['cpus']} CPUs, chromadb {env['chromadb']}, onnxruntime {env['onnxruntime']}\n"
    )
    print(format_report(results))
    if _write_json(args.json, common, args.sizes, env, results):
        print(f"\nwrote {args.json}")
    return 1 if any(r.get("errors") for r in results) else 0


def _stop(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)


def _write_json(
    path: Path | None,
    common: dict[str, Any],
    sizes: list[int],
    env: dict[str, Any],
    results: list[dict[str, Any]],
) -> bool:
    if path is None:
        return False
    payload = {"config": {**common, "sizes": sizes}, "environment": env, "results": results}
    path.write_text(json.dumps(payload, indent=2), encoding="utf-8")
    return True


if __name__ == "__main__":
    sys.exit(main())
