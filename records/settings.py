"""Settings of one namespace, kept in the store so every process that opens it sees them."""

from __future__ import annotations

from datetime import timedelta

from pydantic import BaseModel, ConfigDict, Field, PositiveFloat

from .model import Namespace, UtcDatetime, utc_now

__all__ = ["NamespaceSettings"]


class NamespaceSettings(BaseModel):
    """What applies to every memory added to a namespace from now on."""

    model_config = ConfigDict(extra="forbid")

    namespace: Namespace
    default_ttl_seconds: PositiveFloat | None = Field(
        default=None,
        description="How long a memory added without expires_at/ttl lives; None: forever.",
    )
    recorded_at: UtcDatetime = Field(default_factory=utc_now)

    @property
    def default_ttl(self) -> timedelta | None:
        """``default_ttl_seconds`` as a timedelta (None: memories never expire)."""
        if self.default_ttl_seconds is None:
            return None
        return timedelta(seconds=self.default_ttl_seconds)
