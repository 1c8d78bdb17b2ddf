"""Recall benchmarks (issue 16).

Part A, no LLM: does lamina's pooled context keep the raw evidence? On LoCoMo, for
every question, compare the turns each system would show the answer model:

* ``flat``: hybrid top-k over raw turns (the evaluation's ``flat`` baseline), and the
  same ranking cut to the token budget (``flat@budget``);
* ``lamina``: the recall graph in retrieval-only mode (deterministic query analysis,
  pooled search over raw turns, facts, episodes and scenes, the budget cut), on the raw
  layer lamina's ingest writes (resolved dates included). Derived memory needs an LLM
  to build; with ``--derived locomo`` the dataset's own per-session observations stand in
  for facts (with their evidence turns as sources) and its session summaries for
  episodes, so the check also covers derived memory competing for the budget.

Turn recall is the share of a question's gold evidence turns among the raw turns shown;
"+sources" also counts the source turns of the derived memories shown (the evaluation
harness's definition). Each system's turn recall, over categories 1-4 and per category, is
also printed with a percentile-bootstrap 95% confidence interval over questions
(:mod:`lamina_bench.evaluation.bootstrap`), so a difference inside the interval is not read as
progress. ``--embedder`` picks the offline embedder (default ``minilm``, the library's).
Tokens are counted with the evaluation's WordPiece counter on the
rendered context. The check passes when lamina's raw-turn recall on categories 1-4 is
at least flat's at the same budget; the script exits with status 1 otherwise.

Part B, with a local LLM (``--answer-base-url``): the full graph answers the first N
category 1-4 questions of one conversation; prints mem0-style token F1, rounds, LLM calls
and seconds per question.

Usage:
    python benchmarks/recall_eval.py                       # conv-26 and conv-30
    python benchmarks/recall_eval.py --derived locomo --json out.json
    python benchmarks/recall_eval.py --skip-retrieval --answer-base-url http://127.0.0.1:PORT/v1
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lamina.agents.common.attribution import ungrounded_person, unsupported_person
from lamina.agents.common.deps import NodeDeps
from lamina.agents.common.names import match_speakers
from lamina.agents.common.query_analysis import QueryAnalysis
from lamina.agents.ingest.nodes.raw_writer import build_raw_turns
from lamina.agents.recall.context import render_context, render_turn
from lamina.core.context import MemoryContext
from lamina.core.state import Candidate
from lamina.embedders import MiniLMEmbeddings
from lamina.embedders.choice import DEFAULT_EMBEDDER, EMBEDDERS, make_embeddings
from lamina.graphs.recall import build_recall_graph
from lamina.llm.structured import StructuredCaller
from lamina.records import EpisodeRecord, FactRecord
from lamina.records.model import RawTurn, stable_id
from lamina.stores import ChromaMemoryStore
from lamina.testing import SchemaChatModel
from lamina_bench.datasets.locomo import (
    Conversation,
    default_locomo_path,
    load_locomo,
    parse_evidence,
    parse_session_date,
)
from lamina_bench.evaluation.bootstrap import bootstrap_mean
from lamina_bench.evaluation.ingest import RAW_STAGE, Ingestor, raw_id_to_dia, stage_namespace
from lamina_bench.evaluation.metrics import mem0_f1
from lamina_bench.evaluation.transcripts import UTC_ZONE, WordPieceCounter

DEFAULT_CONVERSATIONS = ("conv-26", "conv-30")
LAMINA_STAGE = "lamina"
BUDGET_DEPTH = 60
"""Flat turns ranked for ``flat@budget`` (more than fit 1,500 tokens)."""


@dataclass
class Row:
    """One question's figures for one system."""

    category: int
    recall: float
    with_sources: float
    tokens: int
    turns: int
    seconds: float


