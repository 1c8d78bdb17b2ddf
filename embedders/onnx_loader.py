"""Loading an ONNX model once, on first use, from local files only.

The offline embedder (:mod:`.embeddings`) and the cross-encoder reranker
(:mod:`.cross_encoder`) both open an onnxruntime session and a tokenizer the first time
they are asked for vectors or scores, never at construction (importing onnxruntime and
reading the weights takes seconds), and exactly once however many threads ask at once.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

Loaded = TypeVar("Loaded")


class LazyModel(Generic[Loaded]):
    """What ``open_model`` returns, opened on the first :meth:`get` (thread-safe)."""

    def __init__(self, open_model: Callable[[], Loaded]) -> None:
        self._open = open_model
        self._loaded: Loaded | None = None
        self._lock = threading.Lock()

    def get(self) -> Loaded:
        """The opened model; the first caller opens it, the others wait for it.

        Raises:
            Exception: whatever ``open_model`` raised (the next call tries again).
        """
        loaded = self._loaded
        if loaded is not None:
            return loaded
        with self._lock:
            if self._loaded is None:
                self._loaded = self._open()
            return self._loaded

    @property
    def loaded(self) -> bool:
        """Whether the model has been opened."""
        return self._loaded is not None


def cpu_session(path: str, threads: int | None = None) -> Any:
    """An onnxruntime ``InferenceSession`` on the CPU (``threads``: intra-op threads)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    if threads:
        options.intra_op_num_threads = threads
    return ort.InferenceSession(path, sess_options=options, providers=["CPUExecutionProvider"])


__all__ = ["LazyModel", "cpu_session"]
