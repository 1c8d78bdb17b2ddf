"""Deprecated: moved to ``memstrata.memory.models`` and ``.checkpointing`` (removed in 0.2)."""

from __future__ import annotations

from typing import Any

from .memory.moved import moved_attribute


def __getattr__(name: str) -> Any:
    return moved_attribute(
        __name__, name, ("memstrata.memory.models", "memstrata.memory.checkpointing")
    )
