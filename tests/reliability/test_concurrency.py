"""Concurrency: parallel writers (threads and asyncio) on one persistent store.

Writers add records to a shared namespace and to their own namespaces while readers
search (which builds BM25 mirrors mid-write). Afterwards: exact counts, no record lost
or duplicated, and every BM25 mirror holds the same documents with the same scores as a
mirror rebuilt from Chroma by a second store opened on the same path.
"""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from lamina.core.context import MemoryContext
from lamina.graphs.ingest import build_ingest_graph
from lamina.records import FactRecord, RawTurn
from lamina.stores import ChromaMemoryStore
from lamina.testing import FakeEmbeddings, SchemaChatModel

T0 = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)
WORDS = ["paris", "berlin", "guitar", "nurse", "garden", "train", "coffee", "book", "dog"]
QUERIES = ["paris guitar", "coffee dog train", "book", "nurse garden berlin"]


def _turn(ns: str, writer: int, n: int) -> RawTurn:
    words = " ".join(WORDS[(writer + n + k) % len(WORDS)] for k in range(3))
    return RawTurn(
        namespace=ns,
        text=f"writer {writer} turn {n} {words}",
        speaker=f"w{writer}",
        session_id=f"w{writer}",
        turn_index=n,
        occurred_at=T0 + timedelta(minutes=n),
    )


def _fact(ns: str, writer: int, n: int) -> FactRecord:
    return FactRecord(
        id=f"w{writer}-f{n}",
        namespace=ns,
        text=f"fact {n} of writer {writer} about {WORDS[n % len(WORDS)]}",
        occurred_at=T0 + timedelta(minutes=n),
    )


def _expected(fuzz: Any) -> dict[str, dict[str, set[str]]]:
    """namespace -> granularity -> ids the writers add."""
    out: dict[str, dict[str, set[str]]] = {}
    for w in range(fuzz.writers):
        for ns in ("shared", f"own-{w}"):
            slot = out.setdefault(ns, {"raw": set(), "fact": set()})
            slot["raw"] |= {_turn(ns, w, n).id for n in range(fuzz.records_per_writer)}
            slot["fact"] |= {f"w{w}-f{n}" for n in range(fuzz.records_per_writer)}
    return out


def _write(store: ChromaMemoryStore, writer: int, fuzz: Any) -> None:
    for n in range(fuzz.records_per_writer):
        for ns in ("shared", f"own-{writer}"):
            store.add(ns, [_turn(ns, writer, n)])
            if n % 3 == 0:  # re-adding must stay a no-op, not a duplicate
                store.add(ns, [_turn(ns, writer, n)])
            store.add(ns, [_fact(ns, writer, n)])


def _read(store: ChromaMemoryStore, stop: threading.Event) -> int:
    done = 0
    while not stop.is_set():
        for query in QUERIES:
            for hit in store.search(query, "raw", "shared", k=5, mode="bm25"):
                assert hit.record.namespace == "shared"
            store.search(query, "fact", "shared", k=5)
            done += 1
    return done


def assert_consistent(store: ChromaMemoryStore, path: Path, expected: Any) -> None:
    fresh = ChromaMemoryStore.persistent(path, embeddings=FakeEmbeddings())
    for ns, by_gran in expected.items():
        for gran, ids in by_gran.items():
            records = store.get(gran, ns)
            assert sorted(r.id for r in records) == sorted(ids), (ns, gran)  # none lost, no dup
            assert store.count(gran, ns) == len(ids)
            assert fresh.count(gran, ns) == len(ids)
            mirror, rebuilt = store.lexical_index(gran, ns), fresh.lexical_index(gran, ns)
            assert mirror.ids() == rebuilt.ids() == ids, (ns, gran)
            for query in QUERIES:
                assert mirror.scores(query) == rebuilt.scores(query), (ns, gran, query)


def test_threads_write_while_others_search(tmp_path: Path, fuzz: Any) -> None:
    path = tmp_path / "chroma"
    store = ChromaMemoryStore.persistent(path, embeddings=FakeEmbeddings())
    stop = threading.Event()
    with ThreadPoolExecutor(max_workers=fuzz.writers + 2) as pool:
        readers = [pool.submit(_read, store, stop) for _ in range(2)]
        writers = [pool.submit(_write, store, w, fuzz) for w in range(fuzz.writers)]
        for f in writers:
            f.result()
        stop.set()
        assert all(r.result() >= 0 for r in readers)
    assert_consistent(store, path, _expected(fuzz))


def test_asyncio_writers_share_one_store(tmp_path: Path, fuzz: Any) -> None:
    path = tmp_path / "chroma"
    store = ChromaMemoryStore.persistent(path, embeddings=FakeEmbeddings())

    async def main() -> None:
        await asyncio.gather(
            *(asyncio.to_thread(_write, store, w, fuzz) for w in range(fuzz.writers))
        )

    asyncio.run(main())
    assert_consistent(store, path, _expected(fuzz))


def test_parallel_ingest_graphs_lose_no_turn(tmp_path: Path, fuzz: Any) -> None:
    """``ainvoke`` ingests into the same and different namespaces at once."""
    path = tmp_path / "chroma"
    store = ChromaMemoryStore.persistent(path, embeddings=FakeEmbeddings())
    model = SchemaChatModel()
    for _ in range(20 * fuzz.writers):
        model.script("ConstructionLines", "T|x\nS|x")
    graph = build_ingest_graph(chat_model=model, store=store).compile()

    def turns(writer: int) -> list[dict[str, Any]]:
        return [
            {
                "speaker": f"w{writer}",
                "text": _turn("x", writer, n).text,
                "session_id": f"w{writer}",
                "occurred_at": T0 + timedelta(minutes=n),
                **({"turn_index": n} if writer % 2 else {}),  # half rely on auto-indexing
            }
            for n in range(fuzz.records_per_writer)
        ]

    async def main() -> list[Any]:
        jobs = []
        for w in range(fuzz.writers):
            for ns in ("shared", f"own-{w}"):
                ctx = MemoryContext(namespace=ns, trigger_policy="recurrence")
                jobs.append(graph.ainvoke({"turns": turns(w)}, context=ctx))
                jobs.append(graph.ainvoke({"turns": turns(w)}, context=ctx))  # a resend
        return await asyncio.gather(*jobs)

    outs = asyncio.run(main())
    failures = [f for o in outs for f in o["failures"]]
    assert not failures, failures[:5]  # what failed, when the machine's load shows a race
    for w in range(fuzz.writers):
        for ns in ("shared", f"own-{w}"):
            mine = [r for r in store.get("raw", ns, where={"session_id": f"w{w}"})]
            assert sorted(r.text for r in mine) == sorted(t["text"] for t in turns(w)), (ns, w)
            indexes = [r.turn_index for r in mine]  # type: ignore[attr-defined]
            assert sorted(indexes) == list(range(fuzz.records_per_writer)), (ns, w, indexes)
    expected = {
        ns: {"raw": {r.id for r in store.get("raw", ns)}}
        for ns in ["shared", *(f"own-{w}" for w in range(fuzz.writers))]
    }
    assert len(expected["shared"]["raw"]) == fuzz.writers * fuzz.records_per_writer
    assert_consistent(store, path, expected)
