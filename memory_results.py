"""Deprecated: moved to :mod:`memstrata.memory.hits`; this path is removed in 0.2."""

from __future__ import annotations

from typing import Any

from .memory.moved import moved_attribute


def __getattr__(name: str) -> Any:
    return moved_attribute(__name__, name, ("memstrata.memory.hits",))
