r"""How often the premise check (``agents/recall/premise.py``) fires, per LoCoMo category, no LLM.

Each conversation's raw turns go into a store; every question is put to the recall
graph in retrieval-only mode, so the check sees the context the Judge would see (raw
layer; on built memory only the raw turns count anyway). The gold answer stands in for
the draft: for category 5 that is the answer the swapped question tempts a model to
give. A firing on categories 1-4 is a false alarm (the graph retries, then refuses an
answerable question); on category 5 it is a catch.

The conversations the long evaluation answers (conv-26 and conv-30) are reported apart
from the other eight, on which the check's settings were chosen.

Counted per category: ``topic`` (the topic test fired) and ``fires`` (topic and answer
tests). The model-asked owner call once measured beside them (``--owner-base-url``,
``benchmarks/premise_owner.json``) barely told the two people apart and was removed.

The premise search of ``agents/recall/premise_search.py`` is measured beside them: for
every question on which the topic test fires, a BM25 search of the whole conversation's
raw turns for the question (its person and time expressions left out, top
:data:`SEARCH_K`), asking :func:`~lamina.agents.recall.premise.premise_found` whether a
best topic match among those turns is about the named person. ``unlifted`` counts the
questions it finds none for (the graph refuses those at once, whether or not the Judge
takes the draft, unless the answer test already doubts a draft it takes);
``search_or_answer`` those where that or the answer test fires (what the graph doubts:
the answer test's doubt gets a second round).

Usage:
    python benchmarks/premise_check.py --json benchmarks/premise_check.json
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lamina.agents.common.deps import NodeDeps
from lamina.agents.common.query_analysis import QueryAnalysis
from lamina.agents.ingest.nodes.raw_writer import build_raw_turns
from lamina.agents.recall.premise import (
    TOPIC_MIN_TERMS,
    TOPIC_RATIO,
    foreign_answer,
    foreign_topic,
    premise_found,
)
from lamina.agents.recall.premise_search import SEARCH_K, searched_turns
from lamina.core.context import MemoryContext
from lamina.embedders import MiniLMEmbeddings
from lamina.graphs.recall import build_recall_graph
from lamina.llm.structured import StructuredCaller
from lamina.stores import ChromaMemoryStore
from lamina.testing import SchemaChatModel
from lamina_bench.datasets.locomo import default_locomo_path, load_locomo
from lamina_bench.evaluation.transcripts import WordPieceCounter

LONG_RUN = ("conv-26", "conv-30")
"""The long evaluation's conversations: held out from choosing the check's settings."""


COLUMNS = (
    "questions",
    "topic",
    "fires",
    "unlifted",
    "search_or_answer",
)


def measure(data: Path) -> dict[str, dict[int, Counter[str]]]:
    """Per group and category, the counts of :data:`COLUMNS`."""
    store = ChromaMemoryStore.ephemeral(embeddings=MiniLMEmbeddings())
    model = SchemaChatModel()
    graph = build_recall_graph(
        chat_model=model, store=store, count_tokens=WordPieceCounter().count
    ).compile()
    deps = NodeDeps(store=store, caller=StructuredCaller(SchemaChatModel()))
    tally: dict[str, dict[int, Counter[str]]] = {"calibration": {}, "long run": {}}
    for conv in load_locomo(data, categories=(1, 2, 3, 4, 5)):
        ctx = MemoryContext(namespace=conv.namespace)
        store.add(
            conv.namespace, build_raw_turns(deps, ctx, [t.as_turn_input() for t in conv.turns])
        )
        name = "long run" if conv.sample_id in LONG_RUN else "calibration"
        group = tally[name]
        for q in conv.questions:
            out = graph.invoke({"question": q.text, "mode": "retrieve"}, context=ctx)
            analysis = QueryAnalysis.model_validate(out.get("analysis") or {})
            row = group.setdefault(q.category, Counter())
            row["questions"] += 1
            foreign = foreign_topic(analysis, q.text, out.get("candidates", []))
            if foreign is None:
                continue
            row["topic"] += 1
            answered = foreign_answer(foreign, q.answer)
            row["fires"] += answered
            searched = searched_turns(store, conv.namespace, analysis, q.text)
            unlifted = not premise_found(analysis, q.text, searched)
            row["unlifted"] += unlifted
            row["search_or_answer"] += unlifted or answered
        print(f"  {conv.sample_id}", file=sys.stderr, flush=True)
    if model.calls:
        raise AssertionError(f"retrieval-only recall called the model {len(model.calls)} times")
    return tally


def report(tally: dict[str, dict[int, Counter[str]]]) -> dict[str, Any]:
    """Counts and rates per group: each category, and categories 1-4 together.

    ``rate`` is the no-LLM firing rate (``fires`` / ``questions``), ``search_rate`` that
    of the premise search or the answer test (``search_or_answer`` / ``questions``).
    """
    out: dict[str, Any] = {
        "topic_ratio": TOPIC_RATIO,
        "topic_min_terms": TOPIC_MIN_TERMS,
        "search_k": SEARCH_K,
    }
    for group, cats in tally.items():
        answerable: Counter[str] = Counter()
        rows: dict[str, Any] = {}
        for c, counts in sorted(cats.items()):
            rows[f"c{c}"] = _row(counts)
            if c != 5:
                answerable.update(counts)
        rows["c1-4"] = _row(answerable)
        out[group] = rows
    return out


def _row(counts: Counter[str]) -> dict[str, Any]:
    row: dict[str, Any] = {k: counts[k] for k in COLUMNS}
    n = counts["questions"]
    row["rate"] = round(counts["fires"] / n, 4) if n else None
    row["search_rate"] = round(counts["search_or_answer"] / n, 4) if n else None
    return row


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--data", type=Path, default=default_locomo_path())
    p.add_argument("--json", type=Path)
    args = p.parse_args(argv)
    result = report(measure(args.data))
    for group in ("calibration", "long run"):
        print(f"{group}:")
        for c, r in result[group].items():
            cells = "  ".join(f"{k} {r[k]}" for k in COLUMNS)
            print(f"  {c:>4}: {cells}  (no-LLM rate {r['rate']})")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
