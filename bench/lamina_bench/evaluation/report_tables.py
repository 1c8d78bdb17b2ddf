"""Markdown table helpers of the evaluation report."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def fmt(value: Any, digits: int = 3) -> str:
    """A cell: a dash for None, floats to ``digits`` places, ints with commas, else text."""
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[str]:
    """A markdown table's lines (cells through :func:`fmt`), then a blank line."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(fmt(v) for v in row) + " |" for row in rows]
    return lines + [""]
