"""The package's layers hold: no module imports a higher layer, and no imports loop.

The contracts live in pyproject.toml (``[tool.importlinter]``), so ``lint-imports`` run by
hand gives the same verdict. Bottom to top: errors, core, prompts, llm | stores,
datasets | samples | testing, agents, graphs, the facade (memory, config), then the
entry points (cli, commands, evaluation, integrations). Imports inside functions and
under ``TYPE_CHECKING`` count like any other. The contracts' ``ignore_imports`` are the
known upward imports that other parts of issue 18 still have to remove; an entry that no
longer matches an import fails the check, so the list only shrinks.
"""

from __future__ import annotations

import ast
from pathlib import Path

import grimp
import pytest
from importlinter.cli import lint_imports

import memstrata

PACKAGE = Path(memstrata.__file__).parent
PYPROJECT = PACKAGE / "pyproject.toml"
NOT_PACKAGE = {"tests", "benchmarks", "build", "examples", ".venv"}
MOVED_MARKERS = {"warn_moved", "moved_attribute"}
"""What an old module path calls to warn that it moved (core/deprecation.py, memory/moved.py)."""


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("memstrata", cache_dir=None)


def _package_sources() -> list[Path]:
    return [
        path
        for path in PACKAGE.rglob("*.py")
        if not NOT_PACKAGE & set(path.relative_to(PACKAGE).parts)
    ]


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(("memstrata", *(parts[:-1] if parts[-1] == "__init__" else parts)))


@pytest.mark.parametrize("contract", ["layers", "cycles"])
def test_the_import_contract_is_kept(contract: str) -> None:
    """Broken contracts, and allowed imports that no longer occur, are printed above."""
    assert (
        lint_imports(
            config_filename=str(PYPROJECT),
            limit_to_contracts=(contract,),
            no_cache=True,
            no_logo=True,
        )
        == 0
    ), f"the {contract!r} contract of pyproject.toml is broken (see the output)"


def test_imports_inside_functions_and_under_type_checking_are_counted(
    graph: grimp.ImportGraph,
) -> None:
    """testing/stores.py imports the Chroma store only in a function and for type checks."""
    source = (PACKAGE / "testing" / "stores.py").read_text(encoding="utf-8")
    top_level = [
        node
        for node in ast.parse(source).body
        if isinstance(node, ast.ImportFrom) and node.module == "stores.chroma"
    ]
    assert not top_level
    details = graph.get_import_details(
        importer="memstrata.testing.stores", imported="memstrata.stores.chroma"
    )
    assert len(details) == 2  # the TYPE_CHECKING import and the one inside _fresh()


def test_no_module_of_the_package_imports_an_old_path(graph: grimp.ImportGraph) -> None:
    """Old paths are for users for one release; memstrata itself uses the new ones."""
    moved = set()
    for path in _package_sources():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        nodes = list(ast.walk(tree))
        called = {
            n.func.id for n in nodes if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
        }
        defined = {n.name for n in nodes if isinstance(n, ast.FunctionDef)}
        if called & MOVED_MARKERS and not defined & MOVED_MARKERS:
            moved.add(_module_name(path))
    assert "memstrata.graphs.state" in moved  # the scan finds the old paths
    users = {
        f"{importer} imports {old}"
        for old in moved
        for importer in graph.find_modules_that_directly_import(old)
        if importer not in moved
    }
    assert not users
