r"""Supersession benchmark (issue 31, item 2): does memory notice an update, and only then?

Each item of ``tests/data/supersession_pairs.json`` (hand-written: 44 updates such as a
move, a new job or a renamed pet, and 44 controls that are not updates, such as a second
pet, a visit or a hypothetical) is built in its own namespace of one ephemeral Chroma
store: its earlier turns, then its later turns, each turn sent alone through the real
ingest graph (``build_ingest_graph``), the last turn of each side with
``session_closed=True``. The graph runs with an injected clock years after every date in
the data. The trigger policy is the library's default unless ``--policy`` names one;
the default (``recurrence``) consolidates a turn only once it has 5 similar unconsolidated
neighbours, and closing a session does not change that, so on these 1-3-turn sides it
builds no fact at all (``--fake``: 0 LLM calls on all 88 items). ``--policy session``
consolidates each side when it closes, as a chat that ends does.

Reported:

* ``supersede_recall``: updates where a fact built from the earlier turns was
  superseded (also ``old_fact_built``: updates where the earlier turns gave a fact at
  all, the most recall can reach);
* ``false_supersede_rate``: controls where any fact was superseded;
* ``wallclock_validity``: superseded records whose ``valid_to`` equals the injected
  clock (must be 0: a superseded fact is valid until the new turn's event time);
* tokens, LLM calls and seconds per item, update-check calls, and per-item details
  (the facts with their owner, side, ``valid_to`` and replacement).

With ``--fake`` no LLM runs: construction writes each turn as a fact about its speaker
and the update check confirms every pair it is asked about, so the figures are those
of the pairs the check is shown (the slot pre-filter's, or with ``--no-cues`` the
embedding candidates of ``agents.ingest.supersession.updates``). A real model runs with
``--base-url`` (an OpenAI-compatible server, e.g. ``lamina serve-llm``); it is slow,
so ``--resume DIR`` journals each finished item in ``DIR/journal.jsonl`` and a later
run with the same settings skips them.

Usage:
    python benchmarks/construction_supersession.py --fake --policy session --json /tmp/f.json
    lamina serve-llm --model qwen --threads 2 --port 8091 &
    python benchmarks/construction_supersession.py --base-url http://127.0.0.1:8091/v1 \
        --policy session --resume /tmp/supersession-run \
        --json benchmarks/construction_supersession.json
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage

from lamina.core.context import TRIGGER_POLICIES, MemoryContext, TriggerPolicy
from lamina.graphs import ResearchArms
from lamina.graphs.ingest import build_ingest_graph
from lamina.records.model import FactRecord, RawTurn
from lamina.stores import ChromaMemoryStore
from lamina_bench.evaluation.resume_journal import ResumeJournal

ITEMS = Path(__file__).resolve().parents[1] / "tests" / "data" / "supersession_pairs.json"
CLOCK = datetime(2031, 7, 4, 9, 30, tzinfo=UTC)
"""The injected clock: years after every date in the data, so a ``valid_to`` taken from
it cannot pass for an event time."""
TURN_SPACING = timedelta(minutes=1)
"""Turns of one side are this far apart."""
UPDATE_CHECK = "SupersessionCheck"

StoreFactory = Callable[[], ChromaMemoryStore]


def load_items(path: Path = ITEMS) -> list[dict[str, Any]]:
    """The items, updates and controls interleaved (a partial run stays balanced)."""
    items = json.loads(path.read_text(encoding="utf-8"))["items"]
    updates = [i for i in items if i["kind"] == "update"]
    controls = [i for i in items if i["kind"] == "control"]
    out: list[dict[str, Any]] = []
    for n in range(max(len(updates), len(controls))):
        out += [group[n] for group in (updates, controls) if n < len(group)]
    return out


def namespace_of(item: dict[str, Any]) -> str:
    """The item's own namespace."""
    return "sup-" + re.sub(r"[^a-z0-9-]", "-", item["id"].lower())


def side_inputs(item: dict[str, Any], side: str) -> list[dict[str, Any]]:
    """One side's turns as ingest inputs, a minute apart from the side's date."""
    start = datetime.fromisoformat(item[side]["date"])
    return [
        {
            "speaker": t["speaker"],
            "text": t["text"],
            "occurred_at": start + n * TURN_SPACING,
            "session_id": f"{item['id']}-{side}",
            "turn_index": n,
        }
        for n, t in enumerate(item[side]["turns"])
    ]


