"""Store calls of one recall round, and its latency, with no LLM (issue 34).

On the long run's questions (the 150 of LoCoMo conv-26 and conv-30 that the header of
``eval-results/locomo-long/journal.jsonl`` chose), over the raw layer only (lamina's raw
writer, no LLM), the recall graph answers each question in retrieval-only mode: one
round, whose one query variant is the question. Counted per question:

* ``search_calls_per_variant``: store searches the round asked (``search``, or
  ``search_many`` where the store has it) per query variant;
* ``query_embeddings_per_question``: ``embed_query`` calls;
* ``change_log_reads_per_question``: ``get`` calls on the store's change-log collection
  (each search brings the mirrors it touches up to date through them);
* ``latency_ms``: the graph's wall time per question, p50 and p95.

Each conversation's first question is asked once before the count, so every mirror is
loaded. The counting wraps the store, its embedder and its change-log collection from
outside, so the script also runs on a tree from before ``search_many``: the ``before``
figures come from such a copy, imported through ``PYTHONPATH``. ``--label`` names the
figures in the JSON file, which keeps those of other labels.

Usage:
    python benchmarks/recall_calls.py --label after --json benchmarks/recall_calls.json
    git worktree add OLD/lamina COMMIT   # the folder must be called lamina
    PYTHONPATH=OLD python benchmarks/recall_calls.py --label before --code COMMIT --json F
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import lamina
from lamina.agents.common.deps import NodeDeps
from lamina.agents.ingest.nodes.raw_writer import build_raw_turns
from lamina.core.context import MemoryContext
from lamina.embedders.choice import DEFAULT_EMBEDDER, make_embeddings
from lamina.graphs.recall import build_recall_graph
from lamina.llm.structured import StructuredCaller
from lamina.stores import ChromaMemoryStore
from lamina.testing import SchemaChatModel
from lamina_bench.datasets.locomo import Conversation
from lamina_bench.evaluation.ingest import stage_namespace
from lamina_bench.evaluation.settings import questions_of_run
from lamina_bench.evaluation.subset import EvalQuestion, load_subset
from lamina_bench.evaluation.transcripts import WordPieceCounter

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared/data/locomo/locomo10.json"
LONG_RUN = ROOT / "eval-results/locomo-long"
SEARCHES = ("search", "search_many")
"""The store methods that search (``search_many`` does not exist before issue 34)."""


class Counts:
    """Calls counted since the last :meth:`reset`."""

    def __init__(self) -> None:
        self.searches = 0
        self.embeddings = 0
        self.log_reads = 0

    def reset(self) -> None:
        """Start counting afresh."""
        self.searches = self.embeddings = self.log_reads = 0


def counted(call: Callable[..., Any], counts: Counts, field: str) -> Callable[..., Any]:
    """``call``, adding one to ``counts.<field>`` each time."""

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        setattr(counts, field, getattr(counts, field) + 1)
        return call(*args, **kwargs)

    return wrapper


class CountingStore:
    """The store as the recall graph sees it, its searches counted."""

    def __init__(self, inner: ChromaMemoryStore, counts: Counts) -> None:
        self.inner, self.counts = inner, counts

    def __getattr__(self, name: str) -> Any:
        found = getattr(self.inner, name)
        return counted(found, self.counts, "searches") if name in SEARCHES else found


def watched(store: ChromaMemoryStore, counts: Counts) -> CountingStore:
    """Count the store's searches, query embeddings and change-log reads into ``counts``."""
    embeddings = store.embeddings
    embeddings.embed_query = counted(embeddings.embed_query, counts, "embeddings")  # type: ignore[method-assign]
    log = store._log._collection
    log.get = counted(log.get, counts, "log_reads")  # type: ignore[method-assign]
    return CountingStore(store, counts)


def long_run_questions(data: Path, run: Path) -> tuple[list[Conversation], list[EvalQuestion]]:
    """The conversations of the long run and the questions it chose, in file order."""
    chosen = set(questions_of_run(run, data))
    subset = load_subset(data, conversations=["conv-26", "conv-30"])
    asked = [q for qs in subset.questions.values() for q in qs if q.qid in chosen]
    return subset.conversations, asked


