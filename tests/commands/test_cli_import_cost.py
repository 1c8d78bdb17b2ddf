"""Building the command line's parser imports none of the heavy parts of lamina.

``lamina --help`` and ``lamina COMMAND --help`` build every command's parser, so the
``register`` functions of :mod:`lamina.commands` must not pull in the ``Memory``
facade, Chroma or LangGraph, and ``lamina-bench``'s parser must not pull in the
evaluation harness: their commands import those when they run. The checks run in a
fresh interpreter, because this test session has long imported everything. They check
the cause, never a time (the machine is noisy).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from lamina.commands import choices
from lamina_bench.commands import choices as bench_choices

NOT_AT_PARSE_TIME = (
    "chromadb",
    "langgraph",
    "langchain_core",
    "xllamacpp",
    "lamina.memory.facade",
    "lamina_bench.evaluation.harness",
)
"""Modules (and packages, with their submodules) no parser may import."""


def _loaded_after(code: str) -> list[str]:
    """The modules of :data:`NOT_AT_PARSE_TIME` loaded in a fresh interpreter after ``code``."""
    probe = (
        f"{code}\nimport json, sys\n"
        f"names = {NOT_AT_PARSE_TIME!r}\n"
        "print(json.dumps(sorted(m for m in sys.modules "
        "if any(m == n or m.startswith(n + '.') for n in names))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    loaded: list[str] = json.loads(done.stdout.splitlines()[-1])
    return loaded


def test_building_the_parser_imports_no_heavy_module() -> None:
    assert _loaded_after("from lamina.cli import build_parser\nbuild_parser()") == []


def test_every_command_help_imports_no_heavy_module() -> None:
    code = (
        "import contextlib, io\n"
        "from lamina.cli import build_parser\n"
        "parser = build_parser()\n"
        "commands = parser._subparsers._group_actions[0].choices\n"
        "assert len(commands) > 5, commands\n"
        "for command in [None, *commands]:\n"
        "    argv = [command, '--help'] if command else ['--help']\n"
        "    with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        "        try:\n"
        "            build_parser().parse_args(argv)\n"
        "        except SystemExit as e:\n"
        "            assert e.code == 0, (argv, e.code)\n"
        "    assert 'usage: lamina' in out.getvalue(), argv\n"
    )
    assert _loaded_after(code) == []


def test_the_bench_parser_and_its_help_import_no_heavy_module() -> None:
    code = (
        "import contextlib, io\n"
        "from lamina_bench.cli import build_parser\n"
        "for argv in (['--help'], ['eval', '--help']):\n"
        "    with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        "        try:\n"
        "            build_parser().parse_args(argv)\n"
        "        except SystemExit as e:\n"
        "            assert e.code == 0, (argv, e.code)\n"
        "    assert 'usage: lamina-bench' in out.getvalue(), argv\n"
    )
    assert _loaded_after(code) == []


def test_the_probe_sees_the_heavy_modules() -> None:
    """An empty list above means nothing if the probe cannot see these modules at all."""
    code = "from lamina.memory import Memory\nimport lamina_bench.evaluation.harness"
    loaded = _loaded_after(code)
    assert {"chromadb", "langgraph", "lamina.memory.facade"} <= set(loaded)
    assert "lamina_bench.evaluation.harness" in loaded


@pytest.mark.parametrize(
    ("copy", "source"),
    [
        (choices.GRANULARITIES, ("lamina.records.model", "Granularity")),
        (bench_choices.SYSTEMS, ("lamina_bench.evaluation.systems", "SYSTEMS")),
        (bench_choices.PICKS, ("lamina_bench.evaluation.subset", "PICKS")),
        (bench_choices.LAMINA, ("lamina_bench.evaluation.systems", "LAMINA")),
        (bench_choices.FULL_CONTEXT, ("lamina_bench.evaluation.systems", "FULL_CONTEXT")),
        (bench_choices.NAIVE_RAG, ("lamina_bench.evaluation.systems", "NAIVE_RAG")),
        (bench_choices.FLAT, ("lamina_bench.evaluation.systems", "FLAT")),
        (choices.TRIGGER_POLICIES, ("lamina.core.context", "TRIGGER_POLICIES")),
        (choices.EMBEDDERS, ("lamina.embedders.choice", "EMBEDDERS")),
        (choices.DEFAULT_EMBEDDER, ("lamina.embedders.choice", "DEFAULT_EMBEDDER")),
    ],
)
def test_the_parsers_choices_equal_their_sources(copy: object, source: tuple[str, str]) -> None:
    from importlib import import_module

    value = getattr(import_module(source[0]), source[1])
    if source[1] == "Granularity":
        value = tuple(g.value for g in value)
    if source[1] == "EMBEDDERS":
        value = tuple(value)
    assert copy == value