@dataclass
class Tally:
    """Rows per system, in question order."""

    rows: dict[str, list[Row]] = field(default_factory=dict)

    def add(self, system: str, row: Row) -> None:
        """Record one row."""
        self.rows.setdefault(system, []).append(row)


def recall(gold: frozenset[str], shown: Sequence[str]) -> float:
    """Share of the gold evidence turns among ``shown``."""
    return len(gold & set(shown)) / len(gold) if gold else 0.0


def standin_memory(sample: dict[str, Any], conv: Conversation, namespace: str) -> list[Any]:
    """LoCoMo's own observations (as facts) and session summaries (as episodes).

    They are what a perfect constructor would write, with their evidence turns as
    ``source_ids``; read from the data file at run time, never stored in the repository.
    """
    known = {t.dia_id for t in conv.turns}
    raw_id = {t.dia_id: RawTurn.turn_id(namespace, t.session_id, t.turn_index) for t in conv.turns}
    session_turns: dict[str, list[str]] = {}
    for t in conv.turns:
        session_turns.setdefault(t.session_id, []).append(raw_id[t.dia_id])
    raw = sample["conversation"]
    out: list[Any] = []
    for key, by_speaker in sorted(sample.get("observation", {}).items()):
        number = re.findall(r"\d+", key)[0]
        when = parse_session_date(raw[f"session_{number}_date_time"])
        for speaker, items in by_speaker.items():
            for item in items:
                text, evidence = item[0], item[1] if len(item) > 1 else []
                ids, _ = parse_evidence(
                    evidence if isinstance(evidence, list) else [evidence], known
                )
                out.append(
                    FactRecord(
                        id=stable_id("fact", namespace, text),
                        namespace=namespace,
                        text=text,
                        subject=speaker,
                        occurred_at=when,
                        source_ids=[raw_id[i] for i in ids],
                    )
                )
    for key, summary in sorted(sample.get("session_summary", {}).items()):
        number = re.findall(r"\d+", key)[0]
        session = f"session_{number}"
        if session not in session_turns or not str(summary).strip():
            continue
        when = parse_session_date(raw[f"session_{number}_date_time"])
        out.append(
            EpisodeRecord(
                id=stable_id("episode", namespace, session),
                namespace=namespace,
                title=f"Conversation of {when.day} {when:%B %Y}",
                text=str(summary),
                occurred_at=when,
                source_ids=session_turns[session],
            )
        )
    return list({(type(r).__name__, r.id): r for r in out}.values())


def ingest(
    stores: tuple[ChromaMemoryStore, ChromaMemoryStore],
    conv: Conversation,
    sample: dict[str, Any],
    derived: bool,
) -> None:
    """The flat baseline's raw stage, and lamina's raw layer (plus stand-ins).

    Each gets its own store, as in the evaluation, so one's records never change the
    other's approximate nearest neighbours.
    """
    flat_store, store = stores
    Ingestor(
        store=flat_store,
        graph=None,
        batch_size=10,
        chunk_words=128,
        chunk_overlap=32,
        done=set(),
        record=lambda step: None,
    ).run(RAW_STAGE, conv)
    namespace = stage_namespace(LAMINA_STAGE, conv.sample_id)
    deps = NodeDeps(store=store, caller=StructuredCaller(SchemaChatModel()))
    ctx = MemoryContext(namespace=namespace)
    turns = [t.as_turn_input() for t in conv.turns]
    store.add(namespace, build_raw_turns(deps, ctx, turns))
    if derived:
        store.add(namespace, standin_memory(sample, conv, namespace))


def _turns(hits: Sequence[Any], counter: WordPieceCounter) -> list[tuple[str, int]]:
    """(dia_id, tokens of its rendered line) of each retrieved turn, in rank order."""
    out = []
    for hit in hits:
        r = hit.record
        if isinstance(r, RawTurn):
            line = render_turn("t00", r.occurred_at, r.speaker, r.text, r.media_caption, UTC_ZONE)
            out.append((str(r.metadata["dia_id"]), counter.count(line) + 1))
    return out


