"""The package's layers hold: no module imports a higher layer, and no imports loop.

The contracts live in pyproject.toml (``[tool.importlinter]``), so ``lint-imports`` run by
hand gives the same verdict. Bottom to top: errors, core, embedders | records, prompts,
llm | stores, samples | testing, agents, graphs, the facade (memory, config), then the
entry points (cli, commands, integrations). Imports inside functions and under
``TYPE_CHECKING`` count like any other, and no import is exempt. The lab (lamina-bench,
in bench/) is checked too: lamina imports nothing of it, and it imports lamina's public
faces only, but for the hooks its contract lists. The same package sources are also
checked for a docstring naming each module's concern and against pyproject's package list.
"""

from __future__ import annotations

import ast
import logging
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import grimp
import pytest
from importlinter.cli import lint_imports

import lamina

PACKAGE = Path(lamina.__file__).parent
PYPROJECT = PACKAGE / "pyproject.toml"
NOT_PACKAGE = {"tests", "benchmarks", "bench", "build", "examples", ".venv"}


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("lamina", cache_dir=None)


def _package_sources() -> list[Path]:
    return [
        path
        for path in PACKAGE.rglob("*.py")
        if not NOT_PACKAGE & set(path.relative_to(PACKAGE).parts)
    ]


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(("lamina", *(parts[:-1] if parts[-1] == "__init__" else parts)))


@pytest.fixture
def loggers_kept() -> Iterator[None]:
    """import-linter's CLI configures logging with ``disable_existing_loggers``.

    Without this, every logger created before the check (lamina's, once a test module
    imported it) stays silent for the rest of the session, and ``caplog`` sees nothing.
    """
    loggers = [
        logger
        for logger in logging.root.manager.loggerDict.values()
        if isinstance(logger, logging.Logger)
    ]
    disabled = [logger.disabled for logger in loggers]
    yield
    for logger, was in zip(loggers, disabled, strict=True):
        logger.disabled = was


@pytest.mark.usefixtures("loggers_kept")
@pytest.mark.parametrize(
    "contract", ["layers", "ingest-seams", "cycles", "product-without-lab", "bench-public-api"]
)
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


PUBLIC_FACES = {"errors", "embedders", "graphs", "integrations", "memory", "records", "stores"}
"""The modules lamina-bench may import besides the root: lamina.errors and the layer faces."""


def test_the_bench_contract_forbids_every_module_but_the_faces(
    graph: grimp.ImportGraph,
) -> None:
    """A new top-level module of lamina is forbidden to the lab unless it is a face, and
    below a face only the face itself is allowed (``lamina.stores.*`` is forbidden)."""
    contracts = tomllib.loads(PYPROJECT.read_text())["tool"]["importlinter"]["contracts"]
    (bench,) = [c for c in contracts if c["id"] == "bench-public-api"]
    forbidden = set(bench["forbidden_modules"])
    children = {m.removeprefix("lamina.") for m in graph.find_children("lamina")}
    faces = PUBLIC_FACES
    assert {f"lamina.{c}" for c in children - faces} == {m for m in forbidden if "*" not in m}
    packages = {c for c in faces if graph.find_children(f"lamina.{c}")}
    assert {f"lamina.{c}.*" for c in packages} == {m for m in forbidden if "*" in m}


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
        importer="lamina.testing.stores", imported="lamina.stores.chroma"
    )
    assert len(details) == 2  # the TYPE_CHECKING import and the one inside _fresh()


def test_every_package_folder_is_in_the_setuptools_package_list() -> None:
    """setuptools builds the wheel from pyproject's explicit ``packages`` list: a subpackage
    missing from it imports in a checkout (the editable finder maps the folder) but not
    from the wheel."""
    listed = set(tomllib.loads(PYPROJECT.read_text())["tool"]["setuptools"]["packages"])
    found = {_module_name(p) for p in _package_sources() if p.name == "__init__.py"}
    assert found == listed, (sorted(found - listed), sorted(listed - found))


def test_every_package_module_says_what_it_is_for() -> None:
    """A module holds one concern, and its docstring's first line names it.

    Size is not the rule (a module is split where its concerns part, not at a line
    count); a module whose purpose cannot be said in its first line is two modules.
    """
    unsaid = []
    for path in _package_sources():
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
        first = (doc or "").strip().splitlines()[0] if (doc or "").strip() else ""
        if len(first.split()) < 3:
            unsaid.append(str(path.relative_to(PACKAGE)))
    assert len(_package_sources()) > 100  # the whole package was read
    assert not unsaid, f"say what these modules are for, in their docstring: {unsaid}"


def test_no_product_module_imports_the_test_doubles(graph: grimp.ImportGraph) -> None:
    """lamina.testing (scripted models, fake embeddings) is for users' tests and lamina's
    own: the product (the CLI included) and the lab never import it."""
    users = {
        importer
        for importer in graph.find_modules_that_directly_import("lamina.testing")
        | {
            m
            for sub in graph.find_children("lamina.testing")
            for m in graph.find_modules_that_directly_import(sub)
        }
        if not importer.startswith("lamina.testing")
    }
    assert not users


INGEST = PACKAGE / "agents" / "ingest"

INGEST_MODEL_CALLS = {"extraction.construct", "extraction.drafting", "extraction.withholding"}
"""Besides the nodes (agents/ingest/nodes/), the ingest modules that call the model or
assemble its reply into records; every other one is text rules."""


def test_the_ingest_text_rules_load_no_llm_module() -> None:
    """Importing a rule module of agents/ingest (ownership, supersession, evidence, and
    extraction's reading of a reply) loads nothing of lamina.llm: the rules are text, and
    a type-only import stays one."""
    rules = sorted(
        ".".join(p.relative_to(INGEST).with_suffix("").parts)
        for p in INGEST.rglob("*.py")
        if p.stem != "__init__" and p.relative_to(INGEST).parts[0] != "nodes"
    )
    rules = [m for m in rules if m not in INGEST_MODEL_CALLS]
    code = (
        "import importlib, sys\n"
        f"for m in {rules!r}:\n"
        "    importlib.import_module('lamina.agents.ingest.' + m)\n"
        "print(sorted(k for k in sys.modules if k.startswith('lamina.llm')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert len(rules) >= 15 and out.stdout.strip() == "[]", out.stdout
