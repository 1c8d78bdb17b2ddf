r"""Whom an episode summary's sentences name first, against LoCoMo's labels (issue 31).

Replays :func:`lamina.agents.ingest.ownership.reported.owned_summary` over the episodes of a
built store (no LLM) and labels each summary sentence, before and after, the way the
construction benchmark labels a note's owner: the sentence's source is the turn of its
episode that shares the most of its content words (at least two, and more than any
other turn), and its label is the person LoCoMo's observations citing that turn are
about, when they are all about one person. The sentence is right when the first
speaker it names is that person. Sentences of what someone did to the other ("Priya
congratulated Jonas on the marathon") are labelled by the news they answer, so the
figure undercounts right sentences alike before and after; it compares the two, it is
no accuracy of its own.

Usage (the construction benchmark's store of conv-41..44)::

    python benchmarks/summary_owner_replay.py --store /tmp/cq-base/boundary/boundary/chroma \
        --conversations conv-41 conv-42 conv-43 conv-44 --json benchmarks/summary_owner_replay.json
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from construction_quality import owners_by_turn

from lamina.agents.common.formatting import SENTENCE_BREAK
from lamina.agents.ingest.evidence.support import content_terms, source_terms
from lamina.agents.ingest.ownership.reported import owned_summary
from lamina.embedders import MiniLMEmbeddings
from lamina.records.model import EpisodeRecord, RawTurn
from lamina.stores import ChromaMemoryStore
from lamina_bench.datasets.locomo import Conversation, default_locomo_path, load_locomo
from lamina_bench.datasets.locomo_annotations import load_annotations

MIN_SHARED = 2
"""Content words a sentence must share with its source turn to be labelled."""


def first_named(sentence: str, people: Sequence[str]) -> str | None:
    """The speaker ``sentence`` names first, or None."""
    found = [
        (m.start(), p)
        for p in people
        if (m := re.search(rf"\b{re.escape(p.split()[0])}\b", sentence)) is not None
    ]
    return min(found)[1] if found else None


def label(sentence: str, turns: Sequence[Any], people: Sequence[str], owners: dict) -> bool | None:
    """Whether ``sentence`` names its source turn's labelled person first (None: unlabelled)."""
    named = first_named(sentence, people)
    terms = content_terms(sentence, people)
    if named is None or len(terms) < MIN_SHARED:
        return None
    shared = sorted(
        ((len(terms & source_terms([t.text, t.caption or ""])), n) for n, t in enumerate(turns)),
        reverse=True,
    )
    if (
        not shared
        or shared[0][0] < MIN_SHARED
        or (len(shared) > 1 and shared[1][0] == shared[0][0])
    ):
        return None
    about = owners.get(turns[shared[0][1]].dia_id, set())
    if len(about) != 1:
        return None
    return named.split()[0] == next(iter(about)).split()[0]


def replay(
    store: ChromaMemoryStore, conv: Conversation, namespace: str, owners: dict
) -> Counter[str]:
    """Labelled sentences right before and after, and sentences changed, of one conversation."""
    people = list(conv.speakers)
    by_id = {RawTurn.turn_id(namespace, t.session_id, t.turn_index): t for t in conv.turns}
    out: Counter[str] = Counter()
    for episode in store.get("episode", namespace):
        if not isinstance(episode, EpisodeRecord):
            continue
        turns = [by_id[i] for i in episode.source_ids if i in by_id]
        stored = sorted(
            (
                r
                for r in store.get("raw", namespace, list(episode.source_ids))
                if isinstance(r, RawTurn)
            ),
            key=lambda r: (r.session_id, r.turn_index),
        )
        summary = episode.text.split("\n")[0]
        for sentence in SENTENCE_BREAK.split(summary):
            new, changed = owned_summary(sentence, stored, people)
            out["sentences"] += 1
            out["changed"] += changed
            before, after = (
                label(sentence, turns, people, owners),
                label(new, turns, people, owners),
            )
            if before is not None:
                out["labelled"] += 1
                out["right_before"] += before
                out["right_after"] += bool(after)
                out["fixed"] += changed and not before and bool(after)
                out["broken"] += changed and before and not after
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Print (and optionally save) the replay's counts."""
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--data", type=Path, default=default_locomo_path())
    p.add_argument("--store", type=Path, required=True, help="a construction store's chroma/")
    p.add_argument("--conversations", nargs="+", required=True)
    p.add_argument("--collection-prefix", default="", help="'eval' for an evaluation's store")
    p.add_argument("--namespace", help="the store's namespaces, e.g. 'lamina-boundary/{sample}'")
    p.add_argument("--json", type=Path)
    args = p.parse_args(argv)
    prefix = {"collection_prefix": args.collection_prefix} if args.collection_prefix else {}
    store = ChromaMemoryStore.persistent(args.store, embeddings=MiniLMEmbeddings(), **prefix)
    notes = load_annotations(args.data, list(args.conversations))
    total: Counter[str] = Counter()
    for conv in load_locomo(args.data, sample_ids=args.conversations):
        namespace = (
            args.namespace.format(sample=conv.sample_id) if args.namespace else conv.namespace
        )
        total += replay(store, conv, namespace, owners_by_turn(notes[conv.sample_id]))
    n = total["labelled"]
    result = {
        "store": str(args.store),
        "conversations": args.conversations,
        **{k: total[k] for k in ("sentences", "changed", "labelled", "fixed", "broken")},
        "named_first_right_before": round(total["right_before"] / n, 3) if n else None,
        "named_first_right_after": round(total["right_after"] / n, 3) if n else None,
    }
    print(json.dumps(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
