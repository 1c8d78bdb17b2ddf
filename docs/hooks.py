"""MkDocs hooks: let mkdocstrings find the package, whose source is the repository root.

griffe (mkdocstrings' Python loader) finds a package by its folder's name, and this
repository's root is the package ``lamina`` under whatever name the clone has. Before
any page is rendered, the hook builds ``build/docs/lamina``: a folder of links to the
package's own modules and subpackages (those pyproject.toml lists), so griffe neither
sees the clone's other folders (.venv, tests, build) nor walks into a link loop.

The docstrings cross-reference in Sphinx's style (``:class:`~lamina.Memory```), which
Markdown renders as the role's name followed by code; the page hook shows the code alone
(the last dotted part after a ``~``, as Sphinx does).
"""

from __future__ import annotations

import os
import re
import shutil
import tomllib
from pathlib import Path
from typing import Any


def package_entries(root: Path) -> list[Path]:
    """The root's files and folders that make up the package ``lamina``."""
    pyproject = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    packages = pyproject["tool"]["setuptools"]["packages"]
    folders = {p.split(".")[1] for p in packages if p.count(".") >= 1}
    modules = [p for p in root.iterdir() if p.suffix == ".py" or p.name == "py.typed"]
    return sorted(modules + [root / name for name in folders])


def on_config(config: Any) -> Any:
    """Build ``build/docs/lamina`` next to mkdocs.yml (links into the repository root)."""
    root = Path(config.config_file_path).resolve().parent
    shadow = root / "build" / "docs" / "lamina"
    if shadow.is_symlink() or shadow.is_file():
        shadow.unlink()
    elif shadow.exists():
        shutil.rmtree(shadow)
    shadow.mkdir(parents=True)
    for entry in package_entries(root):
        (shadow / entry.name).symlink_to(os.path.relpath(entry, shadow))
    return config


_ROLE = re.compile(r":(?:class|func|meth|mod|attr|data|exc|obj|ref):<code>(~?)([^<]*)</code>")


def _code(match: re.Match[str]) -> str:
    tilde, target = match.groups()
    return f"<code>{target.rsplit('.', 1)[-1] if tilde else target}</code>"


def on_page_content(html: str, **kwargs: Any) -> str:
    """Show Sphinx cross-reference roles in docstrings as plain code."""
    return _ROLE.sub(_code, html)
