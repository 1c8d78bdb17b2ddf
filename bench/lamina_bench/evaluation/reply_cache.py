"""Model replies of a construction, kept in a file so the memory can be rebuilt elsewhere.

Building memory with a local model takes hours. The store it builds is machine-local, and
it cannot be committed: it holds the dataset's turns. :class:`ReplyFile` is a LangChain
cache (``BaseCache``, set as the chat model's ``cache``) that appends every reply the
model gives while memory is built to a JSONL file, keyed by a sha256 of the request and
sealed with another hash of it (:mod:`.kept_replies`). The file holds no prompt, and no
reply anyone without the data could read, so it may be committed beside the batch
journal. On another machine the same build, fed the same turns, asks the same
questions and gets the kept replies back without calling the model: the store is rebuilt
in minutes, and whatever was not kept is asked for and appended.

The key leaves out where the model was served (a local server picks a free port each run)
and its API key; everything else that shapes a reply (model, temperature, output cap,
response format, every message) is in it.
"""

from __future__ import annotations

import json
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

from .kept_replies import KeptReplies, key_of, secret_of

REPLY_FILE = "replies.jsonl"
_ENDPOINT_FIELDS = frozenset(
    {"openai_api_base", "base_url", "openai_api_key", "api_key", "openai_proxy", "http_client"}
)
"""Client settings that say where and how the model is reached, not what it answers."""
_ALLOWED: list[Any] = [ChatGeneration, Generation, AIMessage]


def request_key(prompt: str, llm_string: str, scope: str = "") -> str:
    """The key of a request's reply: a sha256 over :func:`request_bytes`."""
    return key_of(request_bytes(prompt, llm_string, scope))


def request_secret(prompt: str, llm_string: str, scope: str = "") -> bytes:
    """The secret a reply to this request is sealed with: another hash of the request."""
    return secret_of(request_bytes(prompt, llm_string, scope))


def request_bytes(prompt: str, llm_string: str, scope: str = "") -> bytes:
    """``scope``, the serialized messages and the model's settings, as one request.

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
    return b"\x1f".join(
        part.encode("utf-8", "replace") for part in (scope, prompt, f"{head}{sep}{tail}")
    )


def _revive(value: Any) -> list[Generation]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LangChainBetaWarning)
        out = [load(item, allowed_objects=_ALLOWED) for item in value]
    if not all(isinstance(g, Generation) for g in out):
        raise ValueError("a kept reply is not a generation")
    return out


class ReplyFile(BaseCache):
    """A LangChain cache in one append-only JSONL file (:class:`~.kept_replies.KeptReplies`).

    ``hits`` and ``misses`` count lookups, for the caller to report; ``unreadable`` the
    lines skipped when the file was read. ``scope`` is part of every key (see
    :func:`request_key`).
    """

    def __init__(self, path: str | Path, *, scope: str = "") -> None:
        self.scope = scope
        self.kept = KeptReplies(path, field="generations", revive=_revive)

    @property
    def path(self) -> Path:
        """The JSONL file."""
        return self.kept.path

    @property
    def hits(self) -> int:
        """Lookups answered from the file."""
        return self.kept.hits

    @property
    def misses(self) -> int:
        """Lookups the file could not answer (the model was asked)."""
        return self.kept.misses

    @property
    def unreadable(self) -> int:
        """Lines skipped when the file was read."""
        return self.kept.unreadable

    def __len__(self) -> int:
        return len(self.kept)

    def lookup(self, prompt: str, llm_string: str) -> RETURN_VAL_TYPE | None:
        """The kept reply to this request, or None (then the model is asked)."""
        kept = self.kept.get(request_bytes(prompt, llm_string, self.scope))
        return None if kept is None else [g.model_copy(deep=True) for g in kept]

    def update(self, prompt: str, llm_string: str, return_val: RETURN_VAL_TYPE) -> None:
        """Keep the model's reply: appended to the file and flushed to disk at once."""
        generations: Sequence[Generation] = return_val
        self.kept.put(
            request_bytes(prompt, llm_string, self.scope),
            [dumpd(g) for g in generations],
            [g.model_copy(deep=True) for g in generations],
        )

    def clear(self, **kwargs: Any) -> None:
        """Forget every kept reply and delete the file."""
        self.kept.clear()


def replaying(model: BaseChatModel, replies: BaseCache) -> BaseChatModel:
    """A copy of ``model`` that answers from ``replies`` first and keeps what it is asked.

    A shallow copy: it shares the original's client (and a test double's call records),
    while the original, used to answer questions, keeps its own cache setting.
    """
    return model.model_copy(update={"cache": replies})


__all__ = [
    "REPLY_FILE",
    "ReplyFile",
    "replaying",
    "request_bytes",
    "request_key",
    "request_secret",
]
