r"""How often the premise check (``agents/premise.py``) fires, per LoCoMo category, no LLM.

Each conversation's raw turns go into a store; every question is put to the recall
graph in retrieval-only mode, so the check sees the context the Judge would see (raw
layer; on built memory only the raw turns count anyway). The gold answer stands in for
the draft: for category 5 that is the answer the swapped question tempts a model to
give. A firing on categories 1-4 is a false alarm (the graph retries, then refuses an
answerable question); on category 5 it is a catch.

The conversations the long evaluation answers (conv-26 and conv-30) are reported apart
from the other eight, on which the check's settings were chosen.

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

from memstrata.agents.deps import NodeDeps
from memstrata.agents.premise import TOPIC_MIN_TERMS, TOPIC_RATIO, unfounded_premise
from memstrata.agents.query_analysis import QueryAnalysis
from memstrata.agents.raw_writer import build_raw_turns
from memstrata.core.context import MemoryContext
from memstrata.datasets.locomo import default_locomo_path, load_locomo
from memstrata.evaluation.transcripts import WordPieceCounter
from memstrata.graphs.recall import build_recall_graph
from memstrata.llm.structured import StructuredCaller
from memstrata.stores import ChromaMemoryStore, MiniLMEmbeddings
from memstrata.testing import SchemaChatModel

LONG_RUN = ("conv-26", "conv-30")
"""The long evaluation's conversations: held out from choosing the check's settings."""


def measure(data: Path) -> dict[str, dict[int, list[int]]]:
    """Per group and category: [questions, firings]."""
    store = ChromaMemoryStore.ephemeral(embeddings=MiniLMEmbeddings())
    model = SchemaChatModel()
    graph = build_recall_graph(
        chat_model=model, store=store, count_tokens=WordPieceCounter().count
    ).compile()
    deps = NodeDeps(store=store, caller=StructuredCaller(SchemaChatModel()))
    tally: dict[str, dict[int, list[int]]] = {"calibration": {}, "long run": {}}
    for conv in load_locomo(data, categories=(1, 2, 3, 4, 5)):
        ctx = MemoryContext(namespace=conv.namespace)
        store.add(
            conv.namespace, build_raw_turns(deps, ctx, [t.as_turn_input() for t in conv.turns])
        )
        group = tally["long run" if conv.sample_id in LONG_RUN else "calibration"]
        for q in conv.questions:
            out = graph.invoke({"question": q.text, "mode": "retrieve"}, context=ctx)
            analysis = QueryAnalysis.model_validate(out.get("analysis") or {})
            fired = unfounded_premise(analysis, q.text, q.answer, out.get("candidates", []))
            row = group.setdefault(q.category, [0, 0])
            row[0] += 1
            row[1] += fired is not None
        print(f"  {conv.sample_id}", file=sys.stderr, flush=True)
    if model.calls:
        raise AssertionError(f"retrieval-only recall called the model {len(model.calls)} times")
    return tally


def report(tally: dict[str, dict[int, list[int]]]) -> dict[str, Any]:
    """Firing rates per group: each category, and categories 1-4 together."""
    out: dict[str, Any] = {"topic_ratio": TOPIC_RATIO, "topic_min_terms": TOPIC_MIN_TERMS}
    for group, cats in tally.items():
        answerable = Counter[str]()
        rows: dict[str, Any] = {}
        for c, (n, fired) in sorted(cats.items()):
            rows[f"c{c}"] = {"questions": n, "fires": fired, "rate": round(fired / n, 4)}
            if c != 5:
                answerable["questions"] += n
                answerable["fires"] += fired
        n = answerable["questions"]
        rows["c1-4"] = {**answerable, "rate": round(answerable["fires"] / n, 4) if n else None}
        out[group] = rows
    return out


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--data", type=Path, default=default_locomo_path())
    p.add_argument("--json", type=Path)
    args = p.parse_args(argv)
    result = report(measure(args.data))
    for group in ("calibration", "long run"):
        cells = "  ".join(
            f"{c} {r['fires']}/{r['questions']} ({r['rate']:.3f})" for c, r in result[group].items()
        )
        print(f"{group:>12}: {cells}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
