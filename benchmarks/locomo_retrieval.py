"""LoCoMo retrieval benchmark for lamina's raw-turn store (no LLM anywhere).

Every LoCoMo conversation is ingested as :class:`~lamina.records.RawTurn` records into its
own namespace of one ephemeral :class:`~lamina.stores.ChromaMemoryStore` with the real
offline embedder. Each category 1-4 question with resolvable evidence is then asked in
three modes (``bm25``, ``dense``, ``hybrid``) and scored:

* **turn-recall@k** (``T@k``): ``|evidence turns & top-k turns| / |evidence turns|``,
  averaged over questions, from one ``search(k=20)`` call per question;
* **session-recall@k** (``S@k``): ``|evidence sessions & sessions of the top-k turns| /
  |evidence sessions|``, from the same call. This is the definition that reproduces the
  baseline figures reported in the issue;
* **distinct-session-recall@k** (``Sd@k``): a second ``search(k=--session-depth)`` call gives
  a ranked turn list, each turn is mapped to its session, repeats are dropped keeping the
  first occurrence, and the first k distinct sessions are scored as above. It is never
  lower than ``S@k``.

Latency is the wall time of the ``k=20`` search; the ingest rate includes embedding,
the Chroma writes and building the BM25 mirror.

Per category, S@5 and T@10 are also printed with percentile-bootstrap 95% confidence
intervals over questions (:mod:`lamina_bench.evaluation.bootstrap`), so a change smaller than
the interval is not read as progress; ``--json`` also keeps each question's S@5 and T@10
(``per_question``), so two runs can be compared question by question
(``bootstrap_mean`` of the differences). ``--embedder`` picks an offline embedder from
:mod:`lamina.embedders.choice` (default ``minilm``, the library default);
``--rerank-model-dir`` reranks the fused top-N of every search with an ONNX cross-encoder
(:mod:`lamina.stores.rerank`; off by default).

Usage::

    .venv/bin/python benchmarks/locomo_retrieval.py --preset tuned --json /tmp/tuned.json
    .venv/bin/python benchmarks/locomo_retrieval.py --preset naive --conversations 2
    .venv/bin/python benchmarks/locomo_retrieval.py --embedder static --conversations 1

Any preset field can be overridden from the command line (see ``--help``).
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import re
import statistics
import sys
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

import numpy as np
from chromadb.api import ClientAPI
from langchain_core.embeddings import Embeddings

from lamina.embedders.choice import DEFAULT_EMBEDDER, EMBEDDERS, make_embeddings
from lamina.embedders.identity import embedding_name
from lamina.records import RawTurn
from lamina.stores import Analyzer, BM25Params, ChromaMemoryStore, FusionConfig, IndexTextPolicy
from lamina.stores.base import MemoryStore, SearchMode
from lamina.stores.lexical import ENGLISH_STOP_WORDS
from lamina.stores.rerank import RerankConfig, RerankingStore
from lamina_bench.datasets.locomo import CATEGORIES as ALL_CATEGORIES
from lamina_bench.datasets.locomo import Conversation, Question, Turn, load_locomo
from lamina_bench.evaluation.bootstrap import bootstrap_mean

DEFAULT_DATA = Path(__file__).resolve().parent.parent.parent / "shared/data/locomo/locomo10.json"
MODES: tuple[str, ...] = ("bm25", "dense", "hybrid")
TURN_CUTOFFS: tuple[int, ...] = (1, 3, 5, 10, 20)
SESSION_CUTOFFS: tuple[int, ...] = (1, 3, 5, 10)
CATEGORIES = {k: v for k, v in ALL_CATEGORIES.items() if k != 5}  # 5 has no evidence
ContextMode = Literal["none", "prev", "next", "both"]
QueryTransform = Literal["none", "drop-participants"]
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")


# ------------------------------------------------------------------------ config
@dataclass(frozen=True, kw_only=True)
class RetrievalConfig:
    """Everything that shapes retrieval: index text, analyzer, BM25, fusion, queries."""

    speaker: bool = True
    """Prefix each turn's index text with ``"<speaker>: "``."""
    date: bool = False
    """Append the session date to the index text."""
    caption: bool = True
    """Append a shared image's caption."""
    context: ContextMode = "none"
    """Which neighbouring turns of the same session go into ``RawTurn.context``."""
    context_speaker: bool = True
    """Prefix each neighbour in the context with its speaker."""
    stem: bool = False
    """Snowball-stem BM25 terms."""
    stop_words: bool = False
    """Drop English stop words from BM25 terms."""
    k1: float = 1.5
    """BM25 term-frequency saturation."""
    b: float = 0.75
    """BM25 length normalisation."""
    rrf_k: float = 60.0
    """RRF rank offset."""
    weights: tuple[tuple[str, float], ...] = (("dense", 1.0), ("bm25", 1.0))
    """RRF channel weights."""
    candidates: int = 50
    """Results each channel contributes before fusion."""
    query: QueryTransform = "none"
    """Query-side transformation (see :func:`transform_query`)."""

    def index_policy(self) -> IndexTextPolicy:
        """Return the store's index-text policy for this config."""
        return IndexTextPolicy(
            speaker=self.speaker,
            date=self.date,
            caption=self.caption,
            context=self.context != "none",
        )

    def analyzer(self) -> Analyzer:
        """Return the BM25 analyzer for this config."""
        return Analyzer(
            stop_words=ENGLISH_STOP_WORDS if self.stop_words else frozenset(), stem=self.stem
        )

    def fusion(self) -> FusionConfig:
        """Return the RRF settings for this config."""
        return FusionConfig(k=self.rrf_k, weights=dict(self.weights), candidates=self.candidates)

    def bm25(self) -> BM25Params:
        """Return the Okapi parameters for this config."""
        return BM25Params(k1=self.k1, b=self.b)


