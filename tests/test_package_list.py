"""Every package of the source tree is listed in pyproject.toml, so the wheel ships it.

setuptools builds the wheel from the explicit ``packages`` list; a subpackage missing
from it installs in a checkout (the editable finder maps the folder) but not from the
wheel, where its imports fail.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import lamina

ROOT = Path(lamina.__file__).parent
NOT_PACKAGE = {"tests", "benchmarks", "build", "examples", ".venv", "docs", "site"}


def test_every_package_folder_is_in_the_setuptools_package_list() -> None:
    listed = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    found = {"lamina"} | {
        "lamina." + ".".join(init.parent.relative_to(ROOT).parts)
        for init in ROOT.rglob("__init__.py")
        if init.parent != ROOT and not NOT_PACKAGE & set(init.relative_to(ROOT).parts)
    }
    assert found == listed, (sorted(found - listed), sorted(listed - found))
