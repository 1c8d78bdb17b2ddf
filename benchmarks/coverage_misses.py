r"""Why a LoCoMo observation is not covered by a built fact (issue 31), no LLM.

``benchmarks/construction_quality.py`` counts an observation as covered when one of its
evidence turns is the source of a constructed fact about the same person. This script
reads a store that benchmark built and sorts the observations it does not cover:

* ``no_note``: no fact at all came from any of its evidence turns (the model wrote
  nothing for them);
* ``other_owner``: facts came from its evidence turns, filed under someone else;

each split by whether the observation is about the speaker of its first evidence turn
(``about_speaker``) or about someone else. No observation text is printed: LoCoMo stays
out of the output.

Usage (the default calibration store, rebuilt from its kept replies)::

    python benchmarks/coverage_misses.py --store /tmp/cq-base/boundary/boundary/chroma \
        --conversations conv-41 conv-42 conv-43 conv-44 --sessions 12
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from construction_quality import people_by_turn

from lamina.embedders import MiniLMEmbeddings
from lamina.records.model import FactRecord
from lamina.stores import ChromaMemoryStore
from lamina_bench.datasets.locomo import Conversation, default_locomo_path, load_locomo
from lamina_bench.datasets.locomo_annotations import Annotations, load_annotations


def misses(
    store: ChromaMemoryStore, conv: Conversation, notes: Annotations, sessions: int
) -> Counter[str]:
    """The covered observations and the causes of the others, for one conversation."""
    built = set(conv.sessions()[:sessions])
    speaker_of = {t.dia_id: t.speaker for t in conv.turns}
    facts = [f for f in store.get("fact", conv.namespace) if isinstance(f, FactRecord)]
    about = people_by_turn(conv, facts)  # the benchmark's own count of coverage
    out: Counter[str] = Counter()
    for o in notes.observations:
        if not o.evidence or o.session_id not in built:
            continue
        out["observations"] += 1
        if any(o.person in about.get(d, set()) for d in o.evidence):
            out["covered"] += 1
            continue
        cause = "other_owner" if any(d in about for d in o.evidence) else "no_note"
        whose = "about_speaker" if speaker_of.get(o.evidence[0]) == o.person else "about_other"
        out[f"{cause}/{whose}"] += 1
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Print the breakdown (and save it with ``--json``)."""
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--data", type=Path, default=default_locomo_path())
    p.add_argument("--store", type=Path, required=True, help="a construction benchmark's chroma/")
    p.add_argument("--conversations", nargs="+", required=True)
    p.add_argument("--sessions", type=int, required=True, help="the sessions the store built")
    p.add_argument("--json", type=Path)
    args = p.parse_args(argv)
    store = ChromaMemoryStore.persistent(args.store, embeddings=MiniLMEmbeddings())
    convs = load_locomo(args.data, sample_ids=args.conversations)
    notes = load_annotations(args.data, [c.sample_id for c in convs])
    per = {c.sample_id: misses(store, c, notes[c.sample_id], args.sessions) for c in convs}
    total: Counter[str] = sum(per.values(), Counter())
    result = {
        "store": str(args.store),
        "sessions": args.sessions,
        "total": dict(sorted(total.items())),
        "per_conversation": {k: dict(sorted(v.items())) for k, v in per.items()},
    }
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
