"""lamina's name before 0.1, read from the one place it is written: CHANGELOG.md.

The changelog's rename line ("Renamed from `<old>` to `lamina`") is the record of the old
name; the package ships that file, and this module reads the name from it, so no code,
doc or setting spells it a second time. Folders under that name (a data folder, a model
cache) are looked for so the command line can say where they are and how to move them;
they are never read or moved. Without the file or its rename line, nothing is looked for.
"""

from __future__ import annotations

import re
from pathlib import Path

CHANGELOG = Path(__file__).resolve().parent.parent / "CHANGELOG.md"
"""The package's changelog (the repository root is the package)."""
_RENAMED = re.compile(r"Renamed from `(?P<old>[A-Za-z0-9_.-]+)` to `lamina`")


def former_name(changelog: Path = CHANGELOG) -> str | None:
    """The name ``changelog``'s rename line gives, or None without the file or the line."""
    try:
        text = changelog.read_text(encoding="utf-8")
    except OSError:
        return None
    found = _RENAMED.search(text)
    return found.group("old") if found else None


OLD_NAME: str | None = former_name()
"""The distribution, package and folder name lamina had before the rename (None: unknown,
so no old folder is looked for)."""


def old_folders(xdg_base: str | None, home_base: Path) -> list[Path]:
    """The folders named :data:`OLD_NAME` that exist in ``xdg_base`` (if set) or ``home_base``."""
    if OLD_NAME is None:
        return []
    bases = dict.fromkeys(Path(b) for b in (xdg_base, home_base) if b)
    return [base / OLD_NAME for base in bases if (base / OLD_NAME).is_dir()]


__all__ = ["CHANGELOG", "OLD_NAME", "former_name", "old_folders"]
