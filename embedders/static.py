"""A static (context-free) offline embedder: WordLlama ``l2_supercat`` at 256 dimensions.

The weights (a 32,000 x 256 token table, 16 MB) and the tokenizer ship inside the PyPI
wheel of ``wordllama`` (MIT), installed by ``pip install 'lamina[embedders]'``. A text's
vector is the mean of its tokens' rows, L2-normalised: no neural network runs, so it
embeds far faster than MiniLM, at some cost in quality.

The files are read straight from the installed package. ``wordllama``'s own loader is not
used: its bundled-tokenizer lookup misses the file the wheel ships (it looks in
``tokenizer/``, the wheel has ``tokenizers/``) and would fall back to a download, and
importing it configures the root logger. Nothing is downloaded at run time.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import numpy as np
from chromadb.api.types import Documents
from chromadb.api.types import Embeddings as ChromaEmbeddings
from chromadb.utils.embedding_functions import register_embedding_function

from ..errors import EmbeddingError, MissingDependencyError
from .faces import EngineEmbeddings, UnitVectorFunction
from .onnx_loader import LazyModel

STATIC_MODEL = "wordllama-l2-supercat-256"
STATIC_DIM = 256
_WEIGHTS = "weights/l2_supercat_256.safetensors"
_TOKENIZER = "tokenizers/l2_supercat_tokenizer_config.json"
_TENSOR = "embedding.weight"
_INSTALL = "pip install 'lamina[embedders]'"


def wordllama_files() -> tuple[Path, Path]:
    """Return the bundled (weights, tokenizer) paths of the installed ``wordllama`` wheel.

    The package is located without importing it.

    Raises:
        MissingDependencyError: ``wordllama`` is not installed.
        EmbeddingError: it is installed but the bundled files are missing.
    """
    spec = importlib.util.find_spec("wordllama")
    if spec is None or not spec.submodule_search_locations:
        raise MissingDependencyError(
            f"the static embedder needs the wordllama package (it bundles the weights): {_INSTALL}"
        )
    root = Path(next(iter(spec.submodule_search_locations)))
    weights, tokenizer = root / _WEIGHTS, root / _TOKENIZER
    missing = [str(p) for p in (weights, tokenizer) if not p.is_file()]
    if missing:
        raise EmbeddingError(
            f"the installed wordllama package lacks {missing}; reinstall it from its wheel: "
            f"pip install --force-reinstall 'wordllama>=0.4,<0.5'"
        )
    return weights, tokenizer


class StaticEmbedder:
    """Mean of token vectors from a static table, L2-normalised. Thread-safe, lazy."""

    def __init__(
        self,
        *,
        weights_path: str | Path | None = None,
        tokenizer_path: str | Path | None = None,
        max_tokens: int = 8192,
    ) -> None:
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be >= 1, got {max_tokens}")
        self.max_tokens = max_tokens
        """Tokens of one text that count; the rest are ignored (bounds a huge input's cost)."""
        self._paths = (weights_path, tokenizer_path)
        self._model = LazyModel(self._open)

    def _open(self) -> tuple[Any, np.ndarray]:
        weights, tokenizer_path = self._paths
        if weights is None or tokenizer_path is None:
            weights, tokenizer_path = wordllama_files()
        try:
            from safetensors import safe_open
            from tokenizers import Tokenizer

            tokenizer = Tokenizer.from_file(str(tokenizer_path))
            tokenizer.no_padding()
            tokenizer.no_truncation()
            with safe_open(str(weights), framework="np") as f:
                table = np.ascontiguousarray(f.get_tensor(_TENSOR), dtype=np.float32)
        except Exception as e:  # any failure here means the model is unusable
            raise EmbeddingError(
                f"could not load the static embedder from {weights} ({e}); reinstall with "
                f"{_INSTALL}"
            ) from e
        if table.ndim != 2:
            raise EmbeddingError(f"{weights} holds a {table.ndim}-d tensor, expected 2-d")
        return tokenizer, table

    def embed(self, texts: list[str]) -> np.ndarray:
        """Return a float32 array ``[len(texts), dim]`` of unit vectors.

        A text with no tokens (an empty string) gets the same fixed unit vector, never a
        zero or NaN vector that would break cosine search.
        """
        tokenizer, table = self._model.get()
        out = np.empty((len(texts), table.shape[1]), dtype=np.float32)
        if not texts:
            return out
        encodings = tokenizer.encode_batch(list(texts), add_special_tokens=False)
        limit = table.shape[0] - 1
        for i, enc in enumerate(encodings):
            ids = np.clip(np.asarray(enc.ids[: self.max_tokens], dtype=np.int64), 0, limit)
            out[i] = table[ids].mean(axis=0) if ids.size else 0.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        empty = norms[:, 0] < 1e-12
        out[empty] = 1.0 / np.sqrt(table.shape[1])
        norms[empty] = 1.0
        out /= norms
        return out


class StaticEmbeddings(EngineEmbeddings[StaticEmbedder]):
    """LangChain ``Embeddings`` over :class:`StaticEmbedder` (WordLlama by default)."""

    model = STATIC_MODEL
    """Model name, part of the store's embedding identity."""

    def __init__(self, engine: StaticEmbedder | None = None, **engine_kwargs: Any) -> None:
        self.engine = engine or StaticEmbedder(**engine_kwargs)

    def chroma_function(self) -> StaticEmbeddingFunction:
        """Return the chromadb embedding function sharing this engine."""
        return StaticEmbeddingFunction(engine=self.engine)


@register_embedding_function
class StaticEmbeddingFunction(UnitVectorFunction):
    """chromadb embedding function for the static WordLlama embedder."""

    def __init__(self, *, engine: StaticEmbedder | None = None, max_tokens: int = 8192) -> None:
        self.engine = engine or StaticEmbedder(max_tokens=max_tokens)

    def __call__(self, input: Documents) -> ChromaEmbeddings:
        """Embed documents for Chroma."""
        return list(self.engine.embed(list(input)))

    @staticmethod
    def name() -> str:
        """Name under which chromadb persists this function (the store's identity)."""
        return "lamina-" + STATIC_MODEL

    def get_config(self) -> dict[str, Any]:
        """Serializable config, persisted by chromadb with the collection."""
        return {"max_tokens": self.engine.max_tokens}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> StaticEmbeddingFunction:
        """Rebuild from a persisted config."""
        return StaticEmbeddingFunction(max_tokens=int(config.get("max_tokens", 8192)))


__all__ = [
    "STATIC_DIM",
    "STATIC_MODEL",
    "StaticEmbedder",
    "StaticEmbeddingFunction",
    "StaticEmbeddings",
    "wordllama_files",
]
