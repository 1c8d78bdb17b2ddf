"""Which chat model a :class:`~lamina.Memory` uses, and the local server's lifecycle.

Resolution order: an explicit ``chat_model`` > a configured OpenAI-compatible endpoint
(``openai_base_url`` / ``openai_api_key``) > the local GGUF model served in-process by
llama.cpp. The local server starts on the first call that needs an LLM, is reused by
later calls, and is stopped by :meth:`ChatModelProvider.close`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Protocol

from langchain_core.language_models import BaseChatModel
from pydantic import SecretStr

from ..config import MemoryConfig

DEFAULT_OPENAI_MODEL = "gpt-4o-mini"


class LocalServer(Protocol):
    """What the provider needs from a local model server (:class:`lamina.llm.LocalLLMServer`)."""

    def start(self) -> Any:
        """Load the model and serve it; return at once if already running."""
        ...

    def stop(self) -> None:
        """Stop serving."""
        ...

    def chat_model(self, **kwargs: Any) -> BaseChatModel:
        """A chat model bound to the server."""
        ...


LocalServerFactory = Callable[[MemoryConfig], LocalServer]
"""Builds (but does not start) the local server for a config; tests pass a fake."""


def default_local_server(config: MemoryConfig) -> LocalServer:
    """A :class:`~lamina.llm.LocalLLMServer` for ``config``, not yet started."""
    from ..llm import LocalLLMServer, local_model_path

    return LocalLLMServer(
        local_model_path(config.local_model),
        port=config.local_port,
        n_ctx=config.local_ctx,
        threads=config.local_threads,
        max_tokens=config.max_tokens or -1,
        startup_timeout=config.local_startup_timeout,
        request_timeout=config.timeout,
        warmup=False,
    )


def endpoint_chat_model(config: MemoryConfig) -> BaseChatModel:
    """A ``ChatOpenAI`` for the configured OpenAI-compatible endpoint."""
    from langchain_openai import ChatOpenAI

    options: dict[str, Any] = {
        "model": config.model or DEFAULT_OPENAI_MODEL,
        "temperature": config.temperature,
        "timeout": config.timeout,
        "max_retries": config.max_retries,
        "api_key": config.openai_api_key or SecretStr("not-needed"),
    }
    if config.openai_base_url is not None:
        options["base_url"] = config.openai_base_url
    if config.max_tokens is not None:
        options["max_tokens"] = config.max_tokens
    return ChatOpenAI(**options)


class ChatModelProvider:
    """Resolves the chat model once, starting the local server only when first asked."""

    def __init__(
        self,
        config: MemoryConfig,
        *,
        chat_model: BaseChatModel | None = None,
        local_server_factory: LocalServerFactory | None = None,
    ) -> None:
        self.config = config
        self._model = chat_model
        self._factory = local_server_factory or default_local_server
        self._server: LocalServer | None = None
        self._lock = threading.Lock()
        self.source = (
            "explicit"
            if chat_model is not None
            else "endpoint"
            if config.uses_endpoint
            else "local"
        )
        """Where the model comes from: explicit, endpoint or local."""

    @property
    def server(self) -> LocalServer | None:
        """The local server this provider started, if any."""
        return self._server

    def get(self) -> BaseChatModel:
        """The chat model; the first call for a local model loads and serves it."""
        with self._lock:
            if self._model is None:
                if self.source == "endpoint":
                    self._model = endpoint_chat_model(self.config)
                else:
                    server = self._factory(self.config)
                    server.start()
                    self._server = server
                    options: dict[str, Any] = {"temperature": self.config.temperature}
                    if self.config.max_tokens is not None:
                        options["max_tokens"] = self.config.max_tokens
                    self._model = server.chat_model(**options)
            return self._model

    def close(self) -> None:
        """Stop the local server if this provider started it; safe to call twice."""
        with self._lock:
            server, self._server = self._server, None
            if server is not None:
                self._model = None
        if server is not None:
            server.stop()
