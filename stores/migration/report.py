"""What a copy found and did: counts per namespace and kind, on both sides, and the vectors."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Literal

KINDS = ("raw", "fact", "episode", "scene", "profile", "audit", "settings")
"""What is counted per namespace: the four granularities, the profile, the audit log and
the namespace's settings (its default TTL)."""

VectorSource = Literal["copied", "re-embedded"]


@dataclass
class Count:
    """One namespace and kind: how many the source holds, the target holds, this run wrote."""

    namespace: str
    kind: str
    source: int
    target: int = 0
    copied: int = 0
    """Written by this run: new in the target, or different there."""
    missing: int = 0
    """Source ids the target still lacks after the copy."""
    extra: int = 0
    """Target ids the source does not have (written there by something else)."""

    @classmethod
    def of(
        cls, namespace: str, kind: str, source: set[str], target: set[str], copied: int
    ) -> Count:
        """The count of ``kind`` from the ids each side holds after the copy."""
        missing, extra = len(source - target), len(target - source)
        return cls(namespace, kind, len(source), len(target), copied, missing, extra)

    @property
    def equal(self) -> bool:
        """Whether the target holds exactly what the source holds."""
        return self.source == self.target and not self.missing and not self.extra


@dataclass
class MigrationReport:
    """The outcome of :func:`~lamina.stores.migration.migrate`, one :class:`Count` a row."""

    source: str
    target: str
    vectors: VectorSource
    """``copied``: the stored vectors were written as they are; ``re-embedded``: the
    target's embedder (or index text policy) differs, so each record was embedded again."""
    embedded: int = 0
    """Records embedded by this run (all written ones when re-embedding; else the few
    whose stored vector Chroma could not give)."""
    counts: list[Count] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether every namespace and kind has the same count (and ids) on both sides."""
        return all(c.equal for c in self.counts)

    @property
    def copied(self) -> int:
        """How many records, profiles, audit entries and settings this run wrote."""
        return sum(c.copied for c in self.counts)

    def mismatches(self) -> list[Count]:
        """The rows whose target differs from the source."""
        return [c for c in self.counts if not c.equal]

    def table(self) -> list[str]:
        """The counts as aligned lines, namespaces JSON-quoted (any character shows as is)."""
        head = ("namespace", "kind", "source", "target", "copied", "status")
        rows = [
            (
                json.dumps(c.namespace, ensure_ascii=False),
                c.kind,
                str(c.source),
                str(c.target),
                str(c.copied),
                "ok" if c.equal else _problem(c),
            )
            for c in self.counts
        ]
        widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
        lines = []
        for r in [head, *rows]:
            cells = [r[0].ljust(widths[0]), r[1].ljust(widths[1])]
            cells += [r[i].rjust(widths[i]) for i in (2, 3, 4)]
            lines.append("  ".join([*cells, r[5]]).rstrip())
        return lines


def _problem(c: Count) -> str:
    parts = []
    if c.missing:
        parts.append(f"{c.missing} missing in the target")
    if c.extra:
        parts.append(f"{c.extra} only in the target")
    return "MISMATCH" + (f" ({', '.join(parts)})" if parts else "")


__all__ = ["KINDS", "Count", "MigrationReport", "VectorSource"]
