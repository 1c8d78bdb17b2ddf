r"""derived-oracle's store for calibration conversations (issue 31's ceiling, no LLM).

The long run's ``derived-oracle`` system answers from lamina's raw layer plus LoCoMo's
hand-written observations, event summaries and session summaries as the derived layers
(``lamina_bench.evaluation.ingest.derived_oracle_records``). This script builds the same records
for the conversations a construction benchmark store holds, cut to the same sessions and
in the same namespaces, into a new Chroma store, so that ``budget_answers.py
--arm oracle:store=<out>/chroma`` answers from them beside the model's own build: how far
good derived memory lifts lamina's end-to-end answers on conversations the long run does
not use, measured the way every calibration design was.

The store holds LoCoMo text: keep it out of the repository (``--out`` under /tmp).

Usage::

    python benchmarks/derived_oracle_store.py --out /tmp/cq-doracle \
        --conversations conv-41 conv-42 --sessions 12
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from lamina.embedders import MiniLMEmbeddings
from lamina.stores import ChromaMemoryStore
from lamina_bench.datasets.locomo import default_locomo_path, load_locomo
from lamina_bench.datasets.locomo_annotations import load_annotations
from lamina_bench.evaluation.ingest import derived_oracle_records
from lamina_bench.evaluation.subset import first_sessions


def main(argv: Sequence[str] | None = None) -> int:
    """Build the store and print what it holds per conversation."""
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--data", type=Path, default=None, help="locomo10.json (default: ../shared)")
    p.add_argument("--out", type=Path, required=True, help="folder of the new store")
    p.add_argument("--conversations", nargs="+", required=True)
    p.add_argument("--sessions", type=int, default=None, help="only the first N sessions")
    p.add_argument("--namespace", default="locomo:{sample}", help="the store's namespaces")
    args = p.parse_args(argv)
    data = args.data or default_locomo_path()
    target = args.out / "chroma"
    if target.exists():
        p.error(f"{target} exists; remove it or choose another --out")
    conversations = load_locomo(data, sample_ids=args.conversations)
    missing = sorted(set(args.conversations) - {c.sample_id for c in conversations})
    if missing:
        p.error(f"not in {data}: {', '.join(missing)}")
    notes = load_annotations(data, args.conversations)  # refuses when annotations are missing
    store = ChromaMemoryStore.persistent(target, embeddings=MiniLMEmbeddings())
    built: dict[str, dict[str, int]] = {}
    for conv in conversations:
        conv = first_sessions(conv, args.sessions)
        namespace = args.namespace.format(sample=conv.sample_id)
        records = derived_oracle_records(store, namespace, conv, notes[conv.sample_id])
        store.add(namespace, records)
        built[conv.sample_id] = dict(Counter(r.granularity.value for r in records))
    print(json.dumps({"store": str(target), "records": built}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
