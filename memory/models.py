"""Which chat model a :class:`~lamina.Memory` uses, and the local server's lifecycle.

Resolution order: an explicit ``chat_model`` > a configured OpenAI-compatible endpoint
(``openai_base_url`` / ``openai_api_key``) > a ``lamina serve-llm`` already serving the
configured local model on ``local_port`` (:func:`running_local_server`) > the local
GGUF model served in-process by llama.cpp. The local server starts on the first call
that needs an LLM (or, with ``get(start=False)``, on the model's first request), is
reused by later calls, and is stopped by :meth:`ChatModelProvider.close`.
"""

from __future__ import annotations

import json
import threading
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models import BaseChatModel
from pydantic import SecretStr

from ..config import MemoryConfig
from ..errors import LocalModelError

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


TEMPERATURE = 0.0
"""Sampling temperature of lamina's own model: the same turns are built into the same
memory, and the same question gets the same answer."""
MAX_RETRIES = 2
"""HTTP retries per request to an endpoint (the OpenAI client's own default)."""
LOCAL_STARTUP_TIMEOUT = 300.0
"""Seconds the local model may take to load before its start is reported as failed."""
MAX_TOKENS = 1024
"""The most tokens one request to lamina's own model may generate: a ceiling for a model
that will not stop (each step that replies at length caps itself lower)."""
LOCAL_CONTEXT = 8192
"""The offline model's context window in tokens: room for a question, the recalled
memories and the longest reply (``lamina serve-llm --ctx N`` serves it with another)."""

LocalServerFactory = Callable[[MemoryConfig], LocalServer]
"""Builds (but does not start) the local server for a config; tests pass a fake."""


def default_local_server(
    config: MemoryConfig, *, n_ctx: int = LOCAL_CONTEXT, threads: int | None = None
) -> LocalServer:
    """A :class:`~lamina.llm.LocalLLMServer` for ``config``, not yet started.

    Args:
        config: The model (``local_model``) and the port (``local_port``).
        n_ctx: The context window (default :data:`LOCAL_CONTEXT`).
        threads: llama.cpp threads (default half the CPUs,
            :func:`~lamina.llm.default_threads`).
    """
    from ..llm import LocalLLMServer, local_model_path

    return LocalLLMServer(
        local_model_path(config.local_model),
        port=config.local_port,
        n_ctx=n_ctx,
        threads=threads,
        max_tokens=MAX_TOKENS,
        startup_timeout=LOCAL_STARTUP_TIMEOUT,
        request_timeout=config.timeout,
        warmup=False,
    )


def local_model_name(config: MemoryConfig) -> str:
    """The name a server of the configured local model reports (its GGUF file's stem)."""
    from ..llm.gguf import QWEN_GGUF_NAME, SMOLLM2_GGUF_NAME

    files = {"qwen": QWEN_GGUF_NAME, "smollm2": SMOLLM2_GGUF_NAME}
    return Path(files.get(config.local_model, config.local_model)).stem


def running_local_server(config: MemoryConfig, timeout: float = 0.5) -> str | None:
    """The base URL of a server already serving the configured local model, or None.

    Only with ``local_port`` set: a ``lamina serve-llm --port N`` left running answers
    ``GET /v1/models`` with the model's name, and a command (``lamina ask``) then uses it
    instead of loading the model again. A port that does not answer, or serves another
    model, is not used.
    """
    if config.local_port is None:
        return None
    url = f"http://127.0.0.1:{config.local_port}/v1"
    try:
        with urllib.request.urlopen(f"{url}/models", timeout=timeout) as reply:
            listed = json.load(reply)
    except (OSError, ValueError):
        return None
    entries = listed.get("data") if isinstance(listed, dict) else None
    names = {e.get("id") for e in entries or () if isinstance(e, dict)}
    return url if local_model_name(config) in names else None