def run_item(
    graph: Any,
    store: ChromaMemoryStore,
    item: dict[str, Any],
    clock: Callable[[], datetime],
    policy: TriggerPolicy | None = None,
) -> dict[str, Any]:
    """Build one item (earlier side, then later side) and describe what was superseded.

    Whether the update check uses the English cues is the graph's research arm
    (``ResearchArms.update_cues``).
    """
    ns = namespace_of(item)
    ctx = MemoryContext(namespace=ns, **({"trigger_policy": policy} if policy else {}))
    calls: list[Any] = []
    failures: list[str] = []
    checks: list[str] = []
    started = time.perf_counter()
    for side in ("earlier", "later"):
        turns = side_inputs(item, side)
        for n, turn in enumerate(turns):
            out = graph.invoke(
                {"turns": [turn], "session_closed": n + 1 == len(turns)}, context=ctx
            )
            calls += out.get("llm_calls", [])
            checks += out.get("checks", [])
            failures += [f"{f.node}/{f.step}: {f.error[:200]}" for f in out.get("failures", [])]
    seconds = time.perf_counter() - started
    earlier_ids = {
        RawTurn.turn_id(ns, f"{item['id']}-earlier", n)
        for n in range(len(item["earlier"]["turns"]))
    }
    now = clock()
    facts = []
    for f in store.get("fact", ns):
        if not isinstance(f, FactRecord):
            continue
        facts.append(
            {
                "text": f.text,
                "subject": f.subject,
                "kind": f.kind,
                "side": "earlier" if set(f.source_ids) <= earlier_ids else "later",
                "superseded": f.superseded_by is not None,
                "valid_to": f.valid_to.isoformat() if f.valid_to else None,
                "valid_to_is_clock": f.valid_to == now,
            }
        )
    superseded = [f for f in facts if f["superseded"]]
    return {
        "id": item["id"],
        "kind": item["kind"],
        "slot": item["slot"],
        "person": item["person"],
        "old_fact_built": any(f["side"] == "earlier" for f in facts),
        "old_superseded": any(f["side"] == "earlier" for f in superseded),
        "any_superseded": bool(superseded),
        "wallclock": sum(f["valid_to_is_clock"] for f in superseded),
        "update_checks": sum(1 for c in calls if c.schema == UPDATE_CHECK),
        "cue_updates": sum(1 for c in checks if c.startswith("update_cue")),
        "llm_calls": len(calls),
        "tokens": sum((c.prompt_tokens or 0) + (c.completion_tokens or 0) for c in calls),
        "seconds": round(seconds, 2),
        "failures": failures,
        "facts": facts,
    }


def _share(hits: int, n: int) -> float | None:
    return round(hits / n, 4) if n else None