PRESETS: dict[str, RetrievalConfig] = {
    # The baseline: "speaker: text [image: caption]", lowercase word tokens, RRF k=60.
    "naive": RetrievalConfig(),
    # The session date in the index text, stemming and stop words on the BM25 side,
    # participant names dropped from queries (they prefix every turn, so they only add
    # noise), and a sharper RRF (k=10). See RETRIEVAL_RESULTS.md for the sweep.
    "tuned": RetrievalConfig(
        date=True, stem=True, stop_words=True, query="drop-participants", rrf_k=10.0
    ),
}


# --------------------------------------------------------------------- ingestion
class CachingEmbeddings(Embeddings):
    """An offline embedder (MiniLM unless another is given) with a per-text document cache.

    Document vectors are memoised by embedder and text (optionally persisted to an ``.npz``
    file), so configs that render the same index text are not embedded twice. Only the
    last query vector is kept, so the timed first search of each question always embeds
    its query. The store sees the wrapped embedder's identity.
    """

    def __init__(self, cache_file: Path | None = None, inner: Embeddings | None = None) -> None:
        self.inner = inner if inner is not None else make_embeddings(DEFAULT_EMBEDDER)
        self.identity = embedding_name(self.inner)
        self.cache_file = cache_file
        self.hits = 0
        self.misses = 0
        self._docs: dict[str, np.ndarray] = {}
        self._last_query: tuple[str, list[float]] | None = None
        if cache_file is not None and cache_file.exists():
            with np.load(cache_file) as stored:
                self._docs = dict(zip(stored["keys"].tolist(), stored["vectors"], strict=True))

    def _key(self, text: str) -> str:
        return hashlib.sha256(f"{self.identity}\0{text}".encode()).hexdigest()

    def chroma_function(self) -> Any:
        """The wrapped embedder's chromadb function (so the store records its identity)."""
        function = getattr(self.inner, "chroma_function", None)
        if callable(function):
            return function()
        from lamina.embedders.identity import LangChainEmbeddingFunction

        return LangChainEmbeddingFunction(self.inner)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed documents, reusing cached vectors."""
        keys = [self._key(t) for t in texts]
        todo = sorted(
            {k: t for k, t in zip(keys, texts, strict=True) if k not in self._docs}.items()
        )
        if todo:
            vectors = np.asarray(self.inner.embed_documents([t for _, t in todo]), np.float32)
            self._docs.update((k, v) for (k, _), v in zip(todo, vectors, strict=True))
        self.misses += len(todo)
        self.hits += len(texts) - len(todo)
        return [self._docs[k].tolist() for k in keys]

    def embed_query(self, text: str) -> list[float]:
        """Embed one query; a repeat of the previous query reuses its vector."""
        if self._last_query is None or self._last_query[0] != text:
            self._last_query = (text, self.inner.embed_query(text))
        return self._last_query[1]

    def save(self) -> None:
        """Write the document cache to ``cache_file`` (if one was given)."""
        if self.cache_file is None or not self._docs:
            return
        keys = np.array(list(self._docs))
        np.savez(self.cache_file, keys=keys, vectors=np.stack(list(self._docs.values())))


def neighbour_context(turns: Sequence[Turn], i: int, mode: ContextMode, speaker: bool) -> str:
    """Return the text of turn ``i``'s neighbours within its session, per ``mode``."""
    picks = {"none": (), "prev": (-1,), "next": (1,), "both": (-1, 1)}[mode]
    parts = []
    for offset in picks:
        j = i + offset
        if 0 <= j < len(turns) and turns[j].session_id == turns[i].session_id:
            other = turns[j]
            parts.append(f"{other.speaker}: {other.text}" if speaker else other.text)
    return " ".join(parts)


