r"""Replay a supersession run's recorded facts through the Judge's update check.

``construction_supersession.py`` and ``generalization.py`` record, per update item or
control, every fact the model wrote (text, subject, kind, earlier or later side). Building
those facts is most of a run's time (two construction calls per item); judging them is one
call. This script stores each item's earlier facts and turns as they were said, then
hands its later facts to :func:`~lamina.agents.ingest.nodes.conflicts.check_conflicts`, the
Judge itself, with a model (``--base-url``) or with none (``--no-model``: every pair the
model would be asked about is answered "not outdated", so only the update cues
supersede). It isolates the update check from what the model wrote, so a change to the
candidates, the cues or the check's prompt is measured in minutes on the same facts; the
benchmarks themselves, which build the facts, stay the measure that counts.

Usage::

    python benchmarks/supersession_replay.py --no-model \
        --run benchmarks/construction_supersession.json --items tests/data/supersession_pairs.json
    python benchmarks/supersession_replay.py --base-url http://127.0.0.1:8091/v1 \
        --run benchmarks/generalization-run/journal.jsonl --items tests/data/generalization
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel

from lamina.agents.common.deps import NodeDeps, StepLog
from lamina.agents.ingest.nodes.conflicts import check_conflicts
from lamina.core.arms import ResearchArms
from lamina.core.context import MemoryContext
from lamina.llm.structured import StructuredCaller
from lamina.records.model import FactRecord, RawTurn
from lamina.stores import ChromaMemoryStore

HERE = Path(__file__).resolve().parent


def load_run(path: Path) -> list[dict[str, Any]]:
    """The supersession rows of a result JSON (``per_item``) or of a resume journal."""
    if path.suffix == ".jsonl":
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()[1:]]
    else:
        rows = json.loads(path.read_text(encoding="utf-8"))["per_item"]
    return [r for r in rows if r.get("kind") in ("update", "control") and "facts" in r]


def load_items(path: Path) -> dict[str, dict[str, Any]]:
    """Item id -> item, from one items file or a folder of them."""
    files = sorted(path.glob("*.json")) if path.is_dir() else [path]
    return {i["id"]: i for f in files for i in json.loads(f.read_text(encoding="utf-8"))["items"]}


def _side(ns: str, item: dict[str, Any], side: str) -> tuple[datetime, list[RawTurn]]:
    start = datetime.fromisoformat(item[side]["date"])
    turns = [
        RawTurn(
            namespace=ns,
            speaker=t["speaker"],
            text=t["text"],
            occurred_at=start + timedelta(minutes=n),
            session_id=f"{item['id']}-{side}",
            turn_index=n,
        )
        for n, t in enumerate(item[side]["turns"])
    ]
    return start, turns


def replay_item(
    store: ChromaMemoryStore,
    model: BaseChatModel,
    row: dict[str, Any],
    item: dict[str, Any],
    *,
    update_cues: bool = True,
) -> dict[str, Any]:
    """Store the row's earlier facts, judge its later ones; what was superseded."""
    ns = "replay-" + "".join(c if c.isalnum() else "-" for c in row["id"].lower())
    facts: dict[str, list[FactRecord]] = {"earlier": [], "later": []}
    for side in ("earlier", "later"):
        when, turns = _side(ns, item, side)
        store.add(ns, turns)
        for f in (f for f in row["facts"] if f["side"] == side):
            facts[side].append(
                FactRecord(
                    namespace=ns,
                    text=f["text"],
                    subject=f["subject"],
                    kind=f["kind"],
                    occurred_at=when + timedelta(minutes=len(turns)),
                    source_ids=[t.id for t in turns],
                )
            )
        if side == "earlier" and facts["earlier"]:
            store.add(ns, facts["earlier"])
    if facts["later"]:
        store.add(ns, facts["later"])
    arms = ResearchArms(update_cues=update_cues)
    log = StepLog("judge", NodeDeps(store=store, caller=StructuredCaller(model), arms=arms))
    started = time.perf_counter()
    ctx = MemoryContext(namespace=ns)
    conflicts = check_conflicts(log, ctx, [f.id for f in facts["later"]])
    old = {f.id for f in facts["earlier"]}
    return {
        "id": row["id"],
        "kind": row["kind"],
        "old_superseded": any(c.old_id in old for c in conflicts),
        "any_superseded": bool(conflicts),
        "cued": sum(1 for c in log.checks if c.startswith("update_cue")),
        "checks": len(log.calls),
        "failures": len(log.failures),
        "tokens": sum((c.prompt_tokens or 0) + (c.completion_tokens or 0) for c in log.calls),
        "seconds": round(time.perf_counter() - started, 2),
    }


