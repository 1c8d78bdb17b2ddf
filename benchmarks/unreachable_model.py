"""How fast an unreachable model is reported: ``Memory.answer`` and ``lamina ask``.

Points a default ``ChatOpenAI`` (its own retry settings: 2 retries with backoff) at a
closed loopback port, remembers one turn, and times ``answer()`` until it raises
:class:`~lamina.errors.ModelUnreachableError`; then runs ``lamina ask`` against
the same port in a subprocess and reports its exit status and wall time. Prints the
figures; ``--json`` writes them too.

    .venv/bin/python benchmarks/unreachable_model.py --repeat 5
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from langchain_openai import ChatOpenAI

from lamina import Memory
from lamina.errors import ModelUnreachableError
from lamina.stores import ChromaMemoryStore
from lamina.testing import FakeEmbeddings


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def time_answer() -> tuple[float, str]:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    model = ChatOpenAI(base_url=url, api_key="not-needed", model="qwen2.5")
    store = ChromaMemoryStore.ephemeral(embeddings=FakeEmbeddings())
    with Memory(store=store, chat_model=model) as memory:
        at = datetime(2024, 5, 8, 18, 20, tzinfo=UTC)
        memory.add("I adopted a greyhound called Biscuit", namespace="user:alice", at=at)
        started = time.perf_counter()
        try:
            memory.answer("What is my dog called?", namespace="user:alice")
        except ModelUnreachableError as e:
            return time.perf_counter() - started, str(e)
    raise SystemExit("answer() did not raise ModelUnreachableError")


def time_cli(data_dir: Path) -> tuple[float, int, str]:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "LAMINA_"))}
    command = [
        sys.executable,
        "-m",
        "lamina",
        "ask",
        "What is my dog called?",
        "--base-url",
        url,
        "--model",
        "qwen2.5",
        "--data-dir",
        str(data_dir),
    ]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    return time.perf_counter() - started, done.returncode, done.stderr.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    seconds, message = [], ""
    for _ in range(args.repeat):
        elapsed, message = time_answer()
        seconds.append(elapsed)
    with tempfile.TemporaryDirectory() as tmp:
        cli_seconds, status, stderr = time_cli(Path(tmp))
    figures = {
        "answer_raise_s": {
            "runs": len(seconds),
            "median": round(statistics.median(seconds), 2),
            "max": round(max(seconds), 2),
        },
        "answer_message": message,
        "cli_ask": {"exit_status": status, "wall_s": round(cli_seconds, 2), "stderr": stderr},
    }
    print(
        f"answer() raised ModelUnreachableError in {figures['answer_raise_s']['median']} s "
        f"(median of {len(seconds)}, max {figures['answer_raise_s']['max']} s)"
    )
    print(f"  {message}")
    print(f"lamina ask: exit {status} after {cli_seconds:.2f} s (process start included)")
    print(f"  {stderr}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