def to_records(conv: Conversation, config: RetrievalConfig) -> list[RawTurn]:
    """Return the conversation's turns as :class:`RawTurn` records."""
    records = []
    for i, turn in enumerate(conv.turns):
        context = neighbour_context(conv.turns, i, config.context, config.context_speaker)
        records.append(
            RawTurn(
                id=turn.dia_id,
                namespace=conv.namespace,
                text=turn.text,
                speaker=turn.speaker,
                session_id=turn.session_id,
                turn_index=turn.turn_index,
                occurred_at=turn.occurred_at,
                media_caption=turn.caption,
                context=context or None,
            )
        )
    return records


def open_store(
    config: RetrievalConfig,
    embeddings: Embeddings,
    *,
    client: ClientAPI | None = None,
    prefix: str | None = None,
) -> ChromaMemoryStore:
    """Open a store for ``config``: a fresh ephemeral one, or over ``client`` and ``prefix``.

    Opening a second store over the same client and prefix shares the ingested data, so
    analyzer, BM25 and fusion settings can vary without re-ingesting (the index text,
    which the collections record, must stay the same).
    """
    kwargs: dict[str, Any] = {
        "embeddings": embeddings,
        "index_policy": config.index_policy(),
        "fusion": config.fusion(),
        "bm25": config.bm25(),
        "analyzer": config.analyzer(),
        "collection_prefix": prefix or f"locomo_{uuid.uuid4().hex[:12]}",
    }
    if client is None:
        return ChromaMemoryStore.ephemeral(**kwargs)
    return ChromaMemoryStore(client, **kwargs)


def postgres_store(dsn: str, config: RetrievalConfig, embeddings: Embeddings) -> MemoryStore:
    """A PostgresMemoryStore in a fresh schema at ``dsn``, with the preset's index policy.

    Its lexical channel is Postgres full text, so the preset's BM25 and analyzer settings
    do not apply; the fusion settings do.
    """
    from lamina.stores.postgres import PostgresMemoryStore

    return PostgresMemoryStore.connect(
        dsn,
        schema=f"locomo_{uuid.uuid4().hex[:12]}",
        embeddings=embeddings,
        index_policy=config.index_policy(),
        fusion=config.fusion(),
    )


def drop_schema(store: MemoryStore) -> None:
    """Drop the benchmark's schema and close the pool."""
    pool = getattr(store, "pool", None)
    names = getattr(store, "names", None)
    if pool is not None and names is not None:
        with pool.connection() as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{names.schema}" CASCADE')
    close = getattr(store, "close", None)
    if callable(close):
        close()


def ingest(
    store: MemoryStore, conversations: Sequence[Conversation], config: RetrievalConfig
) -> dict[str, float]:
    """Ingest every conversation into its namespace; return turn count, seconds and rate."""
    start = time.perf_counter()
    turns = 0
    for conv in conversations:
        records = to_records(conv, config)
        store.add(conv.namespace, records)
        lexical_index = getattr(store, "lexical_index", None)
        if callable(lexical_index):
            lexical_index("raw", conv.namespace)  # build the BM25 mirror now
        turns += len(records)
    seconds = time.perf_counter() - start
    return {"turns": turns, "seconds": seconds, "turns_per_s": turns / seconds}


