r"""Replay the owner rule on facts a model already built (issue 31), no model.

``benchmarks/construction_quality.py`` builds memory with the local model into Chroma
stores (``--resume DIR``). This script reads every labelled fact of those stores again
(a fact whose one source turn is cited by LoCoMo observations about exactly one person)
and asks :func:`~lamina.agents.ingest.ownership.decide_owner`, as the tree has it now,
for its owner, with the stored owner standing in for the model's. It prints how many
stored owners were right and how many are right after the rule, and which facts change.

The stored owners came from the model and from the owner rule of the commit that built
each store, so this is a quick check of a rule change on real model output; the
construction benchmark with the model stays the measure that counts. The stores are
machine-local (not committed); a fact seen in several stores counts once.

Usage::

    python benchmarks/owner_replay.py eval-results/cq-exp/*/*/chroma [--conversation conv-41] [-v]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from construction_quality import CALIBRATION, owners_by_turn

from lamina.agents.common.names import match_speakers
from lamina.agents.ingest.ownership import addressee, decide_owner
from lamina.agents.ingest.swapped_names import unswapped
from lamina.datasets.locomo import default_locomo_path, load_locomo
from lamina.datasets.locomo_annotations import load_annotations
from lamina.records.model import FactRecord, RawTurn
from lamina.stores import ChromaMemoryStore, MiniLMEmbeddings


def replay(stores: Sequence[Path], data: Path, cid: str, verbose: bool) -> dict[str, Any]:
    """Stored owner vs. the rule's owner on every labelled fact of ``stores``."""
    conv = load_locomo(data, sample_ids=[cid])[0]
    owners = owners_by_turn(load_annotations(data, [cid])[cid])
    raw_to_dia = {
        RawTurn.turn_id(conv.namespace, t.session_id, t.turn_index): t.dia_id for t in conv.turns
    }
    turns = {t.dia_id: t for t in conv.turns}
    order = [t.dia_id for t in conv.turns]
    people = list(conv.speakers)
    embeddings = MiniLMEmbeddings()
    seen: set[tuple[str, tuple[str, ...]]] = set()
    counts: Counter[str] = Counter()
    for path in stores:
        with tempfile.TemporaryDirectory() as tmp:  # a copy: opening a store may write to it
            shutil.copytree(path, Path(tmp) / "c")
            store = ChromaMemoryStore.persistent(Path(tmp) / "c", embeddings=embeddings)
            facts = [f for f in store.get("fact", conv.namespace) if isinstance(f, FactRecord)]
        for fact in facts:
            key = (fact.text, tuple(fact.source_ids))
            dias = [raw_to_dia[s] for s in fact.source_ids if s in raw_to_dia]
            if key in seen or len(dias) != 1 or len(owners.get(dias[0], ())) != 1:
                continue
            seen.add(key)
            label = next(iter(owners[dias[0]]))
            turn = turns[dias[0]]
            at = order.index(turn.dia_id)
            near = [turns[order[j]].speaker for j in (at - 1, at + 1) if 0 <= j < len(order)]
            spoken_to = addressee(turn.speaker, near, people)
            stored = fact.subject or ""
            verdict = decide_owner(stored, fact.text, turn.text, turn.speaker, spoken_to, people)
            owner = verdict.owner
            if unswapped(fact.text, turn.speaker, spoken_to, turn.text) is not None:
                owner = turn.speaker  # as construction files a repaired statement
            before, after = bool(match_speakers(stored, [label])), owner == label
            counts[f"{'right' if before else 'wrong'}_then_{'right' if after else 'wrong'}"] += 1
            if verbose and not (before and after):
                tag = "FIXED" if after else "BROKE" if before else "WRONG"
                print(f"{tag} [{label}] {stored}: {fact.text}\n    {turn.speaker}: {turn.text}")
    n = sum(counts.values())
    right_before = counts["right_then_right"] + counts["right_then_wrong"]
    right_after = counts["right_then_right"] + counts["wrong_then_right"]
    return {
        "conversation": cid,
        "stores": [str(p) for p in stores],
        "labelled_facts": n,
        "stored_owner_accuracy": round(right_before / n, 4) if n else None,
        "rule_owner_accuracy": round(right_after / n, 4) if n else None,
        **dict(sorted(counts.items())),
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Run; print the figures and optionally save them."""
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("stores", nargs="+", type=Path, help="Chroma folders a build wrote")
    p.add_argument("--data", type=Path, default=default_locomo_path())
    p.add_argument("--conversation", default="conv-41", choices=CALIBRATION)
    p.add_argument("--json", type=Path, help="write the figures here")
    p.add_argument(
        "-v", action="store_true", help="print the facts whose owner changes or stays wrong"
    )
    args = p.parse_args(argv)
    missing = [str(s) for s in args.stores if not s.is_dir()]
    if missing:
        print(f"no such store: {missing}", file=sys.stderr)
        return 2
    result = replay(args.stores, args.data, args.conversation, args.v)
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
