"""Who each fact is about: the bundled sample conversation built with a real model.

Builds the three-session sample (Maya, Sam and Maya's brother Theo's bakery) with the
session policy, then prints every fact with the person it is filed under and its event
time, the profile grouped by person, and the cost. The sample's third person (Theo) is
the check: a fact about Theo must be filed under Theo, never under Maya who told it.

Usage:
    lamina serve-llm --model qwen --threads 2 --port 8085 &
    python benchmarks/sample_attribution.py --base-url http://127.0.0.1:8085/v1
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from pathlib import Path

from lamina.core.context import MemoryContext
from lamina.embedders import MiniLMEmbeddings
from lamina.graphs.ingest import build_ingest_graph
from lamina.records import FactRecord
from lamina.samples import load_sample, sample_sessions
from lamina.stores import ChromaMemoryStore

NS = "sample"


def main(argv: Sequence[str] | None = None) -> int:
    """Build the sample and print facts, subjects, event times and the profile."""
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--base-url", required=True, help="an OpenAI-compatible server")
    p.add_argument("--json", type=Path, help="also write the figures here")
    args = p.parse_args(argv)
    from langchain_openai import ChatOpenAI

    model = ChatOpenAI(  # type: ignore[call-arg]
        base_url=args.base_url, api_key="not-needed", model="local", temperature=0, timeout=600
    )
    store = ChromaMemoryStore.ephemeral(embeddings=MiniLMEmbeddings())
    graph = build_ingest_graph(chat_model=model, store=store).compile()
    ctx = MemoryContext(namespace=NS, trigger_policy="session")
    sessions = sample_sessions(NS, load_sample())
    turns = [t for _, batch in sessions for t in batch]
    started, calls, tokens = time.perf_counter(), 0, 0
    for _, batch in sessions:
        out = graph.invoke({"turns": batch, "session_closed": True}, context=ctx)
        calls += len(out["llm_calls"])
        tokens += sum((c.prompt_tokens or 0) + (c.completion_tokens or 0) for c in out["llm_calls"])
    seconds = time.perf_counter() - started
    facts = [f for f in store.get("fact", NS) if isinstance(f, FactRecord)]
    rows = []
    for fact in sorted(facts, key=lambda f: (f.subject or "", f.occurred_at)):
        when = fact.point_in_time or fact.start_time
        rows.append(
            {
                "subject": fact.subject,
                "kind": fact.kind,
                "event_date": when.date().isoformat() if when else None,
                "text": fact.text,
            }
        )
        print(f"[{fact.subject}] ({fact.kind}, {rows[-1]['event_date']}) {fact.text}")
    profile = store.get_profile(NS)
    people = sorted({f.subject for f in facts if f.subject})
    print("\nprofile by person:")
    for person in people:
        print(f"  {person}: {profile.about(person) if profile else []}")
    print(
        f"\n{len(turns)} turns, {calls} LLM calls, {tokens} tokens "
        f"({tokens / len(turns):.0f}/turn), {seconds:.0f}s ({seconds / len(turns):.1f}s/turn)"
    )
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "turns": len(turns),
                    "llm_calls": calls,
                    "tokens": tokens,
                    "seconds": round(seconds, 1),
                    "facts": rows,
                },
                indent=2,
            ),
            encoding="utf-8",
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
