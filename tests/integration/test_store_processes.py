"""Several processes on one store: a real ``chroma run`` server (and a shared persistent
path) with writer and reader processes started by the test.

* a turn written by process A is found by process B's next hybrid search, on both
  channels, with no refresh in between;
* two writer processes add 500 turns each to one namespace: 1,000 stored, none twice;
* the server is killed in the middle of an ingest: the writer stops with a clear error,
  every batch it had finished survives the restart, and re-running the ingest completes
  it with nothing lost and nothing duplicated.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path

import pytest

from lamina.errors import StoreUnavailableError
from lamina.records import Granularity, RawTurn
from lamina.stores import ChromaMemoryStore
from lamina.testing import FakeEmbeddings

pytestmark = pytest.mark.integration
NS = "user:alice"

WORKER = r"""
import json, sys, time
from datetime import UTC, datetime, timedelta
from lamina.errors import StoreUnavailableError
from lamina.records import RawTurn
from lamina.stores import ChromaMemoryStore
from lamina.testing import FakeEmbeddings

args = json.loads(sys.argv[1])
T0 = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)


def open_store():
    if args.get("path"):
        return ChromaMemoryStore.persistent(args["path"], embeddings=FakeEmbeddings())
    return ChromaMemoryStore.http(
        "127.0.0.1", args["port"], embeddings=FakeEmbeddings(), collection_prefix=args["prefix"]
    )


def turn(i):
    return RawTurn(
        namespace=args["ns"], text=args["text"].format(i=i), speaker=args["speaker"],
        session_id=args["speaker"], turn_index=i, occurred_at=T0 + timedelta(minutes=i),
    )


try:
    store = open_store()
    if args["role"] == "write":
        lo, hi, batch = args["start"], args["stop"], args["batch"]
        for b in range(lo, hi, batch):
            store.add(args["ns"], [turn(i) for i in range(b, min(b + batch, hi))])
            print(f"done {min(b + batch, hi)}", flush=True)
            time.sleep(args.get("pause", 0))
    else:  # read: load the mirror, wait for the test, search again
        first = store.search(args["query"], "raw", args["ns"], mode="bm25")
        print(json.dumps([h.record.id for h in first]), flush=True)
        sys.stdin.readline()
        hits = store.search(args["query"], "raw", args["ns"], k=5)
        print(json.dumps([[h.record.id, h.ranks] for h in hits]), flush=True)
        print(json.dumps(sorted(store.lexical_index("raw", args["ns"]).ids())), flush=True)
except StoreUnavailableError as e:
    print(f"UNAVAILABLE {e}", flush=True)
    sys.exit(3)
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ChromaServer:
    """A ``chroma run`` process this test can kill and restart on the same data."""

    def __init__(self, path: Path) -> None:
        exe = shutil.which("chroma", path=str(Path(sys.executable).parent)) or shutil.which(
            "chroma"
        )
        if exe is None:
            pytest.fail("the `chroma` CLI (from chromadb) is not installed")
        self.exe, self.path, self.port = exe, path, _free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        log = open(self.path / "server.log", "ab")  # noqa: SIM115 - closed with the process
        data = self.path / "data"
        cmd = [
            self.exe,
            "run",
            "--path",
            str(data),
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
        ]
        self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while True:
            try:
                url = f"http://127.0.0.1:{self.port}/api/v2/heartbeat"
                with urllib.request.urlopen(url, timeout=1):
                    return
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(
                        "chroma server did not start: "
                        + (self.path / "server.log").read_text()[-2000:]
                    ) from None
                time.sleep(0.2)

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()


@pytest.fixture
def server(tmp_path: Path):  # type: ignore[no-untyped-def]
    srv = ChromaServer(tmp_path)
    srv.start()
    yield srv
    srv.stop()


