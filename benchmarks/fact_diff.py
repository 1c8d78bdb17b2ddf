r"""The facts two construction stores of the same conversations hold differently (no LLM).

A construction check changed in code is replayed by building the calibration store again
from its kept replies (``construction_quality.py --replies``) before and after the change;
this prints, per source turn, the (owner, text) pairs only one of the two stores holds, and
counts them, so every fact a change touched can be read. The output quotes the stores
(LoCoMo text): read it, do not commit it.

Usage::

    python benchmarks/fact_diff.py BEFORE/chroma AFTER/chroma \
        --conversations conv-41 conv-42 conv-43 conv-44
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from lamina.embedders import MiniLMEmbeddings
from lamina.stores import ChromaMemoryStore

Facts = dict[tuple[str, ...], set[tuple[str, str]]]


def facts_by_source(store: ChromaMemoryStore, namespace: str) -> Facts:
    """(owner, text) of the namespace's facts, keyed by their sorted source turn ids."""
    out: Facts = defaultdict(set)
    for fact in store.get("fact", namespace):
        out[tuple(sorted(fact.source_ids))].add((fact.subject or "", fact.text))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Print the differing facts of each conversation, then the counts as JSON."""
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("before", type=Path, help="a construction store's chroma/")
    p.add_argument("after", type=Path, help="the same conversations built the other way")
    p.add_argument("--conversations", nargs="+", required=True)
    p.add_argument("--namespace", default="locomo:{sample}", help="the stores' namespaces")
    args = p.parse_args(argv)
    for path in (args.before, args.after):
        if not (path / "chroma.sqlite3").is_file():
            p.error(f"no Chroma store at {path}")
    before = ChromaMemoryStore.persistent(args.before, embeddings=MiniLMEmbeddings())
    after = ChromaMemoryStore.persistent(args.after, embeddings=MiniLMEmbeddings())
    counts = {"facts_before": 0, "facts_after": 0, "only_before": 0, "only_after": 0}
    for sample in args.conversations:
        namespace = args.namespace.format(sample=sample)
        raw = {r.id: r for r in before.get("raw", namespace)}
        old, new = facts_by_source(before, namespace), facts_by_source(after, namespace)
        counts["facts_before"] += sum(map(len, old.values()))
        counts["facts_after"] += sum(map(len, new.values()))
        for key in sorted(set(old) | set(new)):
            gone, came = old[key] - new[key], new[key] - old[key]
            if not (gone or came):
                continue
            turn = raw.get(key[0]) if key else None
            print(f"{sample} {turn.speaker}: {turn.text}" if turn else f"{sample} (no source)")
            for owner, text in sorted(gone):
                print(f"  - [{owner}] {text}")
            for owner, text in sorted(came):
                print(f"  + [{owner}] {text}")
            counts["only_before"] += len(gone)
            counts["only_after"] += len(came)
    print(json.dumps(counts))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
