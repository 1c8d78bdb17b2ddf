"""Test doubles for code that uses memstrata: fake embeddings and a scripted chat model.

They need no model and no network, so unit tests stay fast and exact.
"""

from __future__ import annotations

import hashlib
import math
import re
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

_WORD = re.compile(r"[a-z0-9]+")


class FakeEmbeddings(Embeddings):
    """Deterministic bag-of-words embeddings with controllable similarity.

    Each lowercase word is hashed to a fixed random unit direction; a text's vector is
    the normalised sum of its words' directions. Texts that share words are similar,
    texts that share none are near-orthogonal. ``calls`` records every embedded batch.
    """

    def __init__(self, dim: int = 64, *, model: str = "fake-bow") -> None:
        if dim < 2:
            raise ValueError(f"dim must be >= 2, got {dim}")
        self.dim = dim
        self.model = model
        self.calls: list[list[str]] = []

    def _direction(self, word: str) -> list[float]:
        seed = hashlib.sha256(word.encode("utf-8")).digest()
        values: list[float] = []
        counter = 0
        while len(values) < self.dim:
            block = hashlib.sha256(seed + counter.to_bytes(4, "big")).digest()
            values.extend((b - 127.5) / 127.5 for b in block)
            counter += 1
        return values[: self.dim]

    def _embed(self, text: str) -> list[float]:
        vector = [0.0] * self.dim
        for word in _WORD.findall(text.lower()) or ["<empty>"]:
            for i, v in enumerate(self._direction(word)):
                vector[i] += v
        norm = math.sqrt(sum(v * v for v in vector)) or 1.0
        return [v / norm for v in vector]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed documents."""
        self.calls.append(list(texts))
        return [self._embed(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        """Embed one query."""
        self.calls.append([text])
        return self._embed(text)


class ScriptedChatModel(BaseChatModel):
    """A chat model that replies from a queue and records every call.

    Queue strings (the reply text) or exceptions (raised by that call). It has no native
    structured output, so memstrata's structured-output helper asks for JSON in the
    prompt and parses the reply, the same path a weak local model takes.
    """

    replies: list[str | BaseException] = Field(default_factory=list)
    calls: list[list[BaseMessage]] = Field(default_factory=list)

    def enqueue(self, *replies: str | BaseException) -> ScriptedChatModel:
        """Append replies to the queue; return self for chaining."""
        self.replies.extend(replies)
        return self

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.calls.append(list(messages))
        if not self.replies:
            raise AssertionError("ScriptedChatModel ran out of replies")
        reply = self.replies.pop(0)
        if isinstance(reply, BaseException):
            raise reply
        prompt_tokens = sum(len(str(m.content).split()) for m in messages)
        completion_tokens = len(reply.split())
        message = AIMessage(
            reply,
            usage_metadata={
                "input_tokens": prompt_tokens,
                "output_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        )
        return ChatResult(generations=[ChatGeneration(message=message)])
