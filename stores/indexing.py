"""What text of a record is embedded and indexed for lexical search.

The verbatim text is what Chroma stores as the document. The *index text* may add
context that helps retrieval: the speaker, the date, an image caption or the
neighbouring turn. It is a pure function of the stored record, so the BM25 index can
be rebuilt from Chroma at any time and gives the same result.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..records.model import MemoryRecord, RawTurn


@dataclass(frozen=True, kw_only=True)
class IndexTextPolicy:
    """How raw turns are rendered for indexing. Other granularities use ``index_text()``."""

    speaker: bool = True
    """Prefix the turn with ``"<speaker>: "``."""
    date: bool = True
    """Append the date the turn happened, e.g. ``"(8 May 2023)"``."""
    caption: bool = True
    """Append a shared image's caption as ``"[image: ...]"``."""
    context: bool = True
    """Append the record's ``context`` (e.g. the previous turn) as ``"[context: ...]"``."""

    def render(self, record: MemoryRecord) -> str:
        """Return the index text of ``record``."""
        if not isinstance(record, RawTurn):
            return record.index_text()
        text = record.display_text()
        parts = [f"{record.speaker}: {text}" if self.speaker else text]
        if self.caption and record.media_caption:
            parts.append(f"[image: {record.media_caption}]")
        if self.date:
            d = record.occurred_at
            parts.append(f"({d.day} {d:%B %Y})")
        if self.context and record.context:
            parts.append(f"[context: {record.context}]")
        return " ".join(parts)
