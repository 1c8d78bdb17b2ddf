r"""Replay a supersession run's recorded facts through the pre-filter and the update cues.

``benchmarks/construction_supersession.py`` builds memory with a model and records, per
item, every fact the model wrote (text, subject, kind, earlier or later side). This script
replays those facts, no model: the earlier ones as stored, the later ones 30 days after,
through :func:`~lamina.agents.ingest.slots.candidate_pairs`,
:func:`~lamina.agents.ingest.update_cues.update_cue` and
:func:`~lamina.agents.ingest.update_cues.may_change`, and counts the update items where a
cue ends an earlier fact and the controls where one does (a false cue). It isolates the
cue rules from what the model wrote, so a rule change can be checked in a second; the
benchmark itself, with the model, stays the measure that counts.

Usage::

    python benchmarks/supersession_replay.py [--json benchmarks/construction_supersession.json] [-v]
"""

from __future__ import annotations

import argparse
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from lamina.agents.ingest.slots import candidate_pairs, same_person
from lamina.agents.ingest.update_cues import may_change, pair_cue, plainly_said
from lamina.records.model import FactRecord

HERE = Path(__file__).resolve().parent
PAIRS = HERE.parent / "tests" / "data" / "supersession_pairs.json"
T0 = datetime(2024, 1, 1, tzinfo=UTC)


def replay(item: dict[str, Any], later_turns: list[dict[str, str]]) -> tuple[int, int, int]:
    """(candidate pairs, cued pairs, uncued pairs the model would be asked about).

    ``later_turns``: the item's later turns; those a newer fact's person spoke stand for
    that fact's own source turns.
    """
    earlier, later = [], []
    for i, f in enumerate(item["facts"]):
        when = T0 if f["side"] == "earlier" else T0 + timedelta(days=30)
        record = FactRecord(
            namespace="replay:x",
            text=f["text"],
            subject=f["subject"],
            kind=f["kind"],
            occurred_at=when,
            source_ids=[f"{f['side']}{i}"],
        )
        (earlier if f["side"] == "earlier" else later).append(record)
    said = {f.id: _spoken_by(later_turns, f.subject) for f in later}
    plain = plainly_said(later, said)
    pairs = candidate_pairs(later, earlier, plain=plain)
    cues = [pair_cue(p, said[p.new.id]) for p in pairs]
    cued = [p for p, cue in zip(pairs, cues, strict=True) if cue is not None]
    asked = [
        p
        for p, cue in zip(pairs, cues, strict=True)
        if cue is None and p.new.id not in plain and may_change(p)
    ]
    return len(pairs), len(cued), len(asked)


def _spoken_by(turns: list[dict[str, str]], person: str | None) -> list[str]:
    """The texts of the turns ``person`` spoke."""
    return [t["text"] for t in turns if same_person(t["speaker"], person)]


def main() -> None:
    """Print how many update items and controls the cues supersede."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path, default=HERE / "construction_supersession.json")
    parser.add_argument("-v", action="store_true", help="list the items the cues get wrong")
    args = parser.parse_args()
    items = json.loads(args.json.read_text(encoding="utf-8"))["per_item"]
    pairs_data = json.loads(PAIRS.read_text(encoding="utf-8"))["items"]
    later = {i["id"]: i["later"]["turns"] for i in pairs_data}
    counts = {"update": [0, 0], "control": [0, 0]}
    for item in items:
        pairs, cued, asked = replay(item, later.get(item["id"], []))
        counts[item["kind"]][0] += 1
        counts[item["kind"]][1] += bool(cued)
        if args.v and bool(cued) != (item["kind"] == "update"):
            print(f"{item['kind']:8} {item['id']}: {pairs} pairs, {cued} cued, {asked} asked")
    updates, controls = counts["update"], counts["control"]
    print(
        f"updates cued: {updates[1]} of {updates[0]}; controls cued: {controls[1]} of {controls[0]}"
    )


if __name__ == "__main__":
    main()
