"""The option choices the parsers offer, without importing the modules that define them.

``lamina --help`` builds every command's parser, so what a parser needs at that moment
must be cheap to import. The record granularities live in :mod:`lamina.records.model`
(pydantic), the evaluated systems in :mod:`lamina.evaluation.systems` (Chroma, LangChain),
the question picks in :mod:`lamina.evaluation.subset` (LangChain) and the embedders in
:mod:`lamina.embedders.choice` (LangChain), so their names are repeated here;
``tests/test_cli_import_cost.py`` checks that the copies stay equal to their sources.
The trigger policies come from :mod:`lamina.core.context`, which is light.
"""

from __future__ import annotations

from ..core.context import DEFAULT_TRIGGER_POLICY, TRIGGER_POLICIES

GRANULARITIES: tuple[str, ...] = ("raw", "fact", "episode", "scene")
"""The values of :class:`lamina.records.model.Granularity`, in its order."""

LAMINA = "lamina"
FULL_CONTEXT = "full-context"
NAIVE_RAG = "naive-rag"
FLAT = "flat"
SYSTEMS: tuple[str, ...] = (
    LAMINA,
    "lamina-retrieval",
    FULL_CONTEXT,
    "full-context-long",
    NAIVE_RAG,
    FLAT,
    "oracle",
    "derived-oracle",
    "mem0",
    "langmem",
    "graphiti",
)
""":data:`lamina.evaluation.systems.SYSTEMS`, in its order."""

PICKS: tuple[str, ...] = ("spread", "first", "balanced")
""":data:`lamina.evaluation.subset.PICKS`, in its order."""

EMBEDDERS: tuple[str, ...] = ("minilm", "static")
"""The names of :data:`lamina.embedders.choice.EMBEDDERS`, in its order."""
DEFAULT_EMBEDDER = "minilm"
""":data:`lamina.embedders.choice.DEFAULT_EMBEDDER`."""

__all__ = [
    "DEFAULT_EMBEDDER",
    "EMBEDDERS",
    "FLAT",
    "FULL_CONTEXT",
    "GRANULARITIES",
    "LAMINA",
    "NAIVE_RAG",
    "PICKS",
    "SYSTEMS",
    "DEFAULT_TRIGGER_POLICY",
    "TRIGGER_POLICIES",
]