# ------------------------------------------------------------------------ queries
def transform_query(query: str, mode: QueryTransform, participants: Sequence[str]) -> str:
    """Apply a generic query-side transformation.

    ``drop-participants`` removes the names of the conversation's participants (which
    every turn is attributed to, so they say little about *which* turn is meant); the
    query is left unchanged if nothing else would remain.
    """
    if mode == "none":
        return query
    names = {n.lower() for p in participants for n in _WORD.findall(p)}
    kept = [w for w in _WORD.findall(query) if re.sub(r"['’]s$", "", w.lower()) not in names]
    return " ".join(kept) if kept else query


# --------------------------------------------------------------------- evaluation
def first_sessions(session_ids: Iterable[str], k: int) -> list[str]:
    """Return the first ``k`` distinct sessions, in order of first occurrence."""
    return list(dict.fromkeys(session_ids))[:k]


def recall(gold: frozenset[str], found: Iterable[str]) -> float:
    """Return ``|gold & found| / |gold|``."""
    return len(gold.intersection(found)) / len(gold)


METRICS: dict[str, tuple[int, ...]] = {
    "turn_recall": TURN_CUTOFFS,
    "session_recall": SESSION_CUTOFFS,
    "distinct_session_recall": SESSION_CUTOFFS,
}
"""Every metric and its cutoffs (see the module docstring for the definitions)."""
CI_METRICS: tuple[tuple[str, int], ...] = (("session_recall", 5), ("turn_recall", 10))
"""The headline metrics printed with bootstrap confidence intervals."""


@dataclass
class ModeResult:
    """Per-question scores of one search mode."""

    scores: dict[str, dict[int, list[float]]] = field(
        default_factory=lambda: {m: {k: [] for k in ks} for m, ks in METRICS.items()}
    )
    categories: list[int] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)

    def add(self, question: Question, turns: Sequence[Any], deep: Sequence[Any]) -> None:
        """Score one question from its top turns and its deeper ranked list of turns."""
        ids = [h.record.id for h in turns]
        top_sessions = [h.record.session_id for h in turns]
        deep_sessions = [h.record.session_id for h in deep]
        for k in TURN_CUTOFFS:
            self.scores["turn_recall"][k].append(recall(question.evidence, ids[:k]))
        for k in SESSION_CUTOFFS:
            self.scores["session_recall"][k].append(recall(question.sessions, top_sessions[:k]))
            self.scores["distinct_session_recall"][k].append(
                recall(question.sessions, first_sessions(deep_sessions, k))
            )
        self.categories.append(question.category)

    def summary(self) -> dict[str, Any]:
        """Return mean recalls, per-category means, their intervals and latency percentiles."""
        out = self._means(None)
        out["latency_ms"] = {
            "p50": 1000 * float(np.percentile(self.latencies, 50)),
            "p95": 1000 * float(np.percentile(self.latencies, 95)),
        }
        out["per_category"] = {str(c): self._means(c) for c in sorted(set(self.categories))}
        out["ci95"] = self._intervals(None)
        for c in sorted(set(self.categories)):
            out["per_category"][str(c)]["ci95"] = self._intervals(c)
        out["per_question"] = {"category": list(self.categories)} | {
            f"{metric}@{k}": list(self.scores[metric][k]) for metric, k in CI_METRICS
        }  # for paired comparisons of two runs (same questions, same order)
        return out

    def _intervals(self, category: int | None) -> dict[str, dict[str, float | int]]:
        """Bootstrap 95% intervals of the headline metrics (:data:`CI_METRICS`)."""
        out = {}
        for metric, k in CI_METRICS:
            values = [
                v
                for v, c in zip(self.scores[metric][k], self.categories, strict=True)
                if category is None or c == category
            ]
            out[f"{metric}@{k}"] = bootstrap_mean(values).as_dict()
        return out

    def _means(self, category: int | None) -> dict[str, Any]:
        mask = [category is None or c == category for c in self.categories]

        def mean(values: list[float]) -> float:
            return statistics.fmean(v for v, m in zip(values, mask, strict=True) if m)

        out: dict[str, Any] = {"questions": sum(mask)}
        for metric, by_k in self.scores.items():
            out[metric] = {str(k): mean(v) for k, v in by_k.items()}
        return out


