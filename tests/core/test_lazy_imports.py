"""``import lamina`` stays light: the heavy libraries load on first use of a name.

Issue 17 sets ``import lamina`` at 0.5 s or less; ``benchmarks/import_time.py`` measures
it. These tests check the cause, never a time (the machine is noisy): a bare import loads
none of the libraries below, and every public name still resolves to the object its
module defines, the one each face's type stub (``__init__.pyi``) shows to type checkers.

Each import check runs in a fresh interpreter, because the test session itself has long
imported everything (conftest.py builds Chroma stores).
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from importlib import import_module
from importlib.util import resolve_name
from pathlib import Path

import pytest

import lamina
import lamina.stores
from lamina.core.lazy import lazy_exports
from lamina.core.stubs import expected_stubs, face_packages

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
    heavy = _heavy_after("from lamina.records import RawTurn")
    assert {m.split(".")[0] for m in heavy} == {"pydantic"}


def test_the_chroma_store_loads_chromadb_on_first_use() -> None:
    heavy = _heavy_after("import lamina\nlamina.ChromaMemoryStore")
    assert "chromadb" in heavy


FACES = face_packages(PACKAGE)


def test_the_faces_are_found() -> None:
    assert {"lamina", "lamina.stores", "lamina.graphs", "lamina.memory"} <= set(FACES)


def test_the_root_exports_a_few_names_the_graph_builder_among_them() -> None:
    assert len(lamina.__all__) <= 12 and "build_memory_graph" in lamina.__all__


def test_no_face_loads_a_heavy_library() -> None:
    assert _heavy_after("\n".join(f"import {package}" for package in FACES)) == []


def test_every_stub_is_written_from_its_face() -> None:
    """What mypy and IDEs read (``__init__.pyi``) is what the mapping declares."""
    for path, text in expected_stubs(PACKAGE).items():
        assert path.read_text(encoding="utf-8") == text, (
            f"{path} is stale: run python -m lamina.core.stubs"
        )


def _stub_imports(package: str) -> dict[str, str]:
    """Name -> absolute home module, from the imports of ``package``'s ``__init__.pyi``."""
    stub = PACKAGE.joinpath(*package.split(".")[1:], "__init__.pyi")
    homes: dict[str, str] = {}
    for node in ast.parse(stub.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ImportFrom):
            module = resolve_name("." * node.level + (node.module or ""), package)
            homes.update((alias.name, module) for alias in node.names)
    return homes


@pytest.mark.parametrize("package", FACES)
def test_each_public_name_is_the_object_its_module_defines(package: str) -> None:
    """What the stub shows type checkers is what the package hands out, and all of it."""
    face = import_module(package)
    homes = _stub_imports(package)
    assert sorted(homes) == face.__all__, package
    for name, home in homes.items():
        assert getattr(face, name) is getattr(import_module(home), name), f"{package}.{name}"
    assert set(face.__all__) <= set(dir(face))


def test_a_name_the_face_maps_wrongly_fails_on_first_use() -> None:
    namespace = {"__name__": "lamina"}
    names, getattr_, dir_ = lazy_exports(namespace, {"Nothing": ".errors"})
    assert names == ["Nothing"] and "Nothing" in dir_()
    with pytest.raises(AttributeError, match="Nothing"):
        getattr_("Nothing")


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="module 'lamina' has no attribute 'Nothing'"):
        lamina.Nothing  # noqa: B018
    assert not hasattr(lamina.stores, "nothing_here")


def test_a_submodule_still_imports_from_the_lazy_face() -> None:
    from lamina.stores import chroma

    assert chroma.ChromaMemoryStore is lamina.stores.ChromaMemoryStore
