"""The lazy model loader the ONNX embedder, the cross-encoder and the static embedder share."""

from __future__ import annotations

import threading
import time

import pytest

from lamina.embedders.onnx_loader import LazyModel


def test_the_model_is_opened_once_on_first_use_however_many_threads_ask() -> None:
    opened: list[int] = []

    def open_model() -> str:
        time.sleep(0.05)  # long enough for every thread to arrive while it opens
        opened.append(1)
        return "model"

    lazy = LazyModel(open_model)
    assert not lazy.loaded and opened == []  # nothing happens at construction
    got: list[str] = []
    threads = [threading.Thread(target=lambda: got.append(lazy.get())) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got == ["model"] * 8 and len(opened) == 1 and lazy.loaded


def test_a_failed_open_raises_and_the_next_call_tries_again() -> None:
    calls: list[int] = []

    def flaky() -> str:
        calls.append(1)
        if len(calls) == 1:
            raise OSError("weights missing")
        return "model"

    lazy = LazyModel(flaky)
    with pytest.raises(OSError, match="weights missing"):
        lazy.get()
    assert not lazy.loaded
    assert lazy.get() == "model" and len(calls) == 2