def evaluate_mode(
    store: MemoryStore,
    conversations: Sequence[Conversation],
    mode: str,
    config: RetrievalConfig,
    session_depth: int,
) -> ModeResult:
    """Ask every question in ``mode`` and score turn- and session-recall."""
    result = ModeResult()
    search_mode = cast(SearchMode, mode)
    for conv in conversations:
        for q in conv.questions:
            query = transform_query(q.text, config.query, conv.speakers)
            start = time.perf_counter()
            hits = store.search(query, "raw", conv.namespace, k=max(TURN_CUTOFFS), mode=search_mode)
            result.latencies.append(time.perf_counter() - start)
            deep = store.search(query, "raw", conv.namespace, k=session_depth, mode=search_mode)
            result.add(q, hits, deep)
    return result


def dataset_summary(conversations: Sequence[Conversation]) -> dict[str, Any]:
    """Return counts of conversations, turns, used and skipped questions."""
    questions = [q for c in conversations for q in c.questions]
    return {
        "conversations": len(conversations),
        "turns": sum(len(c.turns) for c in conversations),
        "questions_used": len(questions),
        "questions_skipped_no_evidence": sum(c.skipped for c in conversations),
        "evidence_ids_dropped": sum(c.dropped_ids for c in conversations),
        "questions_per_category": {
            str(cat): sum(q.category == cat for q in questions) for cat in CATEGORIES
        },
    }


def run_benchmark(
    conversations: Sequence[Conversation],
    config: RetrievalConfig,
    embeddings: Embeddings,
    *,
    modes: Sequence[str] = MODES,
    session_depth: int = 100,
    store: MemoryStore | None = None,
    progress: Callable[[str], None] | None = None,
    wrap: Callable[[MemoryStore], MemoryStore] | None = None,
    open_store_with: Callable[[RetrievalConfig, Embeddings], MemoryStore] | None = None,
) -> dict[str, Any]:
    """Ingest (unless ``store`` already holds the data) and evaluate every mode.

    ``wrap`` (e.g. a :class:`RerankingStore`) is applied to the store for the searches
    only, after the timed ingest.
    """
    report: dict[str, Any] = {
        "config": dataclasses.asdict(config),
        "session_depth": session_depth,
        "data": dataset_summary(conversations),
    }
    if store is None:
        start = time.perf_counter()
        embeddings.embed_query("warm-up")  # load the model outside the timed ingest
        report["model_load_s"] = time.perf_counter() - start
        store = (open_store_with or open_store)(config, embeddings)
        report["ingest"] = ingest(store, conversations, config)
        if isinstance(embeddings, CachingEmbeddings):
            report["ingest"]["embedding_cache_hits"] = embeddings.hits
    if wrap is not None:
        store = wrap(store)
    report["modes"] = {}
    for mode in modes:
        if progress:
            progress(f"evaluating {mode} ...")
        result = evaluate_mode(store, conversations, mode, config, session_depth)
        report["modes"][mode] = result.summary()
    return report


