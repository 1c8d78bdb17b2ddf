"""The memory records and their time references: what every layer reads and writes.

Pydantic types only (no storage, no model): the records of the four granularities and the
profile (:mod:`.model`), the time references a turn's text resolves to
(:mod:`.timerefs`) and the audit log's entries (:mod:`.audit`). The stores persist them;
the nodes build them.
"""

from __future__ import annotations

from .audit import AuditEntry
from .model import (
    EpisodeRecord,
    FactRecord,
    Granularity,
    MemoryRecord,
    ProfileRecord,
    RawTurn,
    SceneRecord,
)
from .timerefs import TimeRef

__all__ = [
    "AuditEntry",
    "EpisodeRecord",
    "FactRecord",
    "Granularity",
    "MemoryRecord",
    "ProfileRecord",
    "RawTurn",
    "SceneRecord",
    "TimeRef",
]
