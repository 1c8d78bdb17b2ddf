r"""Turn recall on memory a real model built (issue 16), no LLM at question time.

``benchmarks/recall_eval.py`` checks lamina's pooled context on the raw layer, or with
LoCoMo's own observations standing in for derived memory. This script reads the memory
that ``lamina-bench eval`` built with its model (the construction store under
``--construction-dir``), so the facts, episodes and scenes competing for the budget are
the ones the answers were actually given. For every chosen question of categories 1-4 it
compares the raw turns each system would show:

* ``flat``: hybrid top-k over the raw stage's turns (the evaluation's ``flat`` baseline);
* ``lamina``: the recall graph in retrieval-only mode on the lamina stage, with the
  library defaults and any ``--recall-option KEY=VALUE`` overrides.

Turn recall is the share of a question's gold evidence turns among the raw turns shown;
"+sources" also counts the source turns of the derived memories shown (the evaluation's
definition). Means come with percentile-bootstrap 95% intervals over questions.

The questions are those of a run (``--run``, read from its journal's settings), or those
the run does not use (``--exclude-run``), so a choice made on one set can be checked on
the other.

Usage (``C=eval-results/construction``, ``R=eval-results/locomo-long``):
    python benchmarks/built_recall.py --construction-dir $C --run $R
    python benchmarks/built_recall.py --construction-dir $C --exclude-run $R \
        --recall-option source_weight=1
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lamina.agents.recall.context import render_context
from lamina.core.context import MemoryContext
from lamina.core.state import Candidate
from lamina.embedders import MiniLMEmbeddings
from lamina.graphs.recall import build_recall_graph
from lamina.stores import ChromaMemoryStore
from lamina.testing import SchemaChatModel
from lamina_bench.evaluation.bootstrap import bootstrap_mean
from lamina_bench.evaluation.construction import ConstructionCache
from lamina_bench.evaluation.ingest import (
    RAW_STAGE,
    lamina_stage,
    raw_id_to_dia,
    stage_namespace,
)
from lamina_bench.evaluation.records import Journal, RunHeader
from lamina_bench.evaluation.settings import (
    JOURNAL,
    parse_recall_options,
    questions_of_run,
    split_recall,
)
from lamina_bench.evaluation.subset import EvalQuestion, load_subset
from lamina_bench.evaluation.transcripts import UTC_ZONE, WordPieceCounter

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared/data/locomo/locomo10.json"


@dataclass(frozen=True)
class Row:
    """One question's recall under each system."""

    qid: str
    category: int
    flat: float
    raw: float
    sources: float
    raw_turns: int
    derived: int
    tokens: int


def _stage_store(root: Path, stage: str, embeddings: Any) -> ChromaMemoryStore:
    """The construction store of ``stage`` (the one folder whose key starts with it)."""
    found = sorted(p.name for p in root.iterdir() if p.name.startswith(f"{stage}-"))
    if len(found) != 1:
        raise SystemExit(f"{root}: expected one construction of {stage!r}, found {found}")
    return ConstructionCache.open(root, found[0], embeddings).store


def _share(evidence: Sequence[str], shown: Sequence[str]) -> float:
    return len(set(evidence) & set(shown)) / len(evidence)


def _dia(candidates: Sequence[Candidate], to_dia: dict[str, str], *, sources: bool) -> list[str]:
    out: list[str] = []
    for c in candidates:
        if c.granularity == "raw":
            out.append(to_dia.get(c.id, ""))
        elif sources:
            out.extend(to_dia.get(i, "") for i in c.source_ids)
    return [d for d in out if d]


def _fingerprint(run: Path) -> dict[str, Any]:
    headers = [e for e in Journal(run / JOURNAL).read() if isinstance(e, RunHeader)]
    if not headers:
        raise SystemExit(f"{run / JOURNAL}: no run header")
    return dict(headers[0].fingerprint)