def flat_rows(
    store: ChromaMemoryStore, conv: Conversation, counter: WordPieceCounter, k: int, budget: int
) -> tuple[list[Row], list[Row]]:
    """Flat top-k (as the evaluation answers from it), and flat's ranking filling the budget.

    ``flat@budget`` takes flat's turns in rank order (up to :data:`BUDGET_DEPTH`) while
    they fit the token budget: the same room lamina gets.
    """
    namespace = stage_namespace(RAW_STAGE, conv.sample_id)
    full, cut = [], []
    for q in conv.questions:
        started = time.perf_counter()
        hits = store.search(q.text, "raw", namespace, k=k)
        seconds = time.perf_counter() - started
        top = _turns(hits, counter)
        rate = recall(q.evidence, [d for d, _ in top])
        full.append(Row(q.category, rate, rate, sum(n for _, n in top), len(top), seconds))
        deep = _turns(store.search(q.text, "raw", namespace, k=BUDGET_DEPTH), counter)
        kept, used = [], 0
        for d, size in deep:
            if used + size <= budget:
                kept.append(d)
                used += size
        rate = recall(q.evidence, kept)
        cut.append(Row(q.category, rate, rate, used, len(kept), seconds))
    return full, cut


def lamina_rows(
    store: ChromaMemoryStore, conv: Conversation, counter: WordPieceCounter, budget: int
) -> list[Row]:
    """The recall graph in retrieval-only mode (no LLM is called; checked)."""
    namespace = stage_namespace(LAMINA_STAGE, conv.sample_id)
    to_dia = raw_id_to_dia(namespace, conv)
    model = SchemaChatModel()
    graph = build_recall_graph(chat_model=model, store=store, count_tokens=counter.count)
    compiled = graph.compile()
    ctx = MemoryContext(namespace=namespace, context_tokens=budget)
    rows = []
    for q in conv.questions:
        started = time.perf_counter()
        out = compiled.invoke({"question": q.text, "mode": "retrieve"}, context=ctx)
        seconds = time.perf_counter() - started
        candidates = out["candidates"]
        text, _ = render_context(candidates, UTC_ZONE)
        raw = [to_dia[c.id] for c in candidates if c.granularity == "raw" and c.id in to_dia]
        sources = [to_dia[s] for c in candidates for s in c.source_ids if s in to_dia]
        rows.append(
            Row(
                q.category,
                recall(q.evidence, raw),
                recall(q.evidence, raw + sources),
                counter.count(text) if candidates else 0,
                len(raw),
                seconds,
            )
        )
    if model.calls:
        raise AssertionError(f"retrieval-only recall called the LLM {len(model.calls)} times")
    return rows


