"""Model replies of a construction, kept in a file so the memory can be rebuilt elsewhere.

Building memory with a local model takes hours. The store it builds is machine-local, and
it cannot be committed: it holds the dataset's turns. :class:`ReplyFile` is a LangChain
cache (``BaseCache``, set as the chat model's ``cache``) that appends every reply the
model gives while memory is built to a JSONL file, keyed by a sha256 of the request. The
file holds the replies and their usage, never a prompt, so it may be committed beside the
batch journal. On another machine the same build, fed the same turns, asks the same
questions and gets the kept replies back without calling the model: the store is rebuilt
in minutes, and whatever was not kept is asked for and appended.

The key leaves out where the model was served (a local server picks a free port each run)
and its API key; everything else that shapes a reply (model, temperature, output cap,
response format, every message) is in it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core._api import LangChainBetaWarning
from langchain_core.caches import RETURN_VAL_TYPE, BaseCache
from langchain_core.language_models import BaseChatModel
from langchain_core.load import dumpd, load
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, Generation

log = logging.getLogger(__name__)

REPLY_FILE = "replies.jsonl"
_ENDPOINT_FIELDS = frozenset(
    {"openai_api_base", "base_url", "openai_api_key", "api_key", "openai_proxy", "http_client"}
)
"""Client settings that say where and how the model is reached, not what it answers."""
_ALLOWED: list[Any] = [ChatGeneration, Generation, AIMessage]


def request_key(prompt: str, llm_string: str, scope: str = "") -> str:
    """A sha256 over ``scope``, the serialized messages and the model's settings.

    The endpoint is left out of the settings. ``scope`` names what the settings may not,
    such as which weights a local server loaded.
    """
    head, sep, tail = llm_string.partition("---")
    try:
        settings = json.loads(head)
    except json.JSONDecodeError:
        settings = None
    if isinstance(settings, dict) and isinstance(settings.get("kwargs"), dict):
        kwargs = {k: v for k, v in settings["kwargs"].items() if k not in _ENDPOINT_FIELDS}
        head = json.dumps({**settings, "kwargs": kwargs}, sort_keys=True)
    digest = hashlib.sha256(scope.encode("utf-8", "replace") + b"\x1f")
    digest.update(prompt.encode("utf-8", "replace") + b"\x1f")
    digest.update(f"{head}{sep}{tail}".encode("utf-8", "replace"))
    return digest.hexdigest()


def _revive(value: Any) -> list[Generation]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LangChainBetaWarning)
        out = [load(item, allowed_objects=_ALLOWED) for item in value]
    if not all(isinstance(g, Generation) for g in out):
        raise ValueError("a kept reply is not a generation")
    return out


class ReplyFile(BaseCache):
    """A LangChain cache in one append-only JSONL file, one line per request.

    Reading skips a line that cannot be decoded (a write cut short by a crash), counted in
    :attr:`unreadable`; the request is then asked again and appended. The last line of a
    key wins. ``hits`` and ``misses`` count lookups, for the caller to report. ``scope``
    is part of every key (see :func:`request_key`).
    """

    def __init__(self, path: str | Path, *, scope: str = "") -> None:
        self.path = Path(path)
        self.scope = scope
        self._lock = threading.Lock()
        self._kept: dict[str, list[Generation]] = {}
        self.hits = 0
        self.misses = 0
        self.unreadable = 0
        if self.path.exists():
            self._read()

    def _read(self) -> None:
        with self.path.open(encoding="utf-8") as handle:
            for n, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                try:
                    entry = json.loads(line)
                    self._kept[str(entry["key"])] = _revive(entry["generations"])
                except (ValueError, KeyError, TypeError) as e:
                    self.unreadable += 1
                    log.warning("%s line %d: unreadable reply skipped (%s)", self.path, n, e)

    def __len__(self) -> int:
        return len(self._kept)

    def lookup(self, prompt: str, llm_string: str) -> RETURN_VAL_TYPE | None:
        """The kept reply to this request, or None (then the model is asked)."""
        with self._lock:
            kept = self._kept.get(request_key(prompt, llm_string, self.scope))
            if kept is None:
                self.misses += 1
                return None
            self.hits += 1
            return [g.model_copy(deep=True) for g in kept]

    def update(self, prompt: str, llm_string: str, return_val: RETURN_VAL_TYPE) -> None:
        """Keep the model's reply: appended to the file and flushed to disk at once."""
        generations: Sequence[Generation] = return_val
        key = request_key(prompt, llm_string, self.scope)
        line = json.dumps({"key": key, "generations": [dumpd(g) for g in generations]})
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a+b") as handle:
                if handle.seek(0, os.SEEK_END):
                    handle.seek(-1, os.SEEK_END)
                    if handle.read(1) != b"\n":  # the last write was cut short
                        line = "\n" + line
                handle.write((line + "\n").encode("utf-8"))
                handle.flush()
                os.fsync(handle.fileno())
            self._kept[key] = [g.model_copy(deep=True) for g in generations]

    def clear(self, **kwargs: Any) -> None:
        """Forget every kept reply and empty the file."""
        with self._lock:
            self._kept.clear()
            self.path.unlink(missing_ok=True)


def replaying(model: BaseChatModel, replies: BaseCache) -> BaseChatModel:
    """A copy of ``model`` that answers from ``replies`` first and keeps what it is asked.

    A shallow copy: it shares the original's client (and a test double's call records),
    while the original, used to answer questions, keeps its own cache setting.
    """
    return model.model_copy(update={"cache": replies})


__all__ = ["REPLY_FILE", "ReplyFile", "replaying", "request_key"]
