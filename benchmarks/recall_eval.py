"""Recall benchmarks (issue: recall).

Part A, no LLM: on LoCoMo, with memory built from the raw layer only, compare the
foundation's plain hybrid search with the Retriever node's path. The Retriever runs for
real inside the recall graph, driven by a scripted planner (identity rewrite, routed to
raw turns) and a scripted Judge:

* ``retriever``: one round, rewrite = identity;
* ``retriever+retry``: the Judge asks for one retry with a keyword rewrite of the
  question (a deterministic stand-in for the LLM's complementary queries), so the second
  round fuses both queries and expands raw hits to their neighbouring turns.

Part B, with a local LLM (``--answer-base-url``): the full graph answers the first N
category 1-4 questions of one conversation; prints mem0-style token F1, rounds used and
seconds per question.

Usage:
    python benchmarks/recall_eval.py --json out.json
    python benchmarks/recall_eval.py --skip-retrieval --answer-base-url http://127.0.0.1:PORT/v1
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memstrata.datasets.locomo import Conversation, Question, default_locomo_path, load_locomo
from memstrata.evaluation.metrics import first_distinct, mem0_f1, recall_at
from memstrata.graphs.context import MemoryContext
from memstrata.graphs.recall import build_recall_graph
from memstrata.stores import ChromaMemoryStore, MiniLMEmbeddings, RawTurn
from memstrata.stores.lexical import Analyzer
from memstrata.testing import SchemaChatModel

TURN_KS = (1, 3, 5, 10, 20)
SESSION_KS = (1, 3, 5, 10)
DEPTH = 20


def raw_records(conv: Conversation) -> list[RawTurn]:
    """The conversation's turns as raw records (id = dia_id), with the previous turn as context."""
    out, previous = [], None
    for t in conv.turns:
        out.append(
            RawTurn(
                id=t.dia_id,
                namespace=conv.namespace,
                speaker=t.speaker,
                text=t.text,
                session_id=t.session_id,
                turn_index=t.turn_index,
                occurred_at=t.occurred_at,
                media_caption=t.caption,
                context=previous,
            )
        )
        previous = f"{t.speaker}: {t.text}"
    return out


def keyword_query(question: str) -> str:
    """A deterministic keyword rewrite: the question's content words."""
    return " ".join(Analyzer(stem=False).words(question)) or question


def scripted_model(question: str, retry: bool) -> SchemaChatModel:
    """Planner: identity rewrite routed to raw; Judge: pass, or one retry with keywords."""
    model = SchemaChatModel()
    model.script("RetrievalPlan", json.dumps({"query": question, "fine": True, "k": DEPTH}))
    if retry:
        model.script(
            "Verdict",
            json.dumps({"action": "retry", "queries": [question, keyword_query(question)]}),
        )
    model.script("Verdict", json.dumps({"action": "pass"}))
    return model


def scores(
    rankings: list[tuple[Question, list[str]]], session_of: dict[str, str]
) -> dict[str, float]:
    """Mean turn-recall@k and session-recall@k over the questions."""
    out: dict[str, float] = {}
    for k in TURN_KS:
        out[f"turn_recall@{k}"] = statistics.fmean(
            recall_at({f"locomo:{q.conversation}|{e}" for e in q.evidence}, r, k)
            for q, r in rankings
        )
    for k in SESSION_KS:
        out[f"session_recall@{k}"] = statistics.fmean(
            recall_at(q.sessions, first_distinct((session_of[i] for i in r), k), k)
            for q, r in rankings
        )
    return {k: round(v, 4) for k, v in out.items()}


