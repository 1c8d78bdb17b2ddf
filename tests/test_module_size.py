"""No module of the package is over 400 lines: small modules with one responsibility each.

Tests, benchmarks and examples are not package modules. A module that grows past the
limit is split by responsibility (as stores/okapi.py came out of stores/bm25.py), not
trimmed of its docstrings.
"""

from __future__ import annotations

from pathlib import Path

import lamina

ROOT = Path(lamina.__file__).parent
NOT_PACKAGE = {"tests", "benchmarks", "build", "examples", ".venv", "docs", "site"}
LIMIT = 400


def test_no_package_module_is_over_the_limit() -> None:
    sizes = {
        str(path.relative_to(ROOT)): len(path.read_text(encoding="utf-8").splitlines())
        for path in ROOT.rglob("*.py")
        if not NOT_PACKAGE & set(path.relative_to(ROOT).parts)
    }
    assert len(sizes) > 100  # the whole package was read
    over = {name: n for name, n in sizes.items() if n > LIMIT}
    assert not over, f"split these modules (over {LIMIT} lines): {over}"
