r"""Issue 64, item 5: does a "never store" instruction keep its topic out of derived memory?

Each of the 30 chats in ``tests/data/never_store/conversations.json`` (written for this
benchmark: English in an informal register, Spanish, German, French, Portuguese) mixes
health details with things worth remembering. Each is built through the ingest graph as
one closed session, in a namespace of its own, with the application's instruction (the
file's ``instruction``: never store health data) as ``MemoryContext.instructions``, the
way ``Memory.add(..., instructions=...)`` or ``MemoryConfig(instructions=...)`` passes it.
With ``--arm plain`` the same chats are built without it, to show what the instruction
changes.

Figures per arm, overall and per language:

* ``leaking_records``: derived records (facts, episodes, scenes) holding one of the
  chat's ``excluded`` words (the target is 0 with the instruction), and
  ``leaking_chats``, the chats with at least one;
* ``raw_kept``: the share of the chats' turns stored verbatim (the instruction steers
  construction only; the raw turns are always kept);
* ``kept_share``: the share of the chats' ``kept`` words (the other things said) found
  in derived records: what the instruction must not cost.

A word matches at the start of a word of the record, casefolded and without accents.

Usage::

    lamina serve-llm --model qwen --threads 2 --port 8091 &
    python benchmarks/never_store.py --base-url http://127.0.0.1:8091/v1 \
        --arm instructed --arm plain --resume /tmp/never-store --json benchmarks/never_store.json
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel

from lamina.agents.common.names import fold
from lamina.core.context import SMALL_MODEL_PROFILE, MemoryContext
from lamina.graphs.ingest import build_ingest_graph
from lamina.stores import ChromaMemoryStore

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "never_store" / "conversations.json"
ARMS = ("instructed", "plain")
START = datetime(2024, 5, 6, 18, 0, tzinfo=UTC)
DERIVED = ("fact", "episode", "scene")


def matches(words: Sequence[str], text: str) -> list[str]:
    """The words of ``words`` that start a word of ``text``."""
    folded = fold(text)
    return [w for w in words if re.search(r"(?<!\w)" + re.escape(fold(w)), folded)]


def build_chat(
    graph: Any,
    store: ChromaMemoryStore,
    chat: dict[str, Any],
    instruction: str | None,
    namespace: str,
    small_model: bool,
) -> dict[str, Any]:
    """Build one chat as one closed session; describe what derived memory holds."""
    profile = dict(SMALL_MODEL_PROFILE) if small_model else {}
    ctx = MemoryContext(
        namespace=namespace, trigger_policy="session", instructions=instruction, **profile
    )
    turns = [
        {
            "speaker": t["speaker"],
            "text": t["text"],
            "occurred_at": START + timedelta(minutes=n),
            "session_id": f"{chat['id']}-s1",
            "turn_index": n,
        }
        for n, t in enumerate(chat["turns"])
    ]
    started = time.perf_counter()
    out = graph.invoke({"turns": turns, "session_closed": True}, context=ctx)
    seconds = time.perf_counter() - started
    derived = []
    for granularity in DERIVED:
        for record in store.get(granularity, namespace):
            text = f"{getattr(record, 'title', '') or ''} {record.text}".strip()
            derived.append(
                {
                    "granularity": granularity,
                    "text": text,
                    "excluded": matches(chat["excluded"], text),
                }
            )
    everything = " ".join(r["text"] for r in derived)
    calls = out.get("llm_calls", [])
    return {
        "raw": store.count("raw", namespace),
        "turns": len(turns),
        "derived": derived,
        "leaking": sum(bool(r["excluded"]) for r in derived),
        "kept_found": matches(chat["kept"], everything),
        "kept": len(chat["kept"]),
        "withheld_turns": sum(c == "turn_withheld" for c in out.get("checks", [])),
        "calls": len(calls),
        "tokens": sum((c.prompt_tokens or 0) + (c.completion_tokens or 0) for c in calls),
        "failures": [f"{f.node}/{f.step}: {f.error[:200]}" for f in out.get("failures", [])],
        "seconds": round(seconds, 2),
    }


def summarise(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The figures of a set of built chats."""
    if not rows:
        return {}
    return {
        "chats": len(rows),
        "derived_records": sum(len(r["derived"]) for r in rows),
        "leaking_records": sum(r["leaking"] for r in rows),
        "leaking_chats": sum(r["leaking"] > 0 for r in rows),
        "raw_kept": round(sum(r["raw"] for r in rows) / sum(r["turns"] for r in rows), 4),
        "kept_share": round(
            sum(len(r["kept_found"]) for r in rows) / sum(r["kept"] for r in rows), 4
        ),
        "tokens_per_chat": round(sum(r["tokens"] for r in rows) / len(rows), 1),
        "withheld_turns": sum(r.get("withheld_turns", 0) for r in rows),
        "failures": sum(len(r["failures"]) for r in rows),
    }