def summarise(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Recall on the updates, false rate on the controls, calls and tokens per item."""
    updates = [r for r in rows if r["kind"] == "update"]
    controls = [r for r in rows if r["kind"] == "control"]
    n = len(rows) or 1
    return {
        "updates": len(updates),
        "controls": len(controls),
        "supersede_recall": round(sum(r["old_superseded"] for r in updates) / len(updates), 4)
        if updates
        else None,
        "false_supersede_rate": round(sum(r["any_superseded"] for r in controls) / len(controls), 4)
        if controls
        else None,
        "cued_items": sum(1 for r in rows if r["cued"]),
        "update_checks_per_item": round(sum(r["checks"] for r in rows) / n, 2),
        "tokens_per_item": round(sum(r["tokens"] for r in rows) / n, 1),
        "failures": sum(r["failures"] for r in rows),
    }


def _rejecting_model() -> BaseChatModel:
    """A model that answers every update check "not outdated" (only the cues supersede)."""
    import re

    from lamina.testing import SchemaChatModel

    def reject(messages: list[Any]) -> str:
        labels = dict.fromkeys(re.findall(r"^\[(p\d+)\]", str(messages[-2].content), re.M))
        return json.dumps({"verdicts": [{"pair": p, "outdated": False} for p in labels]})

    model = SchemaChatModel()
    model.script("SupersessionCheck", *[reject] * 10_000)
    return model


def main(argv: Sequence[str] | None = None) -> int:
    """Replay, print the figures (overall and per language group when ids carry one)."""
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--run", type=Path, required=True, help="a result JSON or a resume journal")
    p.add_argument("--items", type=Path, required=True, help="the items file or folder")
    p.add_argument("--base-url", help="an OpenAI-compatible server")
    p.add_argument("--no-model", action="store_true", help="answer every check 'not outdated'")
    p.add_argument(
        "--no-cues", action="store_true", help="update_cues=False: embedding candidates only"
    )
    p.add_argument("--json", type=Path, help="also write the figures and rows here")
    args = p.parse_args(argv)
    if args.no_model == bool(args.base_url):
        print("give exactly one of --no-model and --base-url", file=sys.stderr)
        return 2
    embeddings: Embeddings
    if args.no_model:
        from lamina.testing import FakeEmbeddings

        model, embeddings = _rejecting_model(), FakeEmbeddings()
    else:
        sys.path.insert(0, str(HERE))
        from construction_run import local_model

        from lamina.embedders import MiniLMEmbeddings

        model, embeddings = local_model(args.base_url), MiniLMEmbeddings()
    items = load_items(args.items)
    store = ChromaMemoryStore.ephemeral(embeddings=embeddings)
    rows = []
    for row in load_run(args.run):
        if row["id"] in items:
            rows.append(
                replay_item(store, model, row, items[row["id"]], update_cues=not args.no_cues)
            )
            print(f"{row['id']}: {rows[-1]}", file=sys.stderr, flush=True)
    groups = sorted({r["id"].split("-")[0] for r in rows if "-" in r["id"]})
    result: dict[str, Any] = {"all": summarise(rows)}
    if len(groups) > 1 and all(len(g) == 2 for g in groups):  # language-prefixed ids
        result["by_language"] = {
            g: summarise([r for r in rows if r["id"].startswith(g + "-")]) for g in groups
        }
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps({**result, "per_item": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
