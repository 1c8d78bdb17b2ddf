"""mem0's OpenAI client answered from kept replies first, so its memory can be rebuilt.

mem0 keeps its memory in a local Chroma store that cannot be committed (it holds the
dataset's text). :class:`KeptOpenAI` wraps the client mem0 calls: every
``chat.completions.create`` reply is appended to a JSONL file
(:class:`~lamina_bench.evaluation.kept_replies.KeptReplies`) under a sha256 of the request,
sealed with another hash of it, and
a request seen before is answered from the file without calling the model. On another
machine mem0, fed the same batches, asks the same requests and rebuilds the same store.

mem0 writes today's date into its extraction prompt, so the key reads today's date
(UTC or local, ``YYYY-MM-DD``) as a placeholder: a rebuild on a later day still finds
the reply the model gave. The dataset's own dates are years before any build.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from ..kept_replies import KeptReplies, key_of

OPENAI_REPLIES = "openai-replies.jsonl"
"""The construction folder's file of replies to OpenAI-client peers."""
TODAY = "<today>"


def _completion(value: Any) -> Any:
    from openai.types.chat import ChatCompletion

    return ChatCompletion.model_validate(value)


def open_replies(folder: Path) -> KeptReplies:
    """The kept OpenAI replies of a construction folder."""
    return KeptReplies(folder / OPENAI_REPLIES, field="completion", revive=_completion)


def today() -> set[str]:
    """Today's date as ``YYYY-MM-DD``, in UTC and in local time (one or two strings)."""
    return {datetime.now(UTC).date().isoformat(), date.today().isoformat()}


def completion_request(
    params: Mapping[str, Any], scope: str = "", *, days: Callable[[], set[str]] = today
) -> bytes:
    """``scope`` and the request's parameters as one request, today's ``days`` as a mark."""
    text = json.dumps(params, sort_keys=True, default=str)
    for day in days():
        text = text.replace(day, TODAY)
    return f"{scope}\x1f{text}".encode("utf-8", "replace")


def completion_key(
    params: Mapping[str, Any], scope: str = "", *, days: Callable[[], set[str]] = today
) -> str:
    """The key of a request's reply: a sha256 over :func:`completion_request`."""
    return key_of(completion_request(params, scope, days=days))


class _KeptCompletions:
    def __init__(
        self, completions: Any, replies: KeptReplies, scope: str, on_kept: Callable[[], None]
    ) -> None:
        self._completions = completions
        self._replies = replies
        self._scope = scope
        self._on_kept = on_kept

    def create(self, **params: Any) -> Any:
        request = completion_request(params, self._scope)
        kept = self._replies.get(request)
        if kept is not None:
            self._on_kept()
            return kept.model_copy(deep=True)
        response = self._completions.create(**params)
        self._replies.put(request, response.model_dump(mode="json"), response.model_copy(deep=True))
        return response

    def __getattr__(self, name: str) -> Any:
        return getattr(self._completions, name)


class _KeptChat:
    def __init__(
        self, chat: Any, replies: KeptReplies, scope: str, on_kept: Callable[[], None]
    ) -> None:
        self.completions = _KeptCompletions(chat.completions, replies, scope, on_kept)
        self._chat = chat

    def __getattr__(self, name: str) -> Any:
        return getattr(self._chat, name)


class KeptOpenAI:
    """An OpenAI client whose ``chat.completions.create`` is answered from kept replies first.

    ``scope`` is part of every key (what the request does not name, such as the weights a
    local server loaded); ``on_kept`` is called for each request answered from the file.
    Everything else is the wrapped client's.
    """

    def __init__(
        self,
        client: Any,
        replies: KeptReplies,
        scope: str = "",
        on_kept: Callable[[], None] = lambda: None,
    ) -> None:
        self.chat = _KeptChat(client.chat, replies, scope, on_kept)
        self._client = client

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


__all__ = ["OPENAI_REPLIES", "KeptOpenAI", "completion_key", "completion_request", "open_replies"]
