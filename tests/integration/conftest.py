"""Fixtures shared by the integration tests: a ``langgraph dev`` server for the session."""

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
from collections.abc import Iterator
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
STARTUP_TIMEOUT_S = 180


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _server_env(llm: Any, data_dir: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OPENAI_", "LAMINA_", "CHROMA_", "LANGSMITH_", "LANGCHAIN_"))
    }
    env.update(
        OPENAI_BASE_URL=llm.base_url,
        OPENAI_MODEL=llm.model_alias,
        LAMINA_DATA_DIR=str(data_dir),
        LAMINA_TIMEOUT="180",
        ANONYMIZED_TELEMETRY="False",
        LANGGRAPH_NO_VERSION_CHECK="true",
        LANGGRAPH_CLI_NO_ANALYTICS="1",
        LANGSMITH_TRACING="false",
    )
    return env


@pytest.fixture(scope="session")
def studio(local_llm, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:  # type: ignore[no-untyped-def]
    """``langgraph dev`` on a free loopback port, stopped (process group) afterwards."""
    exe = shutil.which("langgraph", path=str(Path(sys.executable).parent))
    if exe is None or find_spec("langgraph_api") is None:
        pytest.skip("langgraph-cli[inmem] is not installed (`pip install -e '.[dev]'`)")
    work = tmp_path_factory.mktemp("studio")
    config = json.loads((REPO / "langgraph.json").read_text())
    # the repo's langgraph.json as is, except that a developer's .env must not leak in
    config["env"] = {}
    config["dependencies"] = [str(REPO)]
    (work / "langgraph.json").write_text(json.dumps(config))
    port = _free_port()
    log_path = work / "server.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [
                exe,
                "dev",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--no-browser",
                "--no-reload",
                "--config",
                str(work / "langgraph.json"),
            ],
            cwd=work,  # its .langgraph_api folder goes here, not into the repository
            env=_server_env(local_llm, work / "data"),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        while True:
            try:
                with opener.open(f"{url}/ok", timeout=2):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(
                        f"langgraph dev did not start: {log_path.read_text()[-3000:]}"
                    ) from None
                time.sleep(0.5)
        yield url, work / "data"
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)