def worker(tmp_path: Path, **args: object) -> subprocess.Popen[str]:
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    env = {**os.environ, "ANONYMIZED_TELEMETRY": "False"}
    return subprocess.Popen(
        [sys.executable, str(script), json.dumps(args)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def finish(proc: subprocess.Popen[str], timeout: float = 600) -> tuple[int, str]:
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out + err


def turn_id(i: int, ns: str = NS, speaker: str = "w") -> str:
    return RawTurn.turn_id(ns, speaker, i)


def read_then_write(tmp_path: Path, connection: dict[str, object]) -> None:
    """Process B loads its mirror, process A writes, B's next hybrid search finds it."""
    reader = worker(tmp_path, role="read", ns=NS, query="zeppelin Lisbon", **connection)
    assert reader.stdout is not None and reader.stdin is not None
    first = reader.stdout.readline()
    assert json.loads(first) == [], first + (reader.stderr.read() if reader.poll() else "")
    code, out = finish(
        worker(
            tmp_path,
            role="write",
            ns=NS,
            start=0,
            stop=1,
            batch=1,
            text="we rode a zeppelin over Lisbon ({i})",
            speaker="w",
            **connection,
        )
    )
    assert code == 0, out
    reader.stdin.write("go\n")
    reader.stdin.flush()
    code, out = finish(reader)
    assert code == 0, out
    hits = json.loads(out.splitlines()[0])
    assert hits[0][0] == turn_id(0)
    assert set(hits[0][1]) == {"dense", "bm25"}  # found on both channels


def test_a_write_in_one_process_reaches_the_next_search_in_another(
    server: ChromaServer, tmp_path: Path
) -> None:
    read_then_write(tmp_path, {"port": server.port, "prefix": f"p{uuid.uuid4().hex[:8]}"})


def test_the_same_on_a_shared_persistent_path(tmp_path: Path) -> None:
    """Embedded Chroma: the reader's HNSW segment lacks the writer's vectors, so its mirror
    re-derives them with the same embeddings; the turn still ranks on both channels."""
    read_then_write(tmp_path, {"path": str(tmp_path / "shared")})


def test_two_writer_processes_lose_and_duplicate_nothing(
    server: ChromaServer, tmp_path: Path
) -> None:
    prefix = f"p{uuid.uuid4().hex[:8]}"
    connection = {"port": server.port, "prefix": prefix}
    watcher = ChromaMemoryStore.http(
        "127.0.0.1", server.port, embeddings=FakeEmbeddings(), collection_prefix=prefix
    )
    assert watcher.lexical_index("raw", NS).ids() == set()  # mirror loaded before the writes
    writers = [
        worker(
            tmp_path,
            role="write",
            ns=NS,
            start=0,
            stop=500,
            batch=10,
            text=f"writer {w} says hello number {{i}}",
            speaker=f"w{w}",
            **connection,
        )
        for w in range(2)
    ]
    for proc in writers:
        code, out = finish(proc)
        assert code == 0, out
    expected = {turn_id(i, speaker=f"w{w}") for w in range(2) for i in range(500)}
    stored = [r.id for r in watcher.get("raw", NS)]
    assert len(stored) == 1000 and set(stored) == expected
    assert watcher.count("raw", NS) == 1000
    assert watcher.lexical_index("raw", NS).ids() == expected  # caught up, no refresh
    changes = watcher._log.since(Granularity.RAW, NS, 0)
    assert changes is not None and changes[1] == 100  # 2 x 50 batches, one slot each, no gap
    hit = watcher.search("writer 1 says hello number 437", "raw", NS, k=1)[0]
    assert hit.record.id == turn_id(437, speaker="w1")


def test_a_server_killed_mid_ingest_resumes_with_nothing_lost_or_duplicated(
    tmp_path: Path,
) -> None:
    srv = ChromaServer(tmp_path)
    srv.start()
    try:
        connection = {"port": srv.port, "prefix": "resume"}
        job = dict(
            role="write",
            ns=NS,
            start=0,
            stop=600,
            batch=20,
            text="turn {i} of the long ingest",
            speaker="w",
            **connection,
        )
        import chromadb

        client = chromadb.HttpClient(host="127.0.0.1", port=srv.port)  # made while it is up
        first = worker(tmp_path, pause=0.05, **job)  # type: ignore[arg-type]
        assert first.stdout is not None
        acked = 0
        while acked < 200:
            line = first.stdout.readline()
            assert line.startswith("done"), line + first.stderr.read()  # type: ignore[union-attr]
            acked = int(line.split()[1])
        srv.kill()
        code, out = finish(first)
        assert code == 3, out
        assert "UNAVAILABLE" in out and f"127.0.0.1:{srv.port} is unreachable" in out
        assert "Restart the server" in out
        acked = max([acked] + [int(x.split()[1]) for x in out.splitlines() if x.startswith("done")])
        assert acked < 600  # it really died mid-ingest
        with pytest.raises(StoreUnavailableError, match="Restart the server"):
            ChromaMemoryStore.http("127.0.0.1", srv.port, embeddings=FakeEmbeddings())
        with pytest.raises(StoreUnavailableError, match=f"127.0.0.1:{srv.port} is unreachable"):
            ChromaMemoryStore(client, embeddings=FakeEmbeddings(), collection_prefix="resume")

        srv.start()  # same data directory, same port
        store = ChromaMemoryStore.http(
            "127.0.0.1", srv.port, embeddings=FakeEmbeddings(), collection_prefix="resume"
        )
        survived = {r.id for r in store.get("raw", NS)}
        assert {turn_id(i) for i in range(acked)} <= survived  # every finished batch is there

        code, out = finish(worker(tmp_path, **job))  # type: ignore[arg-type]
        assert code == 0, out
        stored = [r.id for r in store.get("raw", NS)]
        assert len(stored) == 600 and set(stored) == {turn_id(i) for i in range(600)}
        assert store.lexical_index("raw", NS).ids() == set(stored)
        hit = store.search("turn 517 of the long ingest", "raw", NS, k=1)[0]
        assert hit.record.id == turn_id(517) and set(hit.ranks) == {"dense", "bm25"}
    finally:
        srv.stop()