def retrieval_comparison(
    conversations: Sequence[Conversation], embeddings: MiniLMEmbeddings
) -> dict[str, Any]:
    """Plain hybrid vs the Retriever path, on raw turns only."""
    results: dict[str, list[tuple[Question, list[str]]]] = {
        "hybrid": [],
        "retriever": [],
        "retriever+retry": [],
    }
    session_of: dict[str, str] = {}
    latency: dict[str, list[float]] = {name: [] for name in results}
    for conv in conversations:
        store = ChromaMemoryStore.ephemeral(embeddings=embeddings)
        store.add(conv.namespace, raw_records(conv))
        session_of.update({f"{conv.namespace}|{t.dia_id}": t.session_id for t in conv.turns})
        ctx = MemoryContext(namespace=conv.namespace, k_min=DEPTH, max_candidates=2 * DEPTH)
        for q in conv.questions:
            started = time.perf_counter()
            hits = store.search(q.text, "raw", conv.namespace, k=DEPTH)
            latency["hybrid"].append(time.perf_counter() - started)
            results["hybrid"].append((q, [f"{conv.namespace}|{h.record.id}" for h in hits]))
            for name, retry in (("retriever", False), ("retriever+retry", True)):
                graph = build_recall_graph(
                    chat_model=scripted_model(q.text, retry), store=store
                ).compile()
                started = time.perf_counter()
                out = graph.invoke({"question": q.text, "mode": "retrieve"}, context=ctx)
                latency[name].append(time.perf_counter() - started)
                ranked = [
                    f"{conv.namespace}|{c.id}" for c in out["candidates"] if c.granularity == "raw"
                ]
                results[name].append((q, ranked))
        print(f"  {conv.sample_id}: {len(conv.questions)} questions", flush=True)
    report = {name: scores(r, session_of) for name, r in results.items()}
    for name, values in latency.items():
        ordered = sorted(values)
        report[name]["p50_ms"] = round(1000 * ordered[len(ordered) // 2], 1)
    return {"questions": len(results["hybrid"]), "modes": report}


def answer_eval(
    conv: Conversation, base_url: str, n: int, embeddings: MiniLMEmbeddings
) -> dict[str, Any]:
    """The full graph with a local LLM on the first ``n`` questions of ``conv``."""
    from langchain_openai import ChatOpenAI

    model = ChatOpenAI(  # type: ignore[arg-type]
        base_url=base_url,
        api_key="not-needed",
        model="local",
        temperature=0,
        timeout=600,
        max_tokens=256,  # answers and verdicts are short; cap a rambling small model
    )
    store = ChromaMemoryStore.ephemeral(embeddings=embeddings)
    store.add(conv.namespace, raw_records(conv))
    graph = build_recall_graph(
        chat_model=model, store=store, structured_method="json_schema"
    ).compile()
    ctx = MemoryContext(namespace=conv.namespace)
    rows = []
    for q in conv.questions[:n]:
        started = time.perf_counter()
        out = graph.invoke({"question": q.text}, context=ctx)
        seconds = time.perf_counter() - started
        rows.append(
            {
                "question": q.text,
                "gold": q.answer,
                "answer": out.get("answer", ""),
                "category": q.category,
                "f1": round(mem0_f1(out.get("answer", ""), q.answer), 4),
                "rounds": out.get("rounds", 0),
                "seconds": round(seconds, 1),
                "refused": out.get("refused", False),
                "llm_calls": len(out.get("llm_calls", [])),
                "tokens": sum(
                    (c.prompt_tokens or 0) + (c.completion_tokens or 0)
                    for c in out.get("llm_calls", [])
                ),
                "failures": len(out.get("failures", [])),
            }
        )
        print(
            f"  [{len(rows)}/{n}] f1={rows[-1]['f1']:.2f} rounds={rows[-1]['rounds']} "
            f"calls={rows[-1]['llm_calls']} tokens={rows[-1]['tokens']} "
            f"{seconds:.0f}s  {q.text!r} -> {rows[-1]['answer']!r}",
            flush=True,
        )
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
    p.add_argument("--conversations", nargs="*", help="sample ids (default: all)")
    p.add_argument("--skip-retrieval", action="store_true", help="skip part A")
    p.add_argument("--answer-base-url", help="part B: an OpenAI-compatible local model")
    p.add_argument("--answer-conversation", default="conv-26")
    p.add_argument("--answer-questions", type=int, default=20)
    p.add_argument("--json", type=Path)
    args = p.parse_args(argv)
    embeddings = MiniLMEmbeddings()
    payload: dict[str, Any] = {}
    if not args.skip_retrieval:
        conversations = load_locomo(args.data, sample_ids=args.conversations)
        print(f"Part A: retrieval on raw turns, {len(conversations)} conversation(s)")
        payload["retrieval"] = comparison = retrieval_comparison(conversations, embeddings)
        print(
            f"\n{'mode':<17}"
            + "".join(f"{k:>20}" for k in ("session_recall@5", "turn_recall@10", "p50_ms"))
        )
        for name, row in comparison["modes"].items():
            print(
                f"{name:<17}"
                + "".join(f"{row[k]:>20}" for k in ("session_recall@5", "turn_recall@10", "p50_ms"))
            )
    if args.answer_base_url:
        (conv,) = load_locomo(args.data, sample_ids=[args.answer_conversation])
        print(
            f"\nPart B: answering {args.answer_questions} questions of {conv.sample_id}"
            " with the local model"
        )
        payload["answers"] = result = answer_eval(
            conv, args.answer_base_url, args.answer_questions, embeddings
        )
        print(
            f"mean mem0 F1 {result['mean_f1']}  mean rounds {result['mean_rounds']}  "
            f"{result['seconds_per_question']} s/question  refusals {result['refusals']}  "
            f"{result['llm_calls_per_question']} LLM calls and "
            f"{result['tokens_per_question']} tokens/question"
        )
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(payload, indent=2), encoding="utf-8")
    return 0 if payload else 2


if __name__ == "__main__":
    sys.exit(main())
