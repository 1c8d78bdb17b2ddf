r"""How much of each gold answer the recall context holds, with no LLM (issue 31).

For the long evaluation's questions (categories 1-4), the recall graph runs in
retrieval-only mode over a store the evaluation built (a ``lamina eval`` construction
folder) and the rendered context is checked for the gold answer's words (LoCoMo's
normalisation: lower case, no punctuation or articles). The share of answer words found
is averaged per category. It is an upper bound on what the answer model can use, not an
answer score, and it lets designs of the context (``--recall-option``) be compared in
seconds instead of hours.

Usage (the derived-oracle store of the long run, derived memory off and on)::

    python benchmarks/context_answer_recall.py \
        --store eval-results/construction/derived-oracle-15a60cbd203b/chroma \
        --stage derived-oracle --recall-option derived_share=0
    python benchmarks/context_answer_recall.py --store ... --stage derived-oracle
"""

from __future__ import annotations

import argparse
import json
import string
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from lamina.agents.recall.context import render_for
from lamina.core.context import MemoryContext
from lamina.datasets.locomo import default_locomo_path
from lamina.evaluation.subset import load_subset
from lamina.graphs.recall import build_recall_graph
from lamina.stores import ChromaMemoryStore, MiniLMEmbeddings
from lamina.testing import SchemaChatModel

_DROP = str.maketrans("", "", string.punctuation)


def words(text: str) -> list[str]:
    """LoCoMo's answer normalisation: lower case, no punctuation, no articles or 'and'."""
    return [w for w in text.lower().translate(_DROP).split() if w not in {"a", "an", "the", "and"}]


def option(text: str) -> tuple[str, Any]:
    """``name=value`` with a JSON value (a bare word stays a string)."""
    name, _, value = text.partition("=")
    try:
        return name, json.loads(value)
    except json.JSONDecodeError:
        return name, value


def main(argv: Sequence[str] | None = None) -> int:
    """Print (and optionally save) the answer-word recall of the context per category."""
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--data", type=Path, default=default_locomo_path())
    p.add_argument("--store", type=Path, required=True, help="a construction store's chroma/")
    p.add_argument("--stage", required=True, help="the ingest stage, e.g. derived-oracle")
    p.add_argument("--recall-option", action="append", default=[], type=option)
    p.add_argument("--json", type=Path)
    args = p.parse_args(argv)
    opts = dict(args.recall_option)
    store = ChromaMemoryStore.persistent(
        args.store, embeddings=MiniLMEmbeddings(), collection_prefix="eval"
    )
    graph = build_recall_graph(chat_model=SchemaChatModel(), store=store).compile()
    subset = load_subset(
        args.data,
        conversations=["conv-26", "conv-30"],
        categories=[1, 2, 3, 4, 5],
        questions=65,
        adversarial=10,
        sessions=None,
        pick="balanced",
        exclude=[],
    )
    gold = {
        (str(s["sample_id"]), str(q["question"])): str(q.get("answer", ""))
        for s in json.loads(args.data.read_text(encoding="utf-8"))
        for q in s["qa"]
    }
    found: dict[str, list[float]] = defaultdict(list)
    sizes: list[int] = []
    for sample_id, questions in subset.questions.items():
        for q in questions:
            if q.category == 5:
                continue
            ctx = MemoryContext(namespace=f"{args.stage}/{sample_id}", **opts)
            out = graph.invoke({"question": q.text, "mode": "retrieve"}, context=ctx)
            text, _ = render_for(out.get("candidates", []), ctx, ZoneInfo("UTC"))
            want, have = words(gold[(sample_id, q.text)]), set(words(text))
            share = sum(w in have for w in want) / len(want) if want else 0.0
            found[f"c{q.category}"].append(share)
            found["c1-4"].append(share)
            sizes.append(len(text.split()))
    result = {
        "stage": args.stage,
        "recall_options": opts,
        "answer_word_recall": {k: round(sum(v) / len(v), 4) for k, v in sorted(found.items())},
        "questions": len(found["c1-4"]),
        "context_words": round(sum(sizes) / max(1, len(sizes)), 1),
    }
    print(json.dumps(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