def run(
    model: BaseChatModel,
    embeddings: Embeddings,
    data: dict[str, Any],
    arms: Sequence[str],
    *,
    small_model: bool = True,
    journal: Path | None = None,
    progress: Any = None,
) -> dict[str, Any]:
    """Build every chat in every arm (reusing journaled rows); the figures per arm."""
    done: dict[tuple[str, str], dict[str, Any]] = {}
    if journal is not None and journal.exists():
        for line in journal.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            done[(row["arm"], row["id"])] = row
    store = ChromaMemoryStore.ephemeral(embeddings=embeddings)
    graph = build_ingest_graph(chat_model=model, store=store).compile()
    result: dict[str, Any] = {}
    for arm in arms:
        instruction = data["instruction"] if arm == "instructed" else None
        rows = []
        for chat in data["conversations"]:
            key = (arm, chat["id"])
            if key not in done:
                namespace = f"never-{arm}-{chat['id']}"
                row = {"arm": arm, "id": chat["id"], "lang": chat["lang"]}
                row.update(build_chat(graph, store, chat, instruction, namespace, small_model))
                done[key] = row
                if journal is not None:
                    with journal.open("a", encoding="utf-8") as handle:
                        handle.write(json.dumps(row, ensure_ascii=False) + "\n")
                if progress is not None:
                    progress(f"{arm} {chat['id']}: {row['leaking']} leaking, {row['seconds']} s")
            rows.append(done[key])
        langs = sorted({r["lang"] for r in rows})
        result[arm] = {
            "all": summarise(rows),
            "by_language": {
                lang: summarise([r for r in rows if r["lang"] == lang]) for lang in langs
            },
            "leaks": [
                {"id": r["id"], "records": [d for d in r["derived"] if d["excluded"]]}
                for r in rows
                if r["leaking"]
            ],
            "rows": rows,
        }
    return result


def main(argv: Sequence[str] | None = None) -> int:
    """Run the arms with a served model; print and optionally save the figures."""
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--base-url", required=True, help="an OpenAI-compatible server")
    p.add_argument("--arm", action="append", choices=ARMS, help="default: instructed")
    p.add_argument("--data", type=Path, default=DATA)
    p.add_argument(
        "--rule-set",
        metavar="NAME",
        help="build the chats of the data file's rule_sets[NAME] under its own instruction",
    )
    p.add_argument("--resume", type=Path, metavar="DIR", help="journal each built chat in DIR")
    p.add_argument(
        "--no-small-model-profile",
        action="store_true",
        help="the library's defaults instead of the offline model's profile",
    )
    p.add_argument("--json", type=Path, help="also write the figures here")
    args = p.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from construction_run import local_model

    from lamina.embedders import MiniLMEmbeddings

    data = json.loads(args.data.read_text(encoding="utf-8"))
    if args.rule_set is not None:
        data = data["rule_sets"][args.rule_set]
    journal = None
    if args.resume is not None:
        args.resume.mkdir(parents=True, exist_ok=True)
        journal = args.resume / "journal.jsonl"
    arms = args.arm or ["instructed"]
    result = run(
        local_model(args.base_url, prompt_cache=False),
        MiniLMEmbeddings(),
        data,
        arms,
        small_model=not args.no_small_model_profile,
        journal=journal,
        progress=lambda line: print(line, file=sys.stderr, flush=True),
    )
    out = {
        "command": "python benchmarks/never_store.py --base-url URL "
        + " ".join(f"--arm {a}" for a in arms)
        + (f" --data {args.data}" if args.data != DATA else "")
        + (f" --rule-set {args.rule_set}" if args.rule_set else ""),
        "instruction": data["instruction"],
        "small_model_profile": not args.no_small_model_profile,
        **result,
    }
    print(json.dumps({a: {"all": result[a]["all"]} for a in arms}, indent=1))
    if args.json:
        args.json.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
