"""A cross-encoder reranker on onnxruntime, loaded from local files only.

Give it a folder holding ``model.onnx`` (a sequence-classification export: inputs
``input_ids``, ``attention_mask`` and optionally ``token_type_ids``; one relevance logit
per pair, or two with the relevant class last) and the model's ``tokenizer.json``. Nothing
is downloaded: no PyPI package bundles cross-encoder weights, so the files must be put
there by the user.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import EmbeddingError, InvalidInputError
from .onnx_loader import LazyModel, cpu_session

MODEL_FILE = "model.onnx"
TOKENIZER_FILE = "tokenizer.json"


class OnnxCrossEncoder:
    """Scores (query, passage) pairs with an ONNX cross-encoder. Thread-safe, lazy.

    Satisfies :class:`~lamina.stores.rerank.Reranker`.
    """

    def __init__(
        self,
        model_dir: str | Path,
        *,
        max_length: int = 256,
        batch_size: int = 16,
        threads: int | None = None,
    ) -> None:
        if not isinstance(max_length, int) or not 16 <= max_length <= 512:
            raise InvalidInputError(f"max_length must be an int in [16, 512], got {max_length!r}")
        if not isinstance(batch_size, int) or batch_size < 1:
            raise InvalidInputError(f"batch_size must be a positive int, got {batch_size!r}")
        folder = Path(model_dir)
        missing = [n for n in (MODEL_FILE, TOKENIZER_FILE) if not (folder / n).is_file()]
        if missing:
            raise InvalidInputError(
                f"{folder} lacks {missing}: put a cross-encoder's ONNX export and its "
                "tokenizer.json there (nothing is downloaded)"
            )
        self.model_dir = folder
        self.max_length = max_length
        self.batch_size = batch_size
        self._threads = threads
        self._model = LazyModel(self._open)

    def _open(self) -> tuple[Any, list[str], Any]:
        """(tokenizer, the session's input names, session)."""
        try:
            from tokenizers import Tokenizer

            tokenizer = Tokenizer.from_file(str(self.model_dir / TOKENIZER_FILE))
            tokenizer.enable_truncation(max_length=self.max_length, strategy="longest_first")
            pad_id = tokenizer.token_to_id("[PAD]")
            tokenizer.enable_padding(pad_id=pad_id if pad_id is not None else 0)
            session = cpu_session(str(self.model_dir / MODEL_FILE), self._threads)
        except Exception as e:  # any failure here means the model is unusable
            raise EmbeddingError(
                f"could not load the cross-encoder in {self.model_dir}: {e}"
            ) from e
        inputs = [i.name for i in session.get_inputs()]
        unknown = set(inputs) - {"input_ids", "attention_mask", "token_type_ids"}
        if unknown or "input_ids" not in inputs:
            raise EmbeddingError(
                f"{self.model_dir / MODEL_FILE} takes inputs {inputs}; a cross-encoder export "
                "takes input_ids, attention_mask and optionally token_type_ids"
            )
        return tokenizer, inputs, session

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        """Return one relevance logit per passage (higher is more relevant)."""
        if not isinstance(query, str):
            raise InvalidInputError(f"query must be a str, got {type(query).__name__}")
        if not passages:
            return []
        tokenizer, inputs, session = self._model.get()
        out: list[float] = []
        for start in range(0, len(passages), self.batch_size):
            chunk = [(query, str(p)) for p in passages[start : start + self.batch_size]]
            encodings = tokenizer.encode_batch(chunk)
            feeds = {
                "input_ids": np.asarray([e.ids for e in encodings], dtype=np.int64),
                "attention_mask": np.asarray([e.attention_mask for e in encodings], dtype=np.int64),
                "token_type_ids": np.asarray([e.type_ids for e in encodings], dtype=np.int64),
            }
            logits = np.asarray(
                session.run(None, {n: feeds[n] for n in inputs})[0], dtype=np.float64
            )
            if logits.ndim == 2:
                logits = logits[:, -1]
            out.extend(float(v) for v in logits.reshape(len(chunk)))
        return out


__all__ = [
    "MODEL_FILE",
    "TOKENIZER_FILE",
    "OnnxCrossEncoder",
]
