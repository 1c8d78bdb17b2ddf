"""The audit log: one entry per change the Refresher (or a forget) makes."""

from __future__ import annotations

import uuid
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, StrictStr

from .model import Namespace, UtcDatetime, utc_now

AuditAction = Literal["add", "update", "supersede", "delete", "noop", "forget"]
"""``add`` is never stored: ``Memory.history`` writes it from the record itself (the
version it was stored as, like mem0's ADD event)."""


class AuditEntry(BaseModel):
    """Who changed what, why, before and after, from which turn, with which model, when."""

    model_config = ConfigDict(extra="forbid")

    id: StrictStr = Field(default_factory=lambda: uuid.uuid4().hex)
    namespace: Namespace
    at: UtcDatetime = Field(default_factory=utc_now)
    actor: StrictStr = Field(description="The node or caller that made the change.")
    action: AuditAction
    granularity: StrictStr
    target_id: StrictStr
    reason: StrictStr = ""
    before: StrictStr | None = Field(default=None, description="Content before; None if erased.")
    after: StrictStr | None = None
    source_ids: list[StrictStr] = Field(default_factory=list)
    model: StrictStr | None = None


__all__ = [
    "AuditEntry",
]
