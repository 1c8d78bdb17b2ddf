"""The docs build, and every block of the README and the docs marked runnable runs.

* ``mkdocs build --strict`` (MkDocs with the Material theme and mkdocstrings; the ``docs``
  extra, which the ``test`` extra and so ``make install`` include) into a temporary folder.
* A fenced ``python`` or ``bash`` block preceded by the line ``<!-- runnable -->`` is run
  here: Python in a fresh module namespace, shell with ``bash -euo pipefail`` and the
  virtual environment's ``bin`` first on ``PATH``; each in an empty temporary working
  folder with ``HOME`` and the XDG folders inside it. Runnable blocks are self-contained,
  offline and fast (fakes from ``lamina.testing``, ephemeral or temporary Chroma).
* A Python block marked ``<!-- runnable: integration -->`` runs in
  ``tests/integration/test_doc_examples.py`` instead, against local stand-in servers, one
  page after another in one namespace like a notebook.
* Every Python block carries one of the two markers, so no example goes unrun.

The convention is documented in docs/contributing.md.
"""

from __future__ import annotations

import importlib.util
import inspect
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
MARKER = re.compile(r"^<!-- runnable(?:: (?P<kind>[a-z-]+))? -->\n", re.M)
FENCE = re.compile(r"^```(?P<lang>[\w-]*)[^\n]*\n(?P<code>.*?)^```\s*$", re.S | re.M)


class Block:
    """One fenced code block: where it is, its language, its code and its marker."""

    def __init__(self, path: Path, line: int, lang: str, code: str, marker: str | None) -> None:
        self.path, self.line, self.lang, self.code, self.marker = path, line, lang, code, marker

    @property
    def id(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def blocks(path: Path) -> list[Block]:
    """The fenced blocks of one Markdown file, with the marker on the line before each."""
    text = path.read_text(encoding="utf-8")
    found = []
    for m in FENCE.finditer(text):
        before = text[: m.start()]
        marker = None
        last = before.rstrip("\n").rsplit("\n", 1)[-1] + "\n"
        if (mark := MARKER.fullmatch(last)) is not None:
            marker = mark.group("kind") or "runnable"
        line = text.count("\n", 0, m.start()) + 1
        found.append(Block(path, line, m.group("lang"), m.group("code"), marker))
    return found


ALL = [b for path in SOURCES for b in blocks(path)]
RUNNABLE = [b for b in ALL if b.marker == "runnable"]


def test_every_python_block_is_run_somewhere() -> None:
    unmarked = [b.id for b in ALL if b.lang == "python" and b.marker is None]
    assert not unmarked, (
        "mark each Python block <!-- runnable --> (offline, run by tests/test_docs.py) or "
        "<!-- runnable: integration --> (tests/integration/test_doc_examples.py): "
        + ", ".join(unmarked)
    )
    kinds = {b.marker for b in ALL if b.marker}
    assert kinds <= {"runnable", "integration"}, kinds
    assert all(b.lang in ("python", "bash") for b in RUNNABLE), [b.id for b in RUNNABLE]


def test_the_readme_has_a_runnable_example_and_one_screen() -> None:
    readme = ROOT / "README.md"
    assert len(readme.read_text(encoding="utf-8").splitlines()) <= 200
    example = [b for b in RUNNABLE if b.path == readme and b.lang == "python"]
    assert example and len(example[0].code.splitlines()) <= 15
    assert "make test" in readme.read_text(encoding="utf-8")  # .ci/run calls `make test`


@pytest.fixture
def sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty working folder; home and XDG folders inside it, no LAMINA_ settings."""
    for name in list(os.environ):
        if name.startswith(("LAMINA_", "OPENAI_")):
            monkeypatch.delenv(name)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    # the offline models are looked up in the real cache (installed once per machine)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return work


@pytest.mark.parametrize("block", RUNNABLE, ids=[b.id for b in RUNNABLE])
def test_runnable_block(block: Block, sandbox: Path) -> None:
    if block.lang == "python":
        module = ModuleType(f"docs_block_{block.line}")  # a real module, for dataclasses
        sys.modules[module.__name__] = module
        try:
            exec(compile(block.code, block.id, "exec"), module.__dict__)  # noqa: S102 (ours)
        finally:
            del sys.modules[module.__name__]
    else:
        env = {
            **os.environ,
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        }
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", block.code],
            cwd=sandbox,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,  # a hang guard only: speed is for benchmarks, not for a loaded CI host
        )
        assert done.returncode == 0, f"{block.id} exited {done.returncode}:\n{done.stderr[-2000:]}"


def test_mkdocs_build_strict(tmp_path: Path) -> None:
    missing = [
        name
        for name in ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers.python")
        if importlib.util.find_spec(name.split(".")[0]) is None
    ]
    if missing:
        pytest.skip(
            f"the docs extra is not installed ({', '.join(missing)}); pip install -e .[docs]"
        )
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=900,  # a hang guard only: it took over 300 s on a host at load 5
    )
    assert done.returncode == 0, done.stderr[-4000:]
    page = tmp_path / "site" / "reference" / "api" / "memory" / "index.html"
    assert page.is_file()
    html = page.read_text(encoding="utf-8")
    from lamina import Memory

    public_async = [
        name
        for name in dir(Memory)
        if not name.startswith("_") and inspect.iscoroutinefunction(getattr(Memory, name))
    ]
    undocumented = [n for n in public_async if f'id="lamina.memory.Memory.{n}"' not in html]
    assert len(public_async) >= 8 and not undocumented, undocumented
