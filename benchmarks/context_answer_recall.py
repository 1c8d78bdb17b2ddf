r"""How much of each gold answer the recall context holds, with no LLM (issue 31).

For the long evaluation's questions (categories 1-4), the recall graph runs in
retrieval-only mode over a store the evaluation built (a ``lamina-bench eval`` construction
folder) and the rendered context is checked for the gold answer's words (LoCoMo's
normalisation: lower case, no punctuation or articles). The share of answer words found
is averaged per category. It is an upper bound on what the answer model can use, not an
answer score, and it lets designs of the context (``--recall-option``) be compared in
seconds instead of hours. It cannot choose a budget: 1,100 context tokens hold the answer
words as often as 1,500 (0.820 vs 0.822 on conv-41/42), yet the model answers worse from
them (``benchmarks/budget_answers.json``: -0.061 LoCoMo F1).

It also counts the derived lines the context shows, per kind, and how many repeat
another line's title (a scene of one episode restating that episode), and says where the
answer words are: the share found in the lines of each kind alone (``fact``, ``episode``,
``scene``, and ``raw`` for the turns), per category.

Usage (the derived-oracle store of the long run, derived memory off and on)::

    python benchmarks/context_answer_recall.py \
        --store eval-results/construction/derived-oracle-15a60cbd203b/chroma \
        --stage derived-oracle --recall-option derived_share=0
    python benchmarks/context_answer_recall.py --store ... --stage derived-oracle

A construction benchmark store (``benchmarks/construction_quality.py --resume DIR``) of
calibration conversations, all their questions of categories 1-4 whose evidence lies in
the sessions built::

    python benchmarks/context_answer_recall.py \
        --store eval-results/cq-default-80486e9/boundary/chroma --namespace 'locomo:{sample}' \
        --collection-prefix '' --conversations conv-41 conv-42 --sessions 10
"""

from __future__ import annotations

import argparse
import json
import re
import string
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from lamina.agents.recall.context import render_for
from lamina.core.context import DERIVED_KINDS, MemoryContext
from lamina.embedders import MiniLMEmbeddings
from lamina.graphs.recall import build_recall_graph
from lamina.stores import ChromaMemoryStore
from lamina.testing import SchemaChatModel
from lamina_bench.datasets.locomo import default_locomo_path, load_locomo
from lamina_bench.evaluation.settings import split_recall
from lamina_bench.evaluation.subset import load_subset

_DROP = str.maketrans("", "", string.punctuation)
_DERIVED_LINE = re.compile(r"^\[m\d+\] \((fact|episode|scene), [^)]*\) (?:(.*?): )?")
LONG_RUN = ("conv-26", "conv-30")


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


def _parsed(context: str) -> list[tuple[str, str | None, str]]:
    """Each line of the context as (kind, title, line): ``raw`` and no title for a turn."""
    out: list[tuple[str, str | None, str]] = []
    for line in context.splitlines():
        m = _DERIVED_LINE.match(line)
        out.append((m.group(1), m.group(2) or None, line) if m else ("raw", None, line))
    return out


def _derived_lines(parsed: list[tuple[str, str | None, str]]) -> Counter[str]:
    """Derived lines shown, per kind, and ``repeated_title``: lines whose title another has."""
    kinds = Counter(kind for kind, _, _ in parsed if kind != "raw")
    titles = Counter(title for kind, title, _ in parsed if kind != "raw" and title)
    kinds["repeated_title"] = sum(n - 1 for n in titles.values())
    return kinds


def _lines_of(parsed: list[tuple[str, str | None, str]]) -> dict[str, str]:
    """The context's lines by kind: each derived kind, and ``raw`` for the rest."""
    kinds: dict[str, list[str]] = defaultdict(list)
    for kind, _, line in parsed:
        kinds[kind].append(line)
    return {kind: "\n".join(lines) for kind, lines in kinds.items()}


def _share(want: list[str], text: str) -> float:
    """The share of ``want`` (answer words) that ``text`` holds."""
    have = set(words(text))
    return sum(w in have for w in want) / len(want) if want else 0.0


