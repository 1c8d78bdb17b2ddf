"""A benchmark's finished rows on disk, so an interrupted local run resumes where it was.

The first line holds the run's settings; a journal written under other settings is
refused rather than mixed. Every later line is one finished row (a turn, an item),
flushed at once and found again by its key field.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


class ResumeJournal:
    """Finished rows by key: a settings line, then one JSON line per row."""

    def __init__(self, path: Path, settings: dict[str, Any], *, key: str = "key") -> None:
        """Open ``path`` (creating it with ``settings``), or resume it.

        Raises:
            SystemExit: the journal was written with other settings.
        """
        self.path = path
        self.key_field = key
        self.done: dict[str, dict[str, Any]] = {}
        if path.exists():
            rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x]
            if rows and rows[0].get("settings") != settings:
                raise SystemExit(
                    f"{path} was written with other settings ({rows[0].get('settings')}); "
                    "give another --resume folder"
                )
            self.done = {row[key]: row for row in rows[1:]}
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps({"settings": settings}) + "\n", encoding="utf-8")

    def append(self, row: dict[str, Any]) -> None:
        """Record one finished row (flushed at once)."""
        with self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(row) + "\n")
        self.done[row[self.key_field]] = row


__all__ = ["ResumeJournal"]
