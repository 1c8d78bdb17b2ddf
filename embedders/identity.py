"""Name the embedding model behind a LangChain ``Embeddings`` and adapt it for chromadb.

A persistent collection records which embeddings wrote it, so reopening it with a
different model fails loudly instead of mixing incompatible vectors.
"""

from __future__ import annotations

from typing import Any

from chromadb.api.types import Documents, EmbeddingFunction
from chromadb.api.types import Embeddings as ChromaEmbeddings
from chromadb.utils.embedding_functions import register_embedding_function
from langchain_core.embeddings import Embeddings

_MODEL_ATTRS = ("model", "model_name", "model_id", "deployment")


def embedding_name(embeddings: Embeddings) -> str:
    """Return a stable identity string: class path plus model name when it has one."""
    chroma_function = getattr(embeddings, "chroma_function", None)
    if callable(chroma_function):
        return str(chroma_function().name())
    cls = type(embeddings)
    name = f"{cls.__module__}.{cls.__qualname__}"
    for attr in _MODEL_ATTRS:
        value = getattr(embeddings, attr, None)
        if isinstance(value, str) and value:
            return f"{name}:{value}"
    return name


@register_embedding_function
class LangChainEmbeddingFunction(EmbeddingFunction[Documents]):
    """Adapts any LangChain ``Embeddings`` to chromadb's embedding-function protocol.

    lamina always passes vectors explicitly, so Chroma never calls this to embed on
    its own; it exists so the collection's config names the model that wrote it.
    """

    def __init__(self, embeddings: Embeddings | None = None, *, identity: str = "") -> None:
        self._embeddings = embeddings
        self._identity = identity or (embedding_name(embeddings) if embeddings else "")

    def __call__(self, input: Documents) -> ChromaEmbeddings:
        """Embed documents through the wrapped LangChain model."""
        if self._embeddings is None:
            raise RuntimeError(
                f"this collection was written with LangChain embeddings {self._identity!r}; "
                "open it through lamina with the same embeddings object"
            )
        import numpy as np

        vectors = self._embeddings.embed_documents(list(input))
        return [np.asarray(v, dtype=np.float32) for v in vectors]

    @staticmethod
    def name() -> str:
        """Name under which chromadb persists this adapter."""
        return "lamina-langchain"

    def get_config(self) -> dict[str, Any]:
        """Persist only the identity; the model object itself is not serialisable."""
        return {"identity": self._identity}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> LangChainEmbeddingFunction:
        """Rebuild a placeholder that explains how to reopen the collection."""
        return LangChainEmbeddingFunction(identity=str(config.get("identity", "")))


def chroma_function_for(embeddings: Embeddings) -> EmbeddingFunction[Documents]:
    """Return the chromadb embedding function to register with the collections."""
    chroma_function = getattr(embeddings, "chroma_function", None)
    if callable(chroma_function):
        return chroma_function()  # type: ignore[no-any-return]
    return LangChainEmbeddingFunction(embeddings)


__all__ = [
    "LangChainEmbeddingFunction",
    "chroma_function_for",
    "embedding_name",
]