def summarise(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The benchmark's figures from per-item rows."""
    updates = [r for r in rows if r["kind"] == "update"]
    controls = [r for r in rows if r["kind"] == "control"]
    n = len(rows)
    return {
        "items": n,
        "updates": len(updates),
        "controls": len(controls),
        "supersede_recall": _share(sum(r["old_superseded"] for r in updates), len(updates)),
        "old_fact_built": _share(sum(r["old_fact_built"] for r in updates), len(updates)),
        "false_supersede_rate": _share(sum(r["any_superseded"] for r in controls), len(controls)),
        "wallclock_validity": sum(r["wallclock"] for r in rows),
        "superseded_records": sum(sum(f["superseded"] for f in r["facts"]) for r in rows),
        "tokens_per_item": round(sum(r["tokens"] for r in rows) / n, 1) if n else None,
        "llm_calls_per_item": round(sum(r["llm_calls"] for r in rows) / n, 2) if n else None,
        "update_checks_per_item": round(sum(r["update_checks"] for r in rows) / n, 2)
        if n
        else None,
        "seconds_per_item": round(sum(r["seconds"] for r in rows) / n, 2) if n else None,
        "cue_updates": sum(r.get("cue_updates", 0) for r in rows),
        "items_with_failures": sum(1 for r in rows if r["failures"]),
    }


def run_supersession(
    chat_model: BaseChatModel,
    *,
    items_path: Path = ITEMS,
    embeddings: Embeddings | None = None,
    store_factory: StoreFactory | None = None,
    clock: Callable[[], datetime] = lambda: CLOCK,
    journal: ResumeJournal | None = None,
    limit: int | None = None,
    ids: Sequence[str] | None = None,
    policy: TriggerPolicy | None = None,
    update_cues: bool = True,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Build every item through the ingest graph and report the supersession figures.

    Either ``store_factory`` (a fresh store) or ``embeddings`` (an ephemeral Chroma
    store with them) is needed. With ``journal``, items it holds are not built again
    and each newly built item is appended to it. ``policy``: the trigger policy
    (default: ``MemoryContext``'s).
    """
    if store_factory is None:
        if embeddings is None:
            raise ValueError("give store_factory or embeddings")
        store = ChromaMemoryStore.ephemeral(embeddings=embeddings)
    else:
        store = store_factory()
    arms = ResearchArms(update_cues=update_cues)
    graph = build_ingest_graph(chat_model=chat_model, store=store, clock=clock, arms=arms)
    graph = graph.compile()
    items = load_items(items_path)
    if ids:
        items = [i for i in items if i["id"] in set(ids)]
    items = items[:limit] if limit is not None else items
    rows = []
    for n, item in enumerate(items, start=1):
        row = journal.done.get(item["id"]) if journal is not None else None
        if row is None:
            row = run_item(graph, store, item, clock, policy)
            if journal is not None:
                journal.append(row)
            if progress is not None:
                hit = row["old_superseded"] if row["kind"] == "update" else row["any_superseded"]
                progress(
                    f"{n}/{len(items)} {item['id']}: superseded={hit} "
                    f"tokens={row['tokens']} {row['seconds']:.0f}s"
                )
        rows.append(row)
    used = policy or MemoryContext().trigger_policy
    return {
        **summarise(rows),
        "policy": used,
        "update_cues": update_cues,
        "clock": clock().isoformat(),
        "per_item": rows,
    }


# ----------------------------------------------------------------------- fake model
def _echo_facts(messages: list[BaseMessage]) -> str:
    """Construction without a model: each turn of the excerpt as a fact about its speaker."""
    human = str(messages[-1].content)
    notes = ["T|Chat", "S|A chat."]
    for label, speaker, text in re.findall(r"^\[(t\d+)\] ([^:\n]+): ([^\n]+)$", human, re.M):
        notes.append(f"F|{label}|{speaker}|{speaker} said: {text}")
    return "\n".join(notes)


def _judge_all(outdated: bool) -> Callable[[list[BaseMessage]], str]:
    """An update check that gives every pair it is asked about the same verdict."""

    def reply(messages: list[BaseMessage]) -> str:
        labels = dict.fromkeys(re.findall(r"^\[(p\d+)\]", str(messages[-2].content), re.M))
        return json.dumps({"verdicts": [{"pair": p, "outdated": outdated} for p in labels]})

    return reply


def fake_model(items: int, *, confirm: bool = True) -> BaseChatModel:
    """A schema-scripted model for ``--fake`` (and tests): echo facts, judge pairs.

    ``confirm``: the update check confirms every pair (the pre-filter alone), else none
    (the update cues alone).
    """
    from lamina.testing import SchemaChatModel

    model = SchemaChatModel()
    model.script("ConstructionLines", *[_echo_facts] * (8 * items))
    model.script(UPDATE_CHECK, *[_judge_all(confirm)] * (8 * items))
    return model


# ------------------------------------------------------------------------------ CLI
def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Command-line options."""
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--items", type=Path, default=ITEMS, help="the hand-written items")
    p.add_argument("--base-url", help="an OpenAI-compatible server, e.g. http://127.0.0.1:8091/v1")
    p.add_argument("--fake", action="store_true", help="no LLM: echo facts, confirm every pair")
    p.add_argument(
        "--fake-update",
        choices=("confirm", "reject"),
        default="confirm",
        help="with --fake: the update check confirms every pair (the pre-filter alone) or "
        "none (the update cues alone)",
    )
    p.add_argument(
        "--no-cues",
        action="store_true",
        help="update_cues=False: embedding candidates, the model decides every pair",
    )
    p.add_argument("--json", type=Path, help="also write the figures here")
    p.add_argument("--resume", type=Path, metavar="DIR", help="journal finished items in DIR")
    p.add_argument("--limit", type=int, default=None, help="only the first N items")
    p.add_argument("--ids", nargs="*", default=None, help="only these item ids")
    p.add_argument(
        "--policy",
        choices=TRIGGER_POLICIES,
        default=None,
        help="trigger policy (default: lamina's)",
    )
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; print and optionally save the figures."""
    args = parse_args(argv)
    if args.fake == bool(args.base_url):
        print("give exactly one of --fake and --base-url", file=sys.stderr)
        return 2
    n_items = len(load_items(args.items))
    if args.fake:
        from lamina.testing import FakeEmbeddings

        model = fake_model(n_items, confirm=args.fake_update == "confirm")
        embeddings, name = FakeEmbeddings(), f"fake ({args.fake_update} every pair)"
    else:
        from construction_run import local_model

        from lamina.embedders import MiniLMEmbeddings

        model, embeddings, name = local_model(args.base_url), MiniLMEmbeddings(), args.base_url
    journal = None
    if args.resume is not None:
        from lamina_bench.evaluation.code_version import code_version

        settings = {
            "items": str(args.items),
            "model": name,
            "policy": args.policy,
            "update_cues": not args.no_cues,
            "code": code_version(),
        }
        journal = ResumeJournal(args.resume / "journal.jsonl", settings, key="id")
    result = run_supersession(
        model,
        items_path=args.items,
        embeddings=embeddings,
        journal=journal,
        limit=args.limit,
        ids=args.ids,
        policy=args.policy,
        update_cues=not args.no_cues,
        progress=lambda line: print(line, file=sys.stderr, flush=True),
    )
    result = {"model": name, **result}
    figures = {k: v for k, v in result.items() if k != "per_item"}
    print(json.dumps(figures, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