# ----------------------------------------------------------------------- reporting
def format_report(report: dict[str, Any]) -> str:
    """Render a report as plain-text tables."""
    data = report["data"]
    lines = [
        f"LoCoMo: {data['conversations']} conversations, {data['turns']} turns, "
        f"{data['questions_used']} questions (cat 1-4), "
        f"{data['questions_skipped_no_evidence']} skipped (no resolvable evidence), "
        f"{data['evidence_ids_dropped']} evidence ids dropped",
    ]
    ingest_info = report.get("ingest")
    if ingest_info:
        cached = ingest_info.get("embedding_cache_hits", 0)
        note = f" ({cached} embeddings from cache)" if cached else ""
        lines.append(
            f"ingest: {ingest_info['turns']} turns in {ingest_info['seconds']:.1f} s = "
            f"{ingest_info['turns_per_s']:.0f} turns/s incl. embedding{note}"
        )
    lines += ["", f"{'mode':<7} | {_header()} | p50 ms  p95 ms"]
    for mode, res in report["modes"].items():
        lines.append(f"{mode:<7} | {_row(res)} | {_latency(res)}")
    lines += [
        "T@k turn-recall, S@k session-recall (sessions of the top-k turns), "
        "Sd@k distinct-session-recall (first k distinct sessions); latency of a k=20 search",
        "",
        "per category (S@5 / T@10):",
    ]
    cats = sorted({c for res in report["modes"].values() for c in res["per_category"]})
    lines.append(f"{'mode':<7} | " + " | ".join(f"{c} {CATEGORIES[int(c)]:<11}" for c in cats))
    for mode, res in report["modes"].items():
        cells = [
            f"{res['per_category'][c]['session_recall']['5']:.3f} / "
            f"{res['per_category'][c]['turn_recall']['10']:.3f}"
            for c in cats
        ]
        lines.append(f"{mode:<7} | " + " | ".join(f"{cell:<13}" for cell in cells))
    lines += ["", "with bootstrap 95% confidence intervals over questions:"]
    for metric, k in CI_METRICS:
        label = f"{_LABELS[metric]}@{k}"
        header = [f"{'all':<24}"] + [f"{c} {CATEGORIES[int(c)]:<22}" for c in cats]
        lines.append(f"{label:<6}{'mode':<7} | " + " | ".join(header))
        for mode, res in report["modes"].items():
            cells = [_ci(res["ci95"][f"{metric}@{k}"])] + [
                _ci(res["per_category"][c]["ci95"][f"{metric}@{k}"]) for c in cats
            ]
            lines.append(f"{'':<6}{mode:<7} | " + " | ".join(f"{cell:<24}" for cell in cells))
    return "\n".join(lines)


def _ci(row: dict[str, Any]) -> str:
    return f"{row['mean']:.3f} [{row['ci95_low']:.3f}, {row['ci95_high']:.3f}]"


_LABELS = {"turn_recall": "T", "session_recall": "S", "distinct_session_recall": "Sd"}


def _header() -> str:
    return " | ".join(
        " ".join(f"{_LABELS[m] + '@' + str(k):<5}" for k in ks) for m, ks in METRICS.items()
    )


def _row(res: dict[str, Any]) -> str:
    return " | ".join(" ".join(f"{res[m][str(k)]:<5.3f}" for k in ks) for m, ks in METRICS.items())


def _latency(res: dict[str, Any]) -> str:
    return f"{res['latency_ms']['p50']:6.1f}  {res['latency_ms']['p95']:6.1f}"


