"""Embedders and rerankers that run offline, from weights installed with the package.

:class:`MiniLMEmbeddings` (the default, int8 ONNX MiniLM) and :class:`StaticEmbeddings`
(the ``embedders`` extra) are LangChain ``Embeddings`` with a registered chromadb
embedding function each; :func:`make_embeddings` picks one by name.
:class:`OnnxCrossEncoder` scores (query, passage) pairs for
:class:`~lamina.stores.rerank.RerankingStore`. Models load on first use
(:mod:`.onnx_loader`); nothing is downloaded. The names below are imported on first use,
so importing this package does not load onnxruntime or chromadb.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.lazy import lazy_exports

if TYPE_CHECKING:
    from .choice import make_embeddings
    from .cross_encoder import OnnxCrossEncoder
    from .minilm import MiniLMEmbeddings, OnnxMiniLM
    from .static import StaticEmbeddings

__all__ = [
    "MiniLMEmbeddings",
    "OnnxCrossEncoder",
    "OnnxMiniLM",
    "StaticEmbeddings",
    "make_embeddings",
]

__getattr__, __dir__ = lazy_exports(
    globals(),
    {
        "MiniLMEmbeddings": f"{__name__}.minilm",
        "OnnxCrossEncoder": f"{__name__}.cross_encoder",
        "OnnxMiniLM": f"{__name__}.minilm",
        "StaticEmbeddings": f"{__name__}.static",
        "make_embeddings": f"{__name__}.choice",
    },
)