def endpoint_chat_model(config: MemoryConfig) -> BaseChatModel:
    """A ``ChatOpenAI`` for the configured OpenAI-compatible endpoint."""
    from langchain_openai import ChatOpenAI

    options: dict[str, Any] = {
        "model": config.model or DEFAULT_OPENAI_MODEL,
        "temperature": TEMPERATURE,
        "timeout": config.timeout,
        "max_retries": MAX_RETRIES,
        "api_key": config.openai_api_key or SecretStr("not-needed"),
        "max_tokens": MAX_TOKENS,
    }
    if config.openai_base_url is not None:
        options["base_url"] = config.openai_base_url
    return ChatOpenAI(**options)


class StartOnFirstCall(BaseCallbackHandler):
    """A callback that starts the local model server when its chat model is first called.

    The chat model of a local server can be built before the server runs (its URL is
    known); this handler, among the model's own callbacks, loads the model at the start
    of the first request, so building a graph never waits for it. Its errors are raised,
    not logged: a model that cannot be loaded fails the request.
    """

    raise_error = True

    def __init__(self, start: Callable[[], object]) -> None:
        self._start = start

    def on_chat_model_start(self, serialized: Any, messages: Any, **kwargs: Any) -> None:
        """Start the server (at once if it already runs)."""
        self._start()

    def on_llm_start(self, serialized: Any, prompts: Any, **kwargs: Any) -> None:
        """Start the server (at once if it already runs)."""
        self._start()


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
        self._deferred: BaseChatModel | None = None
        self._started = False
        self._start_error: LocalModelError | None = None
        self._lock = threading.Lock()
        self._start_lock = threading.Lock()
        self.source = (
            "explicit"
            if chat_model is not None
            else "endpoint"
            if config.uses_endpoint
            else "local"
        )
        """Where the model comes from: explicit, endpoint, local, or running (a local
        model's server found already serving on ``local_port``)."""

    @property
    def small_model(self) -> bool:
        """Whether the model is the offline one, which takes the small-model profile."""
        return self.source in ("local", "running")

    @property
    def server(self) -> LocalServer | None:
        """The local server this provider started, if any."""
        return self._server

    def get(self, *, start: bool = True) -> BaseChatModel:
        """The chat model; for a local model, the server that serves it is built once.

        Args:
            start: Load and serve the local model now (the default). With False the
                model loads at the start of its first request instead: the client
                returned is a copy that carries a :class:`StartOnFirstCall` callback,
                so a graph built on it is ready at once.

        Raises:
            LocalModelError: The local model's file is missing, or (with ``start``) it
                could not be loaded.
        """
        with self._lock:
            if self._model is None:
                running = running_local_server(self.config) if self.source == "local" else None
                if running is not None:  # a served local model: no second copy is loaded
                    self.source = "running"
                    named = {"openai_base_url": running, "model": local_model_name(self.config)}
                    self._model = endpoint_chat_model(self.config.model_copy(update=named))
                elif self.source == "endpoint":
                    self._model = endpoint_chat_model(self.config)
                else:
                    server = self._factory(self.config)
                    self._server = server
                    options = {"temperature": TEMPERATURE, "max_tokens": MAX_TOKENS}
                    self._model = server.chat_model(**options)
            model = self._model
            if not start and self._server is not None:
                if self._deferred is None:  # the same client, loading the model on its own
                    own = model.callbacks or []  # a list of handlers, or a manager of them
                    handlers = own if isinstance(own, list) else own.handlers
                    callbacks = [*handlers, StartOnFirstCall(self.start_local_server)]
                    self._deferred = model.model_copy(update={"callbacks": callbacks})
                model = self._deferred
        if start:
            self.start_local_server()
        return model

    def start_local_server(self) -> None:
        """Load and serve the local model once; nothing for an endpoint or explicit model.

        Raises:
            LocalModelError: It could not be loaded; later calls raise the same error
                at once instead of loading again.
        """
        with self._start_lock:
            if self._start_error is not None:
                raise self._start_error
            server = self._server
            if server is None or self._started:
                return
            try:
                server.start()
            except LocalModelError as e:
                self._start_error = e
                raise
            self._started = True

    def close(self) -> None:
        """Stop the local server if this provider started it; safe to call twice."""
        with self._lock, self._start_lock:
            server, self._server = self._server, None
            started, self._started = self._started, False
            self._start_error = None
            if server is not None:
                self._model = self._deferred = None
        if server is not None and started:
            server.stop()
