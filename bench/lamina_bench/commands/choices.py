"""The option choices of ``lamina-bench eval``, without importing the modules that define them.

``lamina-bench --help`` builds the parser, so what it needs must be cheap to import: the
evaluated systems live in :mod:`lamina_bench.evaluation.systems` (Chroma, LangChain) and
the question picks in :mod:`lamina_bench.evaluation.subset` (LangChain), so their names
are repeated here; ``tests/commands/test_cli_import_cost.py`` checks that the copies stay equal to
their sources.
"""

from __future__ import annotations

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
""":data:`lamina_bench.evaluation.systems.SYSTEMS`, in its order."""

PICKS: tuple[str, ...] = ("spread", "first", "balanced")
""":data:`lamina_bench.evaluation.subset.PICKS`, in its order."""

__all__ = ["FLAT", "FULL_CONTEXT", "LAMINA", "NAIVE_RAG", "PICKS", "SYSTEMS"]
