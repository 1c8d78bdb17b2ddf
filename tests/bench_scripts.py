"""Loading a script of ``benchmarks/`` (not a package) as a module in a test."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def load_benchmark(name: str, monkeypatch: pytest.MonkeyPatch | None = None) -> ModuleType:
    """``benchmarks/<name>.py`` as a fresh module.

    With ``monkeypatch``, ``benchmarks/`` is on ``sys.path`` for the test, for a script that
    imports another one (``from construction_quality import ...``).
    """
    if monkeypatch is not None:
        monkeypatch.syspath_prepend(str(BENCHMARKS))
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
