"""Fuzz sizes for the reliability suite: small in CI, full with ``LAMINA_FUZZ=full``.

``make reliability`` runs the full sizes. The variable is read here, at collection time,
because the top-level autouse fixture clears ``LAMINA_*`` variables for each test.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, settings

FULL = os.environ.get("LAMINA_FUZZ", "").strip().lower() == "full"

settings.register_profile(
    "lamina-ci",
    max_examples=12,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
settings.register_profile(
    "lamina-full",
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
settings.load_profile("lamina-full" if FULL else "lamina-ci")


@dataclass(frozen=True)
class FuzzSizes:
    """How much each reliability check tries."""

    full: bool
    bad_replies: int
    """Malformed replies sent through every structured call."""
    crash_faults: tuple[int, ...]
    """Which call numbers (per node) get a fault in the crash-safety matrix."""
    writers: int
    """Parallel writers per concurrency scenario."""
    records_per_writer: int


SIZES = (
    FuzzSizes(
        full=True, bad_replies=1000, crash_faults=(1, 2, 3, 4), writers=8, records_per_writer=40
    )
    if FULL
    else FuzzSizes(
        full=False, bad_replies=150, crash_faults=(1, 2), writers=4, records_per_writer=12
    )
)


@pytest.fixture(scope="session")
def fuzz() -> FuzzSizes:
    """The sizes of this run (CI or full)."""
    return SIZES
