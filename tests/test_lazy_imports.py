"""``import lamina`` stays light: the heavy libraries load on first use of a name.

Issue 17 sets ``import lamina`` at 0.5 s or less; ``benchmarks/import_time.py`` measures
it. These tests check the cause, never a time (the machine is noisy): a bare import loads
none of the libraries below, and every public name still resolves to the object its
module defines, the one the ``TYPE_CHECKING`` imports show to type checkers.

Each import check runs in a fresh interpreter, because the test session itself has long
imported everything (conftest.py builds Chroma stores).
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from importlib import import_module
from pathlib import Path

import pytest

import lamina
import lamina.stores

HEAVY = (
    "chromadb",
    "httpx",
    "langchain_core",
    "langchain_openai",
    "langgraph",
    "numpy",
    "onnxruntime",
    "openai",
    "pydantic",
    "rank_bm25",
    "tokenizers",
    "xllamacpp",
)
"""Top-level packages that each take 0.1 s or more to import (tokenizers: its native
library), measured with ``python -X importtime -c "import <name>"``."""

PACKAGE = Path(lamina.__file__).parent


def _heavy_after(code: str) -> list[str]:
    """The modules of :data:`HEAVY` loaded in a fresh interpreter after running ``code``."""
    probe = (
        f"{code}\nimport json, sys\n"
        f"print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r})))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    loaded: list[str] = json.loads(done.stdout.splitlines()[-1])
    return loaded


def test_a_bare_import_loads_no_heavy_library() -> None:
    assert _heavy_after("import lamina") == []


def test_the_errors_and_the_store_face_load_no_heavy_library() -> None:
    code = "import lamina.stores\nfrom lamina import LaminaError\nimport lamina.errors"
    assert _heavy_after(code) == []


def test_a_record_model_needs_pydantic_only() -> None:
    heavy = _heavy_after("from lamina.stores import RawTurn")
    assert {m.split(".")[0] for m in heavy} == {"pydantic"}


def test_the_chroma_store_loads_chromadb_on_first_use() -> None:
    heavy = _heavy_after("import lamina\nlamina.ChromaMemoryStore")
    assert "chromadb" in heavy


def _type_checking_imports(package: str) -> dict[str, str]:
    """Name -> absolute home module, from the ``if TYPE_CHECKING:`` block of ``package``."""
    init = PACKAGE.joinpath(*package.split(".")[1:], "__init__.py")
    homes: dict[str, str] = {}
    for node in ast.parse(init.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for stmt in node.body:
                assert isinstance(stmt, ast.ImportFrom) and stmt.module
                base = package.split(".")[: len(package.split(".")) - stmt.level + 1]
                module = ".".join([*base, stmt.module]) if stmt.level else stmt.module
                homes.update((alias.name, module) for alias in stmt.names)
    return homes


@pytest.mark.parametrize("package", ["lamina", "lamina.stores"])
def test_each_public_name_is_the_object_its_module_defines(package: str) -> None:
    """What mypy and IDEs see (the TYPE_CHECKING imports) is what the package hands out."""
    face = import_module(package)
    homes = _type_checking_imports(package)
    eager = {name for name in face.__all__ if name not in homes}
    assert eager <= {"LaminaError"}, f"{package}: imported eagerly or without a type: {eager}"
    for name, home in homes.items():
        assert name in face.__all__, f"{package}.{name} is imported for type checks only"
        assert getattr(face, name) is getattr(import_module(home), name), f"{package}.{name}"
    assert set(face.__all__) <= set(dir(face))


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="module 'lamina' has no attribute 'Nothing'"):
        lamina.Nothing  # noqa: B018
    assert not hasattr(lamina.stores, "nothing_here")


def test_a_submodule_still_imports_from_the_lazy_face() -> None:
    from lamina.stores import chroma

    assert chroma.ChromaMemoryStore is lamina.stores.ChromaMemoryStore
