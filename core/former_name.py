"""lamina's name before 0.1 (see CHANGELOG.md), the one place the code spells it.

Folders under that name (a data folder, a model cache) are looked for so the command line
can say where they are and how to move them; they are never read or moved.
"""

from __future__ import annotations

OLD_NAME = "memstrata"
"""The distribution, package and folder name lamina had before the rename."""

__all__ = ["OLD_NAME"]
