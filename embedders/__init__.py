"""Embedders and rerankers that run offline, from weights installed with the package.

:class:`MiniLMEmbeddings` (the default, int8 ONNX MiniLM) and :class:`StaticEmbeddings`
(the ``embedders`` extra) are LangChain ``Embeddings`` with a registered chromadb
embedding function each (:class:`MiniLMEmbeddingFunction` is MiniLM's);
:func:`make_embeddings` picks one by name. :class:`OnnxCrossEncoder` scores (query,
passage) pairs for :class:`~lamina.stores.rerank.RerankingStore`. Models load on first
use (:mod:`.onnx_loader`); nothing is downloaded. The names below are imported on first
use (:mod:`lamina.core.lazy`), so importing this package does not load onnxruntime or
chromadb.
"""

from __future__ import annotations

from ..core.lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    globals(),
    {
        "MiniLMEmbeddingFunction": ".minilm",
        "MiniLMEmbeddings": ".minilm",
        "OnnxCrossEncoder": ".cross_encoder",
        "OnnxMiniLM": ".minilm",
        "StaticEmbeddings": ".static",
        "make_embeddings": ".choice",
    },
)
