r"""Replay construction's kind check on facts a model already built, no model.

Reads every fact of one or more built Chroma stores (an evaluation's construction folder
or a construction benchmark's ``--resume`` folder) and files its kind again with
:func:`~lamina.agents.ingest.extraction.kinds.checked_kind`, the stored kind standing in for the
model's tag. Prints how many facts each (stored kind, checked kind) pair holds, and with
``-v`` a few statements of every corrected pair, so a reader can judge the rule on real
model output. The stores are machine-local; a fact seen in several stores counts once.

Usage::

    python benchmarks/kind_replay.py \
        eval-results/construction-long2/lamina-boundary-2ecc3fbc1892/chroma [-v]
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path

from lamina.agents.ingest.extraction.kinds import checked_kind
from lamina.records.model import FactRecord, Granularity
from lamina.stores.codec import from_metadata


def stored_facts(paths: Sequence[Path]) -> list[FactRecord]:
    """Every fact record of the stores, once each (by id), decoded as the store decodes it.

    Each store is read from a copy, as ``owner_replay.py`` does: opening a Chroma folder may
    write to it, and the one read may belong to a run still going.
    """
    import chromadb

    seen: dict[str, FactRecord] = {}
    for path in paths:
        with tempfile.TemporaryDirectory() as tmp:
            shutil.copytree(path, Path(tmp) / "c")
            client = chromadb.PersistentClient(str(Path(tmp) / "c"))
            for collection in client.list_collections():
                if not collection.name.endswith("_fact"):
                    continue
                for meta in collection.get(include=["metadatas"])["metadatas"] or []:
                    fact = from_metadata(Granularity.FACT, dict(meta))
                    if isinstance(fact, FactRecord):
                        seen.setdefault(fact.id, fact)
    return list(seen.values())


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("stores", type=Path, nargs="+", help="Chroma folders of built memory")
    p.add_argument("-v", "--verbose", action="store_true", help="print corrected examples")
    args = p.parse_args(argv)
    for path in args.stores:
        if not path.is_dir():
            raise SystemExit(f"{path}: no such folder (a built store's chroma folder)")
    facts = stored_facts(args.stores)
    if not facts:
        raise SystemExit("no fact records in those stores")
    pairs: Counter[tuple[str, str]] = Counter()
    examples: dict[tuple[str, str], list[str]] = defaultdict(list)
    for fact in facts:
        kind, _ = checked_kind(fact.kind, fact.text)
        pairs[(fact.kind, kind)] += 1
        if kind != fact.kind:
            examples[(fact.kind, kind)].append(fact.text)
    corrected = sum(n for (a, b), n in pairs.items() if a != b)
    print(f"{len(facts)} facts, {corrected} kinds corrected")
    for (stored, checked), n in sorted(pairs.items()):
        print(f"  {stored:>10} -> {checked:<10} {n}")
    if args.verbose:
        rng = random.Random(0)
        for pair, texts in sorted(examples.items()):
            print(f"== {pair[0]} -> {pair[1]}")
            for text in rng.sample(texts, min(6, len(texts))):
                print(f"   {text[:120]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