def _questions(args: argparse.Namespace) -> Iterator[tuple[str, int, str, str]]:
    """(sample id, category, question, gold answer) of the chosen questions.

    Categories 1-4, or ``args.categories`` where given (not for the long run's own set).
    """
    if list(args.conversations) == list(LONG_RUN) and args.sessions is None:
        subset = load_subset(
            args.data,
            conversations=list(LONG_RUN),
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
        for sample_id, questions in subset.questions.items():
            for q in questions:
                if q.category != 5:
                    yield sample_id, q.category, q.text, gold[(sample_id, q.text)]
        return
    categories = tuple(getattr(args, "categories", None) or (1, 2, 3, 4))
    for conv in load_locomo(args.data, sample_ids=args.conversations, categories=categories):
        built = set(conv.sessions()[: args.sessions] if args.sessions else conv.sessions())
        session_of = {t.dia_id: t.session_id for t in conv.turns}
        for asked in conv.questions:
            if all(session_of.get(e) in built for e in asked.evidence):
                yield conv.sample_id, asked.category, asked.text, str(asked.answer)


def main(argv: Sequence[str] | None = None) -> int:
    """Print (and optionally save) the answer-word recall of the context per category."""
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--data", type=Path, default=default_locomo_path())
    p.add_argument("--store", type=Path, required=True, help="a construction store's chroma/")
    p.add_argument("--stage", required=True, help="the ingest stage, e.g. derived-oracle")
    p.add_argument("--recall-option", action="append", default=[], type=option)
    p.add_argument("--json", type=Path)
    p.add_argument(
        "--conversations",
        nargs="+",
        default=list(LONG_RUN),
        help="default: the long run's, with its choice of questions; others: all their "
        "questions of categories 1-4",
    )
    p.add_argument("--sessions", type=int, help="only questions whose evidence lies in these")
    p.add_argument("--namespace", default="{stage}/{sample}", help="the store's namespaces")
    p.add_argument("--collection-prefix", default="eval", help="'' for the library default")
    args = p.parse_args(argv)
    arms, opts = split_recall(dict(args.recall_option))
    prefix = {"collection_prefix": args.collection_prefix} if args.collection_prefix else {}
    store = ChromaMemoryStore.persistent(args.store, embeddings=MiniLMEmbeddings(), **prefix)
    graph = build_recall_graph(chat_model=SchemaChatModel(), store=store, arms=arms).compile()
    found: dict[str, list[float]] = defaultdict(list)
    by_kind: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    sizes: list[int] = []
    lines: Counter[str] = Counter()
    for sample_id, category, text, answer in _questions(args):
        namespace = args.namespace.format(stage=args.stage, sample=sample_id)
        ctx = MemoryContext(namespace=namespace, **opts)
        out = graph.invoke({"question": text, "mode": "retrieve"}, context=ctx)
        shown, _ = render_for(out.get("candidates", []), ctx, ZoneInfo("UTC"))
        want = words(answer)
        share = _share(want, shown)
        found[f"c{category}"].append(share)
        found["c1-4"].append(share)
        parsed = _parsed(shown)
        parts = _lines_of(parsed)
        for kind in (*DERIVED_KINDS, "raw"):
            alone = _share(want, parts.get(kind, ""))
            by_kind[kind][f"c{category}"].append(alone)
            by_kind[kind]["c1-4"].append(alone)
        sizes.append(len(shown.split()))
        lines.update(_derived_lines(parsed))
    n = len(found["c1-4"])
    result = {
        "stage": args.stage,
        "conversations": args.conversations,
        "recall_options": dict(args.recall_option),
        "answer_word_recall": {k: round(sum(v) / len(v), 4) for k, v in sorted(found.items())},
        "answer_word_recall_by_kind": {
            kind: {k: round(sum(v) / len(v), 4) for k, v in sorted(shares.items())}
            for kind, shares in by_kind.items()
        },
        "questions": n,
        "context_words": round(sum(sizes) / max(1, len(sizes)), 1),
        "derived_lines": dict(sorted(lines.items())),
    }
    print(json.dumps(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