def summary(rows: list[Row]) -> dict[str, Any]:
    """Mean figures of categories 1-4, per category, and category 5."""
    answerable = [r for r in rows if r.category != 5]
    tokens = sorted(r.tokens for r in answerable)
    seconds = sorted(r.seconds for r in rows)
    out: dict[str, Any] = {
        "questions": len(answerable),
        "turn_recall": round(statistics.fmean(r.recall for r in answerable), 4),
        "turn_recall_with_sources": round(statistics.fmean(r.with_sources for r in answerable), 4),
        "context_tokens_mean": round(statistics.fmean(tokens), 1),
        "context_tokens_max": tokens[-1],
        "raw_turns_mean": round(statistics.fmean(r.turns for r in answerable), 1),
        "p50_ms": round(1000 * seconds[len(seconds) // 2], 1),
        "turn_recall_ci95": bootstrap_mean([r.recall for r in answerable]).as_dict(),
    }
    for category in sorted({r.category for r in rows}):
        subset = [r.recall for r in rows if r.category == category]
        out[f"c{category}"] = {
            "questions": len(subset),
            "turn_recall": round(statistics.fmean(subset), 4),
            "ci95": bootstrap_mean(subset).as_dict(),
        }
    return out


def retrieval_check(
    data: Path,
    conversations: Sequence[str] | None,
    budget: int,
    k: int,
    derived: bool,
    embedder: str = DEFAULT_EMBEDDER,
) -> dict[str, Any]:
    """Part A over the chosen conversations."""
    samples = {s["sample_id"]: s for s in json.loads(data.read_text(encoding="utf-8"))}
    loaded = load_locomo(data, sample_ids=conversations, categories=(1, 2, 3, 4, 5))
    embeddings = make_embeddings(embedder)
    flat_store = ChromaMemoryStore.ephemeral(embeddings=embeddings)
    store = ChromaMemoryStore.ephemeral(embeddings=embeddings)
    counter = WordPieceCounter()
    tally = Tally()
    for conv in loaded:
        started = time.perf_counter()
        ingest((flat_store, store), conv, samples[conv.sample_id], derived)
        full, cut = flat_rows(flat_store, conv, counter, k, budget)
        ours = lamina_rows(store, conv, counter, budget)
        for name, rows in ((f"flat top-{k}", full), ("flat@budget", cut), ("lamina", ours)):
            for row in rows:
                tally.add(name, row)
        print(
            f"  {conv.sample_id}: {len(conv.questions)} questions, "
            f"{len(conv.turns)} turns, {time.perf_counter() - started:.0f} s",
            flush=True,
        )
    ours, theirs = tally.rows["lamina"], tally.rows["flat@budget"]
    pairs = [(a.recall, b.recall) for a, b in zip(ours, theirs, strict=True) if a.category != 5]
    return {
        "conversations": [c.sample_id for c in loaded],
        "budget": budget,
        "flat_k": k,
        "derived": "locomo stand-ins" if derived else "none (raw layer only)",
        "embedder": embedder,
        "systems": {name: summary(rows) for name, rows in tally.rows.items()},
        "lamina_below_flat": sum(a < b for a, b in pairs),
        "lamina_above_flat": sum(a > b for a, b in pairs),
    }


def print_check(result: dict[str, Any]) -> bool:
    """Print the table; True when lamina keeps at least flat's recall at the budget."""
    print(
        f"\nconversations {', '.join(result['conversations'])}; budget {result['budget']} "
        f"tokens; derived memory: {result['derived']}"
    )
    header = ("system", "q c1-4", "turn recall", "+sources", "tokens mean", "tokens max",
              "raw turns", "c1", "c2", "c3", "c4", "c5", "p50 ms")  # fmt: skip
    print("".join(f"{h:>13}" for h in header))
    for name, s in result["systems"].items():
        cats = [s.get(f"c{c}", {}).get("turn_recall", "-") for c in (1, 2, 3, 4, 5)]
        values = [name, s["questions"], s["turn_recall"], s["turn_recall_with_sources"],
                  s["context_tokens_mean"], s["context_tokens_max"], s["raw_turns_mean"], *cats,
                  s["p50_ms"]]  # fmt: skip
        print("".join(f"{v:>13}" for v in values))
    print_intervals(result)
    ours = result["systems"]["lamina"]["turn_recall"]
    theirs = result["systems"]["flat@budget"]["turn_recall"]
    ok = ours >= theirs
    print(
        f"lamina raw-turn recall {ours} vs flat@budget {theirs}: "
        f"{'PASS' if ok else 'FAIL'} (questions below flat: {result['lamina_below_flat']}, "
        f"above: {result['lamina_above_flat']})"
    )
    return ok


def print_intervals(result: dict[str, Any]) -> None:
    """Turn recall with its bootstrap 95% interval, categories 1-4 and per category."""
    print("turn recall with bootstrap 95% confidence intervals over questions:")
    header = ["system", "c1-4", *(f"c{c}" for c in (1, 2, 3, 4, 5))]
    print(f"{header[0]:>13}" + "".join(f"{h:>26}" for h in header[1:]))
    for name, s in result["systems"].items():
        cells = [s["turn_recall_ci95"], *(s.get(f"c{c}", {}).get("ci95") for c in (1, 2, 3, 4, 5))]
        text = [
            f"{c['mean']:.3f} [{c['ci95_low']:.3f}, {c['ci95_high']:.3f}]" if c else "-"
            for c in cells
        ]
        print(f"{name:>13}" + "".join(f"{t:>26}" for t in text))


def attribution_on_gold(data: Path) -> dict[str, Any]:
    """How often each attribution check would fire on the gold data, per category.

    Over every conversation of the file, for the questions naming exactly one speaker:
    ``citations`` cites the gold evidence turns; ``grounding`` grounds the gold answer
    (for category 5, the answer the swapped question tempts) in the evidence turns, and
    ``grounding_all`` in every turn of the conversation (a context far wider than the
    one retrieved); ``either`` fires when ``citations`` or ``grounding`` does.
    """
    checks = ("citations", "grounding", "grounding_all", "either")
    fired: dict[str, dict[int, int]] = {c: {} for c in checks}
    asked: dict[int, int] = {}
    for conv in load_locomo(data, categories=(1, 2, 3, 4, 5)):
        turns = {t.dia_id: t for t in conv.turns}
        every = [_as_candidate(t) for t in conv.turns]
        for q in conv.questions:
            if not q.evidence:
                continue
            analysis = QueryAnalysis(persons=match_speakers(q.text, conv.speakers))
            if len(analysis.persons) != 1:
                continue
            asked[q.category] = asked.get(q.category, 0) + 1
            cited = [_as_candidate(turns[e]) for e in sorted(q.evidence)]
            hits = {
                "citations": unsupported_person(analysis, cited) is not None,
                "grounding": ungrounded_person(analysis, q.answer, cited) is not None,
                "grounding_all": ungrounded_person(analysis, q.answer, every) is not None,
            }
            hits["either"] = hits["citations"] or hits["grounding"]
            for check, hit in hits.items():
                fired[check][q.category] = fired[check].get(q.category, 0) + int(hit)
    return {
        check: {
            f"c{c}": {
                "questions": n,
                "fires": fired[check].get(c, 0),
                "rate": round(fired[check].get(c, 0) / n, 4),
            }
            for c, n in sorted(asked.items())
        }
        for check in checks
    }


def print_attribution(result: dict[str, Any]) -> None:
    """Print each check's firing rate per category."""
    print("\nattribution checks on the gold data (every conversation of the file):")
    for check, rows in result.items():
        cells = "  ".join(
            f"{c} {r['fires']}/{r['questions']} ({r['rate']:.3f})" for c, r in rows.items()
        )
        print(f"  {check:>13}: {cells}")


def _as_candidate(turn: Any) -> Candidate:
    return Candidate(
        granularity="raw",
        id=turn.dia_id,
        text=turn.text,
        speaker=turn.speaker,
        occurred_at=turn.occurred_at,
        score=1.0,
    )


def answer_eval(
    conv: Conversation, base_url: str, n: int, embeddings: MiniLMEmbeddings
) -> dict[str, Any]:
    """The full graph with a local LLM on the first ``n`` questions of ``conv``."""
    from langchain_openai import ChatOpenAI

    model = ChatOpenAI(  # type: ignore[arg-type]
        base_url=base_url, api_key="not-needed", model="local", temperature=0, timeout=600
    )
    store = ChromaMemoryStore.ephemeral(embeddings=embeddings)
    deps = NodeDeps(store=store, caller=StructuredCaller(SchemaChatModel()))
    ctx = MemoryContext(namespace=conv.namespace)
    store.add(conv.namespace, build_raw_turns(deps, ctx, [t.as_turn_input() for t in conv.turns]))
    graph = build_recall_graph(chat_model=model, store=store).compile()
    rows = []
    for q in [q for q in conv.questions if q.category != 5][:n]:
        started = time.perf_counter()
        out = graph.invoke({"question": q.text}, context=ctx)
        seconds = time.perf_counter() - started
        calls = out.get("llm_calls", [])
        rows.append(
            {
                "category": q.category,
                "f1": round(mem0_f1(out.get("answer", ""), q.answer), 4),
                "rounds": out.get("rounds", 0),
                "seconds": round(seconds, 1),
                "refused": out.get("refused", False),
                "llm_calls": len(calls),
                "tokens": sum((c.prompt_tokens or 0) + (c.completion_tokens or 0) for c in calls),
                "answer_source": out.get("answer_source"),
            }
        )
        print(f"  [{len(rows)}/{n}] {rows[-1]}", flush=True)
    return {
        "conversation": conv.sample_id,
        "questions": len(rows),
        "mean_f1": round(statistics.fmean(r["f1"] for r in rows), 4),
        "mean_rounds": round(statistics.fmean(r["rounds"] for r in rows), 2),
        "seconds_per_question": round(statistics.fmean(r["seconds"] for r in rows), 1),
        "llm_calls_per_question": round(statistics.fmean(r["llm_calls"] for r in rows), 2),
        "tokens_per_question": round(statistics.fmean(r["tokens"] for r in rows), 1),
        "refusals": sum(r["refused"] for r in rows),
        "rows": rows,
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Run the selected parts; print and optionally save the figures."""
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--data", type=Path, default=default_locomo_path())
    p.add_argument(
        "--conversations", nargs="*", default=list(DEFAULT_CONVERSATIONS),
        help="sample ids (default: conv-26 conv-30; none given: all)",
    )  # fmt: skip
    p.add_argument("--budget", type=int, default=MemoryContext().context_tokens)
    p.add_argument("--flat-k", type=int, default=20, help="flat retrieval's top-k")
    p.add_argument("--derived", choices=["none", "locomo"], default="none")
    p.add_argument(
        "--embedder", choices=sorted(EMBEDDERS), default=DEFAULT_EMBEDDER,
        help=f"offline embedder for part A (default {DEFAULT_EMBEDDER}, the library default)",
    )  # fmt: skip
    p.add_argument("--skip-retrieval", action="store_true", help="skip part A")
    p.add_argument(
        "--attribution", action="store_true",
        help="only calibrate the attribution checks on the gold data (with --skip-retrieval)",
    )  # fmt: skip
    p.add_argument("--answer-base-url", help="part B: an OpenAI-compatible local model")
    p.add_argument("--answer-conversation", default="conv-26")
    p.add_argument("--answer-questions", type=int, default=20)
    p.add_argument("--json", type=Path)
    args = p.parse_args(argv)
    payload: dict[str, Any] = {}
    status = 0
    if not args.skip_retrieval:
        print("Part A: pooled context against flat retrieval, no LLM")
        payload["retrieval"] = result = retrieval_check(
            args.data, args.conversations or None, args.budget, args.flat_k,
            args.derived == "locomo", args.embedder,
        )  # fmt: skip
        status = 0 if print_check(result) else 1
    if not args.skip_retrieval or args.attribution:
        payload["attribution"] = attribution = attribution_on_gold(args.data)
        print_attribution(attribution)
    if args.answer_base_url:
        (conv,) = load_locomo(args.data, sample_ids=[args.answer_conversation])
        print(f"\nPart B: answering with the local model ({conv.sample_id})")
        payload["answers"] = answers = answer_eval(
            conv, args.answer_base_url, args.answer_questions, MiniLMEmbeddings()
        )
        print({k: v for k, v in answers.items() if k != "rows"})
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(payload, indent=2), encoding="utf-8")
    return status if payload else 2


if __name__ == "__main__":
    sys.exit(main())
