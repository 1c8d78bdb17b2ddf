r"""Probe for issue 31: the local model's own session summaries as the episode layer.

derived-oracle's lift on the long run comes with LoCoMo's hand-written session summaries.
Asking the construction call for a longer summary costs the 1.5B model its notes (the
demo and the calibration builds), so this probe asks for the summary in a call of its
own: one call per session, shown only that session's stored raw turns, verbatim (as
measured on conv-41/42: without the resolved times in brackets and the ``as_data``
escaping that ``agents.common.formatting.format_excerpt`` gives the construction call;
a next run should render the turns with it). It copies a construction store, replaces
its episodes and scenes with one "Session summary" episode per session (sourced from the
session's turns, dated by its first turn) and keeps its raw turns and facts, so that
``budget_answers.py --arm name:store=<out>/chroma`` answers from it beside the store it
came from.

It measures the lift before anyone pays for the call: it prints the call's LLM tokens
per turn, which construction would have to find room for under issue 13's 150.
The summaries stay in the local store: they retell the conversations (LoCoMo text).

    lamina serve-llm --model qwen --threads 2 --ctx 8192 --port 8090 &
    python benchmarks/session_summary_probe.py --store /tmp/cq-base/boundary/boundary/chroma \
        --out /tmp/cq-sessum --conversations conv-41 conv-42 --base-url http://127.0.0.1:8090/v1
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from construction_run import local_model
from langchain_core.prompts import ChatPromptTemplate

from lamina.embedders import MiniLMEmbeddings
from lamina.prompts.construction import DATA_RULE
from lamina.records.model import EpisodeRecord, RawTurn, stable_id
from lamina.stores import ChromaMemoryStore

SESSION_SUMMARY = ChatPromptTemplate.from_messages(
    [
        (
            "system",
            "You write the memory of one chat session between {speakers}. Retell it in 3-5 "
            "sentences: what each person did, plans, feels or owns, naming the people, places, "
            "things, titles and numbers they mention, and the dates given in brackets. Write "
            "names, never I, you, he or she. " + DATA_RULE,
        ),
        ("human", "Session of {day}:\n<data>\n{turns}\n</data>\nThe session's memory:"),
    ]
)
"""The probe's prompt (data, like every prompt of the package)."""
MAX_TOKENS = 200
"""The summary's output cap."""


def _line(turn: RawTurn) -> str:
    """The turn as the measured probe showed it: its verbatim text, not ``display_text()``."""
    caption = f" [shares a photo: {turn.media_caption}]" if turn.media_caption else ""
    return f"{turn.speaker}: {turn.text}{caption}"


def main(argv: Sequence[str] | None = None) -> int:
    """Copy the store, summarise each session with the model, swap the episode layer."""
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--store", type=Path, required=True, help="a construction store's chroma/")
    p.add_argument("--out", type=Path, required=True, help="folder of the probe's store")
    p.add_argument("--conversations", nargs="+", required=True)
    p.add_argument("--namespace", default="locomo:{sample}", help="the store's namespaces")
    p.add_argument("--base-url", required=True, help="an OpenAI-compatible local server")
    args = p.parse_args(argv)
    if not (args.store / "chroma.sqlite3").is_file():
        p.error(f"no Chroma store at {args.store}")
    target = args.out / "chroma"
    if target.exists():
        p.error(f"{target} exists; remove it or choose another --out")
    shutil.copytree(args.store, target)
    store = ChromaMemoryStore.persistent(target, embeddings=MiniLMEmbeddings())
    model = local_model(args.base_url).bind(max_tokens=MAX_TOKENS)
    costs: dict[str, float] = defaultdict(float)
    for sample in args.conversations:
        ns = args.namespace.format(sample=sample)
        raw = [r for r in store.get("raw", ns) if isinstance(r, RawTurn)]
        if not raw:
            p.error(f"no raw turns in namespace {ns!r}")
        sessions: dict[str, list[RawTurn]] = defaultdict(list)
        for turn in raw:
            sessions[turn.session_id].append(turn)
        speakers = " and ".join(sorted({t.speaker for t in raw}))
        summaries = []
        for session_id, turns in sessions.items():
            turns.sort(key=lambda t: (t.occurred_at, t.turn_index))
            day = turns[0].occurred_at
            messages = SESSION_SUMMARY.format_messages(
                speakers=speakers,
                day=f"{day:%A %d %B %Y}",
                turns="\n".join(_line(t) for t in turns),
            )
            started = time.perf_counter()
            reply = model.invoke(messages)
            usage = getattr(reply, "usage_metadata", None) or {}
            costs["calls"] += 1
            costs["seconds"] += time.perf_counter() - started
            costs["prompt_tokens"] += usage.get("input_tokens", 0)
            costs["completion_tokens"] += usage.get("output_tokens", 0)
            costs["turns"] += len(turns)
            text = " ".join(str(reply.content).split())
            if not text:
                continue
            summaries.append(
                EpisodeRecord(
                    id=stable_id("session-summary", ns, session_id),
                    namespace=ns,
                    title="Session summary",
                    text=text,
                    source_ids=[t.id for t in turns],
                    occurred_at=day,
                    start_at=day,
                    end_at=turns[-1].occurred_at,
                    metadata={"origin": "session_summary_probe", "session_id": session_id},
                )
            )
        for kind in ("scene", "episode"):
            ids = [r.id for r in store.get(kind, ns)]
            if ids:
                store.delete(kind, ns, ids)
        store.add(ns, summaries)
        print(f"{sample}: {len(summaries)} session summaries from {len(sessions)} sessions")
    turns = max(costs["turns"], 1)
    report = {
        "calls": int(costs["calls"]),
        "turns": int(costs["turns"]),
        "tokens_per_turn": round((costs["prompt_tokens"] + costs["completion_tokens"]) / turns, 1),
        "prompt_tokens_per_turn": round(costs["prompt_tokens"] / turns, 1),
        "completion_tokens_per_turn": round(costs["completion_tokens"] / turns, 1),
        "seconds_per_turn": round(costs["seconds"] / turns, 2),
    }
    print(json.dumps(report, indent=2))
    (args.out / "probe.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