def spread(values: Sequence[float]) -> dict[str, float]:
    """Mean, min and max."""
    return {
        "mean": round(statistics.fmean(values), 3),
        "min": min(values),
        "max": max(values),
    }


def measure(data: Path, run: Path, embedder: str) -> dict[str, Any]:
    """Ask every question once, in retrieval-only mode, and count."""
    conversations, questions = long_run_questions(data, run)
    store = ChromaMemoryStore.ephemeral(embeddings=make_embeddings(embedder))
    deps = NodeDeps(store=store, caller=StructuredCaller(SchemaChatModel()))
    for conv in conversations:
        ctx = MemoryContext(namespace=stage_namespace("lamina", conv.sample_id))
        store.add(
            ctx.namespace, build_raw_turns(deps, ctx, [t.as_turn_input() for t in conv.turns])
        )
    counts = Counts()
    model = SchemaChatModel()
    counter = WordPieceCounter()
    graph = build_recall_graph(
        chat_model=model, store=watched(store, counts), count_tokens=counter.count
    ).compile()
    rows: list[dict[str, float]] = []
    warm: set[str] = set()
    for q in questions:
        ctx = MemoryContext(namespace=stage_namespace("lamina", q.conversation))
        state = {"question": q.text, "mode": "retrieve"}
        if q.conversation not in warm:  # load the conversation's mirrors first
            graph.invoke(state, context=ctx)
            warm.add(q.conversation)
        counts.reset()
        started = time.perf_counter()
        out = graph.invoke(state, context=ctx)
        seconds = time.perf_counter() - started
        if out.get("failures"):
            raise AssertionError(f"{q.qid}: {out['failures']}")
        variants = len(out["queries_tried"])  # the first round's queries
        rows.append(
            {
                "per_variant": counts.searches / variants,
                "embeddings": counts.embeddings,
                "log_reads": counts.log_reads,
                "ms": 1000 * seconds,
            }
        )
    if model.calls:
        raise AssertionError(f"retrieval-only recall called the LLM {len(model.calls)} times")
    ms = [r["ms"] for r in rows]
    cuts = statistics.quantiles(ms, n=20, method="inclusive")
    return {
        "search_calls_per_variant": spread([r["per_variant"] for r in rows]),
        "query_embeddings_per_question": spread([r["embeddings"] for r in rows]),
        "change_log_reads_per_question": spread([r["log_reads"] for r in rows]),
        "latency_ms": {
            "p50": round(statistics.median(ms), 1),
            "p95": round(cuts[18], 1),
            "mean": round(statistics.fmean(ms), 1),
        },
        "questions": len(rows),
        "conversations": [c.sample_id for c in conversations],
    }


def save(path: Path, label: str, figures: dict[str, Any], meta: dict[str, Any]) -> None:
    """Merge ``figures`` into ``path`` as ``{metric: {label: value}}``, keeping other labels."""
    saved: dict[str, Any] = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    for metric, value in figures.items():
        if metric not in ("questions", "conversations"):
            saved.setdefault(metric, {})[label] = value
    saved.setdefault("runs", {})[label] = meta
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(saved, indent=2) + "\n", encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    """Measure, print, and merge the figures into ``--json``."""
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--data", type=Path, default=DEFAULT_DATA)
    p.add_argument("--run", type=Path, default=LONG_RUN, help="the run whose questions to ask")
    p.add_argument("--embedder", default=DEFAULT_EMBEDDER)
    p.add_argument("--label", required=True, help="the name of these figures, e.g. before")
    p.add_argument("--code", default="", help="the commit measured (recorded as given)")
    p.add_argument("--json", type=Path)
    args = p.parse_args(argv)
    figures = measure(args.data, args.run, args.embedder)
    meta = {
        "code": args.code,
        "package": str(Path(lamina.__file__).parent),
        "questions": figures["questions"],
        "conversations": figures["conversations"],
        "embedder": args.embedder,
        "store_has_search_many": hasattr(ChromaMemoryStore, "search_many"),
    }
    print(json.dumps({**figures, **meta}, indent=2))
    if args.json:
        save(args.json, args.label, figures, {k: v for k, v in meta.items() if k != "package"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