def measure(args: argparse.Namespace) -> list[Row]:
    """Every chosen question's recall under flat and lamina."""
    run = args.run or args.exclude_run
    fp = _fingerprint(run)
    policy = (fp.get("policies") or ["recurrence"])[0]
    chosen = set(questions_of_run(run, args.data))
    subset = load_subset(
        args.data,
        conversations=fp.get("conversations"),
        categories=(1, 2, 3, 4),
        exclude=chosen if args.exclude_run else (),
    )
    embeddings = MiniLMEmbeddings()
    counter = WordPieceCounter()
    stage = lamina_stage(policy)
    memory = _stage_store(args.construction_dir, stage, embeddings)
    raw_store = _stage_store(args.construction_dir, RAW_STAGE, embeddings)
    arms, options = split_recall(parse_recall_options(args.recall_option))
    graph = build_recall_graph(
        chat_model=SchemaChatModel(), store=memory, count_tokens=counter.count, arms=arms
    ).compile()
    rows: list[Row] = []
    for conv in subset.conversations:
        namespace = stage_namespace(stage, conv.sample_id)
        for store, space in (
            (memory, namespace),
            (raw_store, stage_namespace(RAW_STAGE, conv.sample_id)),
        ):
            if store.count("raw", space) == 0:  # a store that was never built would score 0
                raise SystemExit(
                    f"{args.construction_dir}: the construction store of {space!r} holds no "
                    f"turns; build it first with the run's `lamina-bench eval` command"
                )
        to_dia = raw_id_to_dia(namespace, conv)
        questions: list[EvalQuestion] = [
            q
            for q in subset.questions[conv.sample_id]
            if q.evidence and (args.exclude_run or q.qid in chosen)
        ]
        for q in questions:
            ctx = MemoryContext(namespace=namespace, trigger_policy=policy, **options)  # type: ignore[arg-type]
            out = graph.invoke({"question": q.text, "mode": "retrieve"}, context=ctx)
            if out.get("llm_calls"):
                raise SystemExit("retrieval-only recall called the model")
            shown: list[Candidate] = list(out.get("candidates", []))
            hits = raw_store.search(
                q.text, "raw", stage_namespace(RAW_STAGE, conv.sample_id), k=args.flat_k
            )
            flat = [str(h.record.metadata.get("dia_id", "")) for h in hits]
            raw_turns = sum(c.granularity == "raw" for c in shown)
            rows.append(
                Row(
                    qid=q.qid,
                    category=q.category,
                    flat=_share(q.evidence, flat),
                    raw=_share(q.evidence, _dia(shown, to_dia, sources=False)),
                    sources=_share(q.evidence, _dia(shown, to_dia, sources=True)),
                    raw_turns=raw_turns,
                    derived=len(shown) - raw_turns,
                    tokens=counter.count(render_context(shown, UTC_ZONE)[0]) if shown else 0,
                )
            )
    return rows


def report(rows: Sequence[Row]) -> str:
    """The recall table (c1-4 and per category, with 95% intervals)."""
    cats = sorted({r.category for r in rows})
    lines = [
        f"{'system':>19} {'c1-4':>24}"
        + "".join(f" {'c' + str(c):>24}" for c in cats)
        + "   raw turns  derived  tokens"
    ]
    for label, key in (("flat", "flat"), ("lamina", "raw"), ("lamina +sources", "sources")):
        cells = [bootstrap_mean([getattr(r, key) for r in rows]).format()]
        cells += [
            bootstrap_mean([getattr(r, key) for r in rows if r.category == c]).format()
            for c in cats
        ]
        extra = ""
        if key != "flat":
            n = len(rows)
            extra = (
                f"   {sum(r.raw_turns for r in rows) / n:9.1f}"
                f"  {sum(r.derived for r in rows) / n:7.1f}"
                f"  {sum(r.tokens for r in rows) / n:6.0f}"
            )
        lines.append(f"{label:>19} " + " ".join(f"{c:>24}" for c in cells) + extra)
    below = sum(r.sources < r.flat for r in rows)
    above = sum(r.sources > r.flat for r in rows)
    counts = ", ".join(f"c{c} {sum(r.category == c for r in rows)}" for c in cats)
    lines.append(
        f"questions {len(rows)} ({counts}); lamina +sources below flat: {below}, above: {above}"
    )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--data", type=Path, default=DEFAULT_DATA)
    p.add_argument("--construction-dir", type=Path, required=True)
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--run", type=Path, help="the questions of this run")
    which.add_argument("--exclude-run", type=Path, help="the questions this run does not use")
    p.add_argument("--flat-k", type=int, default=20)
    p.add_argument("--recall-option", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--json", type=Path)
    args = p.parse_args(argv)
    rows = measure(args)
    print(report(rows))
    if args.json:
        args.json.write_text(json.dumps([r.__dict__ for r in rows], indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
