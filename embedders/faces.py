"""The LangChain and chromadb faces the offline embedders share (MiniLM, WordLlama).

Each embedder is an engine whose ``embed(texts)`` returns a ``[len(texts), dim]`` array of
unit vectors; :class:`EngineEmbeddings` turns that into LangChain's ``Embeddings`` and
:class:`UnitVectorFunction` gives a chromadb embedding function the spaces such vectors
suit. Each embedder module adds its own constructor, name and persisted configuration.
"""

from __future__ import annotations

from typing import Generic, Protocol, TypeVar

import numpy as np
from chromadb.api.types import Documents, EmbeddingFunction, Space
from langchain_core.embeddings import Embeddings

__all__ = ["Engine", "EngineEmbeddings", "UnitVectorFunction"]


class Engine(Protocol):
    """Embeds a batch of texts into unit vectors."""

    def embed(self, texts: list[str]) -> np.ndarray:
        """A float32 array ``[len(texts), dim]`` of unit vectors."""
        ...


E = TypeVar("E", bound=Engine)


class EngineEmbeddings(Embeddings, Generic[E]):
    """LangChain ``Embeddings`` over an :class:`Engine` (what lamina's stores take)."""

    engine: E

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed documents."""
        return self.engine.embed(list(texts)).tolist()  # type: ignore[no-any-return]

    def embed_query(self, text: str) -> list[float]:
        """Embed one query."""
        return self.engine.embed([text])[0].tolist()  # type: ignore[no-any-return]


class UnitVectorFunction(EmbeddingFunction[Documents]):
    """A chromadb embedding function whose vectors are unit length.

    Subclasses define ``__call__`` themselves: chromadb wraps each subclass's own
    ``__call__`` with its output validation, once.
    """

    def default_space(self) -> Space:
        """Vectors are unit length; cosine is the natural space."""
        return "cosine"

    def supported_spaces(self) -> list[Space]:
        """Spaces that make sense for unit vectors."""
        return ["cosine", "ip", "l2"]