# -------------------------------------------------------------------------- CLI
def _bool(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in {"1", "true", "yes", "on"}:
        return True
    if lowered in {"0", "false", "no", "off"}:
        return False
    raise argparse.ArgumentTypeError(f"expected true/false, got {text!r}")


def _weights(text: str) -> tuple[tuple[str, float], ...]:
    try:
        pairs = [part.split("=", 1) for part in text.split(",") if part.strip()]
        return tuple((name.strip(), float(value)) for name, value in pairs)
    except ValueError as e:
        raise argparse.ArgumentTypeError(f"expected e.g. dense=1,bm25=1, got {text!r}") from e


_OVERRIDES: dict[str, tuple[Callable[[str], Any], str]] = {
    "speaker": (_bool, "prefix index text with the speaker (true/false)"),
    "date": (_bool, "append the session date to the index text (true/false)"),
    "caption": (_bool, "append image captions (true/false)"),
    "context": (str, "neighbour-turn context: none, prev, next or both"),
    "context_speaker": (_bool, "prefix context turns with their speaker (true/false)"),
    "stem": (_bool, "Snowball-stem BM25 terms (true/false)"),
    "stop_words": (_bool, "drop English stop words in BM25 (true/false)"),
    "k1": (float, "BM25 k1"),
    "b": (float, "BM25 b"),
    "rrf_k": (float, "RRF k"),
    "weights": (_weights, "RRF channel weights, e.g. dense=1,bm25=1"),
    "candidates": (int, "results per channel before fusion"),
    "query": (str, "query transform: none or drop-participants"),
}


def build_parser() -> argparse.ArgumentParser:
    """Return the command-line parser."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="locomo10.json path")
    parser.add_argument("--conversations", type=int, default=None, help="use the first N only")
    parser.add_argument("--preset", choices=sorted(PRESETS), default="tuned")
    parser.add_argument("--modes", default=",".join(MODES), help="comma-separated modes")
    parser.add_argument("--session-depth", type=int, default=100, help="turns ranked per query")
    parser.add_argument("--json", type=Path, default=None, help="write all figures here")
    parser.add_argument(
        "--embed-cache", type=Path, default=None, help="npz file caching document vectors"
    )
    parser.add_argument(
        "--embedder", choices=sorted(EMBEDDERS), default=DEFAULT_EMBEDDER,
        help=f"offline embedder (default {DEFAULT_EMBEDDER}, the library default)",
    )  # fmt: skip
    parser.add_argument(
        "--rerank-model-dir", type=Path, default=None,
        help="rerank each search's fused top-N with the ONNX cross-encoder in this folder",
    )  # fmt: skip
    parser.add_argument("--rerank-top-n", type=int, default=30, help="hits the reranker scores")
    parser.add_argument(
        "--postgres",
        metavar="DSN",
        help="run on a PostgresMemoryStore at DSN (a fresh schema, dropped after) instead of "
        "an ephemeral Chroma; e.g. the DSN `lamina serve-postgres` prints",
    )
    parser.add_argument(
        "--rerank-margin", type=float, default=None,
        help="skip reranking when the fused top-1 leads top-2 by this relative margin",
    )  # fmt: skip
    for name, (kind, text) in _OVERRIDES.items():
        parser.add_argument(f"--{name.replace('_', '-')}", dest=name, type=kind, help=text)
    return parser


def config_from_args(args: argparse.Namespace) -> RetrievalConfig:
    """Return the preset named in ``args`` with any command-line overrides applied."""
    overrides = {n: getattr(args, n) for n in _OVERRIDES if getattr(args, n) is not None}
    config = dataclasses.replace(PRESETS[args.preset], **overrides)
    if config.context not in ("none", "prev", "next", "both"):
        raise SystemExit(f"--context must be none, prev, next or both, got {config.context!r}")
    if config.query not in ("none", "drop-participants"):
        raise SystemExit(f"--query must be none or drop-participants, got {config.query!r}")
    return config


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark from the command line."""
    args = build_parser().parse_args(argv)
    config = config_from_args(args)
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    conversations = load_locomo(args.data, limit=args.conversations)
    embeddings = CachingEmbeddings(args.embed_cache, make_embeddings(args.embedder))
    wrap: Callable[[MemoryStore], MemoryStore] | None = None
    if args.rerank_model_dir is not None:
        from lamina.embedders.cross_encoder import OnnxCrossEncoder

        encoder = OnnxCrossEncoder(args.rerank_model_dir)
        rerank = RerankConfig(top_n=args.rerank_top_n, adaptive_margin=args.rerank_margin)

        def reranking(store: MemoryStore) -> MemoryStore:
            return RerankingStore(store, encoder, rerank)

        wrap = reranking

    def progress(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    progress(f"preset {args.preset}: {config}")
    postgres = None
    if args.postgres:
        postgres = postgres_store(args.postgres, config, embeddings)
    try:
        report = run_benchmark(
            conversations,
            config,
            embeddings,
            modes=modes,
            session_depth=args.session_depth,
            progress=progress,
            wrap=wrap,
            open_store_with=None if postgres is None else (lambda c, e: postgres),
        )
    finally:
        if postgres is not None:
            drop_schema(postgres)
    report["backend"] = "postgres" if postgres is not None else "chroma"
    report["preset"] = args.preset
    report["embedder"] = args.embedder
    if args.rerank_model_dir is not None:
        report["rerank"] = {
            "model_dir": str(args.rerank_model_dir),
            "top_n": args.rerank_top_n,
            "adaptive_margin": args.rerank_margin,
        }
    embeddings.save()
    print(format_report(report))
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
