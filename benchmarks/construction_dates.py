"""Date accuracy of built memory on the hand-labelled LoCoMo time expressions.

The labels (``tests/data/locomo_relative_dates.json``) give, for a relative time
expression in a turn ("last week", "next month"), the day or interval it means. The
stored event dates of the raw turn that holds it, and of the facts drawn from that turn,
are compared with them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lamina.stores import ChromaMemoryStore
from lamina_bench.datasets.locomo import Conversation

LABELS = Path(__file__).resolve().parents[1] / "tests" / "data" / "locomo_relative_dates.json"


def date_accuracy(
    store: ChromaMemoryStore, conversations: Sequence[Conversation]
) -> dict[str, Any]:
    """Stored event dates of the hand-labelled expressions against their labels.

    ``raw``: the resolved dates on the raw turn that holds the expression. ``facts``:
    every fact drawn from a labelled turn that carries an event time and names that
    expression or its labelled dates; it is right when its event time is the labelled
    day or interval.
    """
    from datetime import date

    from lamina.records.model import FactRecord, RawTurn, TimeRef

    labels = json.loads(LABELS.read_text(encoding="utf-8"))["entries"]
    raw_ok = raw_n = fact_ok = fact_n = 0
    for conv in conversations:
        by_dia = {t.dia_id: t for t in conv.turns}
        mine = [e for e in labels if e["conversation"] == conv.sample_id]
        facts = [f for f in store.get("fact", conv.namespace) if isinstance(f, FactRecord)]
        for e in mine:
            turn = by_dia.get(e["dia_id"])
            if turn is None:
                continue
            rid = RawTurn.turn_id(conv.namespace, turn.session_id, turn.turn_index)
            stored = store.get("raw", conv.namespace, [rid])
            if not stored or not isinstance(stored[0], RawTurn):
                continue
            want = (e["start"], e["end"])
            refs = [
                r
                for r in stored[0].time_refs
                if e["expression"].lower() in r.expression.lower()
                or r.expression.lower() in e["expression"].lower()
            ]
            raw_n += 1
            raw_ok += bool(refs) and (str(refs[0].start), str(refs[0].end)) == want
            said = TimeRef(
                expression=e["expression"],
                offset=0,
                start=date.fromisoformat(e["start"]),
                end=date.fromisoformat(e["end"]),
                granularity=e["granularity"],
            ).label()
            for fact in facts:
                if rid not in fact.source_ids or not (fact.point_in_time or fact.start_time):
                    continue
                if e["expression"].lower() not in fact.text.lower() and said not in fact.text:
                    continue  # the fact is about another time the turn mentions
                first = fact.point_in_time or fact.start_time
                last = fact.point_in_time or fact.end_time or first
                assert first is not None and last is not None
                fact_n += 1
                fact_ok += (first.date().isoformat(), last.date().isoformat()) == want
    return {
        "raw_labelled": raw_n,
        "raw_correct": raw_ok,
        "raw_accuracy": round(raw_ok / raw_n, 4) if raw_n else None,
        "facts_with_event_time": fact_n,
        "facts_correct": fact_ok,
        "fact_accuracy": round(fact_ok / fact_n, 4) if fact_n else None,
    }
