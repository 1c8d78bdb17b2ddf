"""The peer tests' fixtures: the LoCoMo-shaped file, its subset, the OpenAI stub, mem0's env."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from lamina_bench.evaluation.subset import Subset, load_subset
from tests.evaluation.peer_doubles import OpenAIStub, locomo_file


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return locomo_file(tmp_path / "locomo.json")


@pytest.fixture
def subset(data: Path) -> Subset:
    return load_subset(data, conversations=None)


@pytest.fixture
def stub() -> Iterator[OpenAIStub]:
    server = OpenAIStub()
    yield server
    server.close()


@pytest.fixture
def mem0_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """mem0's telemetry off and its home folder under the test's folder."""
    monkeypatch.setenv("MEM0_TELEMETRY", "False")
    monkeypatch.setenv("MEM0_DIR", str(tmp_path / "mem0-home"))
