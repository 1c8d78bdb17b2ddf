"""The type stubs of the lazy package faces, written from their mappings.

``python -m lamina.core.stubs`` rewrites the ``__init__.pyi`` of every package whose face
is lazy (:mod:`lamina.core.lazy`): one ``from <home> import <name> as <name>`` per public
name, which is how a stub tells mypy, pyright and IDEs what the package re-exports. Run it
after changing a face's mapping; tests/core/test_lazy_imports.py fails while a stub is stale.
"""

from __future__ import annotations

import sys
from importlib import import_module
from pathlib import Path

from .lazy import LazyFace

__all__ = ["expected_stubs", "face_packages", "stub_text", "write_stubs"]

HEADER = (
    "# Written by `python -m lamina.core.stubs` from the mapping in __init__.py: edit that, "
    "then run it.\n"
)


def stub_text(face: LazyFace, *, version: bool = False) -> str:
    """The ``__init__.pyi`` of ``face``, with ``__version__`` when the package has one.

    The imports are in the order ruff's isort keeps them (by module, then name), so a
    written stub passes ``make lint`` as it is.
    """
    imports = sorted((home.startswith("."), home, name) for name, home in face.homes.items())
    lines = []
    for n, (relative, home, name) in enumerate(imports):
        if relative and n and not imports[n - 1][0]:
            lines.append("\n")  # absolute imports first, then relative ones
        lines.append(f"from {home} import {name} as {name}\n")
    if version:
        lines.append("\n__version__: str\n")
    return HEADER + "\n" + "".join(lines)


def face_packages(root: Path, package: str = "lamina") -> list[str]:
    """The packages from ``root`` (the folder of ``package``) down whose face is lazy."""
    found = [package] if "lazy_exports(" in (root / "__init__.py").read_text("utf-8") else []
    for child in sorted(root.iterdir()):
        if (child / "__init__.py").is_file():
            found += face_packages(child, f"{package}.{child.name}")
    return found


def expected_stubs(root: Path) -> dict[Path, str]:
    """Each lazy face's ``__init__.pyi`` under ``root`` and the text it should hold."""
    stubs = {}
    for package in face_packages(root):
        module = import_module(package)
        face = vars(module)["__getattr__"]
        if not isinstance(face, LazyFace):
            raise TypeError(f"{package}.__getattr__ is not a LazyFace: bind lazy_exports()")
        path = root.joinpath(*package.split(".")[1:], "__init__.pyi")
        stubs[path] = stub_text(face, version=hasattr(module, "__version__"))
    return stubs


def write_stubs(root: Path) -> list[Path]:
    """Rewrite the stale or missing stubs of the lazy faces under ``root``; return them."""
    changed = []
    for path, text in expected_stubs(root).items():
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            changed.append(path)
    return changed


if __name__ == "__main__":
    for written in write_stubs(Path(__file__).resolve().parent.parent):
        print(f"wrote {written}", file=sys.stderr)
