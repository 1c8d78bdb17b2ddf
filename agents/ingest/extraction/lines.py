"""The compact line format of construction replies, and the call that asks for it.

A small local model writes ``F|t3|Theo|Theo opened a bakery.`` far more cheaply and
reliably than a JSON object with long keys. Each line is validated on its own into
:class:`~lamina.agents.ingest.schemas.FactLine`: a malformed line drops that item only and is
counted, never the whole reply.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from langchain_core.messages import BaseMessage
from pydantic import ValidationError

from ..schemas import ConstructionDraft, FactLine

_LINE = re.compile(r"^\s*(?:[-*\u2022]\s*|\d+[.)]\s*)?([TSFPL])\s*[|:]\s*(.*?)\s*$")
_LABEL = re.compile(r"^\[?\s*([a-z]\d{1,3})\s*\]?$", re.IGNORECASE)
_ITEM_SHAPE = re.compile(r"^\s*\[?\s*[a-z]\d{1,3}\s*\]?\s*\|[^|]+\|\s*\S", re.IGNORECASE)
"""``t5|Maya|<sentence>``: an item, whatever tag the model put before it (or none)."""
_KINDS = {"F": "fact", "P": "foresight", "L": "preference"}
MAX_LINES = 200
"""Lines past this many are ignored (a runaway reply, not memory)."""


@dataclass
class ParsedReply:
    """A construction reply read line by line."""

    draft: ConstructionDraft
    dropped: list[str] = field(default_factory=list)
    """The lines that looked like items but failed validation."""
    cut: str | None = None
    """The last line of a reply that stopped at its token limit, left unread."""

    @property
    def empty(self) -> bool:
        """Nothing usable: no title, no summary and no item."""
        d = self.draft
        return not (d.title or d.summary or d.facts)


def _item(kind: str, rest: str) -> FactLine:
    parts = [p.strip() for p in rest.split("|")]
    if len(parts) >= 3:
        label, subject, statement = parts[0], parts[1], "|".join(parts[2:]).strip()
        match = _LABEL.match(label)
        if match is None:
            raise ValueError(f"{label!r} is not a turn label like t3")
        source: str | None = match.group(1).lower()
    elif len(parts) == 2 and _LABEL.match(parts[0]) is None:
        source, subject, statement = None, parts[0], parts[1]
    else:
        raise ValueError("an item needs <turn>|<person>|<sentence>")
    return FactLine(kind=_KINDS[kind], source=source, subject=subject, statement=statement)  # type: ignore[arg-type]


def without_cut_line(text: str) -> tuple[str, str | None]:
    """``text`` without its last non-blank line, and that line (None when there is none).

    What is read of a reply that stopped at its token limit: its last line is unfinished.
    """
    head, _, last = text.rstrip().rpartition("\n")
    return head, last.strip()[:300] or None


def parse_lines(text: str, *, cut_off: bool = False) -> ParsedReply:
    """Read ``T|``, ``S|`` and ``F|/P|/L|`` lines; other lines (prose, fences) are ignored.

    A line shaped like an item (``t5|Maya|<sentence>``) is read as a fact when its tag is
    missing or is ``T``/``S``: the small model sometimes tags its notes ``S``, and those
    notes would otherwise be glued into the episode's summary.

    ``cut_off``: the reply stopped at its token limit, so its last line is unfinished
    ("Theo saw how the repairs were enabled by"); it is left unread (``cut``).
    """
    title, summary, facts, dropped = "", "", [], []
    text, cut = without_cut_line(text) if cut_off else (text, None)
    for raw in text.splitlines()[:MAX_LINES]:
        match = _LINE.match(raw)
        if match is not None:
            tag, rest = match.group(1).upper(), match.group(2)
        elif _ITEM_SHAPE.match(raw):  # the model left the tag out: a fact
            tag, rest = "F", raw.strip()
        else:
            continue
        if tag in ("T", "S") and _ITEM_SHAPE.match(rest):  # an item under the wrong tag
            tag = "F"
        if tag == "T":
            title = title or rest.strip("|").strip()
        elif tag == "S":
            summary = f"{summary} {rest.strip('|').strip()}".strip()
        else:
            try:
                facts.append(_item(tag, rest))
            except (ValueError, ValidationError):
                dropped.append(raw.strip()[:300])
    draft = ConstructionDraft(title=title[:200], summary=summary, facts=facts)
    return ParsedReply(draft=draft, dropped=dropped, cut=cut)


@dataclass(frozen=True)
class TextReply:
    """One plain-text completion with its cost."""

    text: str
    latency_s: float
    prompt_tokens: int | None
    completion_tokens: int | None
    cut_off: bool = False
    """The model stopped at ``max_tokens`` (finish reason ``length``), mid-line."""


def takes_frequency_penalty(model: object) -> bool:
    """Whether the chat model (or the model a binding wraps) has a frequency penalty."""
    target = getattr(model, "bound", model)
    fields = getattr(type(target), "model_fields", {})
    return "frequency_penalty" in fields


def complete(
    model: object,
    messages: Sequence[BaseMessage],
    max_tokens: int,
    *,
    frequency_penalty: float | None = None,
) -> TextReply:
    """Ask ``model`` for plain text, at most ``max_tokens`` of it; report usage.

    ``frequency_penalty``: passed when given and the model takes one (a chat model with a
    ``frequency_penalty`` setting, as ``ChatOpenAI`` for OpenAI-compatible servers and
    llama.cpp; others, e.g. Anthropic's, would reject the argument).
    """
    started = time.perf_counter()
    options: dict[str, float] = {}
    if frequency_penalty is not None and takes_frequency_penalty(model):
        options["frequency_penalty"] = frequency_penalty
    bound = model.bind(max_tokens=max_tokens, **options)  # type: ignore[attr-defined]
    message = bound.invoke(list(messages))
    content = message.content
    if not isinstance(content, str):
        content = "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    usage = getattr(message, "usage_metadata", None) or {}
    metadata = getattr(message, "response_metadata", None) or {}
    return TextReply(
        text=content,
        latency_s=time.perf_counter() - started,
        prompt_tokens=usage.get("input_tokens"),
        completion_tokens=usage.get("output_tokens"),
        cut_off=isinstance(metadata, dict) and metadata.get("finish_reason") == "length",
    )
