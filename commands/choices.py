"""The option choices the parsers offer, without importing the modules that define them.

``lamina --help`` builds every command's parser, so what a parser needs at that moment
must be cheap to import. The record granularities live in :mod:`lamina.records.model`
(pydantic) and the embedders in :mod:`lamina.embedders.choice` (LangChain), so their
names are repeated here; ``tests/commands/test_cli_import_cost.py`` checks that the copies stay
equal to their sources.
The trigger policies come from :mod:`lamina.core.context`, which is light.
"""

from __future__ import annotations

from ..core.context import DEFAULT_TRIGGER_POLICY, TRIGGER_POLICIES

GRANULARITIES: tuple[str, ...] = ("raw", "fact", "episode", "scene")
"""The values of :class:`lamina.records.model.Granularity`, in its order."""

EMBEDDERS: tuple[str, ...] = ("minilm", "static")
"""The names of :data:`lamina.embedders.choice.EMBEDDERS`, in its order."""
DEFAULT_EMBEDDER = "minilm"
""":data:`lamina.embedders.choice.DEFAULT_EMBEDDER`."""

__all__ = [
    "DEFAULT_EMBEDDER",
    "EMBEDDERS",
    "GRANULARITIES",
    "DEFAULT_TRIGGER_POLICY",
    "TRIGGER_POLICIES",
]
