"""Compact text renderings of memory results for tools and the agent middleware."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..prompts.agents import MEMORY_BLOCK, RECALLED_ANSWER

if TYPE_CHECKING:
    from ..memory.results import AddResult, AnswerResult, ForgetResult, MemoryHit

_MAX_TEXT = 600
_BLOCK_TAG = re.compile(r"</?\s*memories\s*>", re.IGNORECASE)


def _clip(text: str, limit: int = _MAX_TEXT) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def format_hit(hit: MemoryHit) -> str:
    """One memory as ``[granularity id] (date) speaker: text`` on one line."""
    speaker = f"{hit.speaker}: " if hit.speaker else ""
    text = _BLOCK_TAG.sub("[memories-tag]", _clip(hit.text))
    return f"[{hit.granularity} {hit.id}] ({hit.occurred_at:%Y-%m-%d}) {speaker}{text}"


def format_hits(hits: Sequence[MemoryHit]) -> str:
    """Memories one per line, or a sentence saying none matched."""
    if not hits:
        return "No matching memories."
    return "\n".join(format_hit(hit) for hit in hits)


def memory_block(hits: Sequence[MemoryHit], answer: AnswerResult | None = None) -> str:
    """The delimited system-message block the middleware injects before a model call."""
    lines = [format_hit(hit) for hit in hits]
    if answer is not None and not answer.refused and answer.answer.strip():
        clean = _BLOCK_TAG.sub("[memories-tag]", _clip(answer.answer))
        lines.insert(0, RECALLED_ANSWER.format(answer=clean))
    return MEMORY_BLOCK.format(memories="\n".join(lines) or "(none)")


def format_add(result: AddResult) -> str:
    """The raw turns an add stored, or already held."""
    ids = result.new_raw_ids or result.duplicate_raw_ids
    said = "Remembered" if result.new_raw_ids else "Already remembered"
    return f"{said} as [raw {', '.join(ids)}]." if ids else "Nothing was stored."


def format_forget(result: ForgetResult) -> str:
    """What a forget call deleted, by granularity, and the ids it did not find."""
    parts = [
        f"{granularity}: {', '.join(ids)}" for granularity, ids in result.deleted.items() if ids
    ]
    text = "Deleted " + "; ".join(parts) + "." if parts else "No memory was deleted."
    if result.not_found:
        text += " Not found in this user's memory: " + ", ".join(result.not_found) + "."
    return text
