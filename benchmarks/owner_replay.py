r"""Replay construction's owner and source checks on facts a model already built, no model.

``benchmarks/construction_quality.py`` builds memory with the local model into Chroma
stores (``--resume DIR``). This script reads every fact of those stores again and files
it as :func:`~lamina.agents.ingest.ownership.owner_check.checked_owner` does in the tree as it is
now (swap repair, a shared image, the source turn's grammar), with the stored owner
standing in for the model's. With ``--sources`` it first chooses each fact's source
turns again from the excerpt it was built from
(:func:`~lamina.agents.ingest.extraction.construct.supporting_turns`). It prints the owner accuracy
on the labelled facts (a fact whose one source turn is cited by LoCoMo observations about
exactly one person), the observation coverage before and after, and with ``-v`` which
labelled facts change or stay wrong.

The stored owners and texts came from the model and from the checks of the commit that
built each store, so this is a quick check of a rule change on real model output; the
construction benchmark with the model stays the measure that counts. The stores are
machine-local (not committed); a fact seen in several stores counts once.

Usage::

    python benchmarks/owner_replay.py eval-results/cq-default-af54c36/boundary/chroma \\
        --conversation conv-41 conv-42 conv-43 conv-44 [--sources] [-v]
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

from construction_quality import CALIBRATION, dia_ids, owners_by_turn

from lamina.agents.common.names import match_speakers
from lamina.agents.ingest.evidence.support import content_terms
from lamina.agents.ingest.extraction.construct import supporting_turns
from lamina.agents.ingest.ownership.owner_check import checked_owner
from lamina.embedders import MiniLMEmbeddings
from lamina.records.model import FactRecord, RawTurn
from lamina.stores import ChromaMemoryStore
from lamina_bench.datasets.locomo import default_locomo_path, load_locomo
from lamina_bench.datasets.locomo_annotations import load_annotations


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


class _Checks:
    """Counts what the replayed source choice changed (a construction step's log)."""

    def __init__(self) -> None:
        self.seen: Counter[str] = Counter()

    def count(self, check: str) -> None:
        self.seen[check] += 1


def _sourced(
    fact: FactRecord, store: ChromaMemoryStore, raws: dict[str, RawTurn], people: list[str]
) -> list[str] | None:
    """The fact's source turns as construction chooses them now, from its own excerpt.

    The excerpt is the episode the fact was built with (its ``episode_id``); the stored
    sources stand in for the turn the model cited. A fact with no episode keeps its
    sources; None: construction would drop it now.
    """
    if not content_terms(fact.text, people):
        return None
    episode = next(
        iter(store.get("episode", fact.namespace, [str(fact.metadata.get("episode_id"))])), None
    )
    excerpt = [raws[i] for i in (episode.source_ids if episode else []) if i in raws]
    cited = [s for s in fact.source_ids if s in raws]
    if not excerpt or not cited or any(c not in {t.id for t in excerpt} for c in cited):
        return list(fact.source_ids)
    log = _Checks()
    return supporting_turns(log, fact.text, cited, excerpt, people)  # type: ignore[arg-type]


def replay(
    stores: Sequence[Path], data: Path, cid: str, verbose: bool, sources: bool, sessions: int
) -> dict[str, Any]:
    """Stored owner vs. the rule's owner on every labelled fact of ``stores``.

    ``sources``: the source turns are chosen again first (:func:`_sourced`), so the
    labelled set and the coverage follow the new choice.
    """
    conv = load_locomo(data, sample_ids=[cid])[0]
    notes = load_annotations(data, [cid])[cid]
    owners = owners_by_turn(notes)
    raw_to_dia = dia_ids(conv)
    turns = {t.dia_id: t for t in conv.turns}
    people = list(conv.speakers)
    embeddings = MiniLMEmbeddings()
    seen: set[tuple[str, tuple[str, ...]]] = set()
    counts: Counter[str] = Counter()
    log = _Checks()
    about: dict[str, set[str]] = {}
    about_before: dict[str, set[str]] = {}
    for path in stores:
        with tempfile.TemporaryDirectory() as tmp:  # a copy: opening a store may write to it
            shutil.copytree(path, Path(tmp) / "c")
            store = ChromaMemoryStore.persistent(Path(tmp) / "c", embeddings=embeddings)
            facts = [f for f in store.get("fact", conv.namespace) if isinstance(f, FactRecord)]
            raws = {r.id: r for r in store.get("raw", conv.namespace) if isinstance(r, RawTurn)}
            ordered = sorted(raws.values(), key=lambda r: (r.occurred_at, r.turn_index or 0))
            chosen = {
                f.id: _sourced(f, store, raws, people) if sources else f.source_ids for f in facts
            }
        for fact in facts:
            key = (fact.text, tuple(fact.source_ids))
            if key in seen:
                continue
            seen.add(key)
            stored = fact.subject or ""
            old = [raw_to_dia[s] for s in fact.source_ids if s in raw_to_dia]
            for d in old:
                about_before.setdefault(d, set()).update(match_speakers(stored, people))
            if len(old) == 1 and len(owners.get(old[0], ())) == 1:
                counts["stored_labelled"] += 1
                counts["stored_right"] += bool(match_speakers(stored, list(owners[old[0]])))
            picked = chosen[fact.id]
            if picked is None:
                counts["dropped"] += 1
                continue
            counts["sources_changed"] += list(picked) != list(fact.source_ids)
            dias = [raw_to_dia[s] for s in picked if s in raw_to_dia]
            owner = stored
            if picked and all(i in raws for i in picked):
                sourced = [raws[i] for i in picked]
                _, owner, _ = checked_owner(log, fact.text, stored, sourced, ordered, people)  # type: ignore[arg-type]
            for d in dias:
                about.setdefault(d, set()).update(match_speakers(owner, people))
            if len(dias) != 1 or len(owners.get(dias[0], ())) != 1:
                continue
            label = next(iter(owners[dias[0]]))
            before = bool(match_speakers(stored, [label]))
            after = bool(match_speakers(owner, [label]))
            counts[f"{'right' if before else 'wrong'}_then_{'right' if after else 'wrong'}"] += 1
            if verbose and not (before and after):
                tag = "FIXED" if after else "BROKE" if before else "WRONG"
                turn = turns[dias[0]]
                print(f"{tag} [{label}] {stored}: {fact.text}\n    {turn.speaker}: {turn.text}")
    shown = [
        o for o in notes.observations if o.evidence and o.session_id in conv.sessions()[:sessions]
    ]
    n = sum(
        counts[k]
        for k in ("right_then_right", "right_then_wrong", "wrong_then_right", "wrong_then_wrong")
    )
    right_after = counts["right_then_right"] + counts["wrong_then_right"]
    return {
        "conversation": cid,
        "stores": [str(p) for p in stores],
        "sources_replayed": sources,
        "stored_owner_accuracy": _share(counts["stored_right"], counts["stored_labelled"]),
        "labelled_facts": n,
        "rule_owner_accuracy": _share(right_after, n),
        "observations": len(shown),
        "covered_before": sum(
            any(o.person in about_before.get(d, set()) for d in o.evidence) for o in shown
        ),
        "covered_after": sum(
            any(o.person in about.get(d, set()) for d in o.evidence) for o in shown
        ),
        **dict(sorted(counts.items())),
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Run; print the figures and optionally save them."""
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("stores", nargs="+", type=Path, help="Chroma folders a build wrote")
    p.add_argument("--data", type=Path, default=default_locomo_path())
    p.add_argument("--conversation", nargs="+", default=["conv-41"], choices=CALIBRATION)
    p.add_argument("--json", type=Path, help="write the figures here")
    p.add_argument(
        "--sources", action="store_true", help="choose each fact's source turns again first"
    )
    p.add_argument("--sessions", type=int, default=10, help="observations of these sessions")
    p.add_argument(
        "-v", action="store_true", help="print the facts whose owner changes or stays wrong"
    )
    args = p.parse_args(argv)
    missing = [str(s) for s in args.stores if not s.is_dir()]
    if missing:
        print(f"no such store: {missing}", file=sys.stderr)
        return 2
    rows = [
        replay(args.stores, args.data, c, args.v, args.sources, args.sessions)
        for c in args.conversation
    ]
    total: Counter[str] = Counter()
    for row in rows:
        total.update(
            {k: v for k, v in row.items() if isinstance(v, int) and k != "sources_replayed"}
        )
    result = {
        "conversations": args.conversation,
        "sources_replayed": args.sources,
        "stored_owner_accuracy": _share(total["stored_right"], total["stored_labelled"]),
        "rule_owner_accuracy": _share(
            total["right_then_right"] + total["wrong_then_right"], total["labelled_facts"]
        ),
        "coverage_before": _share(total["covered_before"], total["observations"]),
        "coverage_after": _share(total["covered_after"], total["observations"]),
        "totals": dict(sorted(total.items())),
        "per_conversation": rows,
    }
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
