"""An in-process llama.cpp server (``xllamacpp``) for one GGUF model.

:class:`LocalLLMServer` loads the model and serves llama.cpp's OpenAI-compatible HTTP
API on a loopback port, from threads inside this process; :meth:`LocalLLMServer.chat_model`
returns a ``ChatOpenAI`` bound to it. Nothing is downloaded and no API key is needed.

Typical use::

    with LocalLLMServer(assemble_qwen_gguf()) as server:
        reply = server.chat_model().invoke("Hello")
"""

from __future__ import annotations

import os
import socket
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import SecretStr

from ..errors import InvalidInputError, InvalidTypeError, LocalModelError
from .gguf import check_gguf

if TYPE_CHECKING:
    from .chat import LocalChatOpenAI

DEFAULT_HOST = "127.0.0.1"
DEFAULT_CONTEXT = 8192
DEFAULT_MAX_TOKENS = 2048
PROMPT_CACHE_MIB = 1024
"""RAM for llama.cpp's prompt cache."""
_PROBE_PATH = "/slots"  # answered by the server's main loop, so it proves the loop runs


class ServerHandle(Protocol):
    """What :class:`LocalLLMServer` needs from a running server (``xllamacpp.Server``).

    Dropping the last reference stops the server: ``xllamacpp.Server`` has no ``stop``
    method, its destructor closes the socket and joins the server's threads.
    """

    @property
    def listening_address(self) -> str:
        """The server's root URL, such as ``http://127.0.0.1:8080``."""
        ...


ServerFactory = Callable[[Any], ServerHandle]
"""Builds a running server from ``xllamacpp.CommonParams``; blocks until the model loaded."""


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity where the OS tells it)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


def default_threads() -> int:
    """Half the CPUs this process may use, at least one.

    llama.cpp's worker threads spin at their barriers; with as many threads as cores on a
    busy machine, generation on 2 cores fell from ~22 to ~2 tokens/s. Half is safe.
    """
    return max(1, usable_cpus() // 2)


def int_arg(name: str, value: object, minimum: int) -> int:
    """``value`` if it is an int (not a bool) of at least ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidTypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < minimum:
        raise InvalidInputError(f"{name} must be >= {minimum}, got {value}")
    return value


def seconds_arg(name: str, value: object) -> float:
    """``value`` as float seconds if it is a positive number (not a bool)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidTypeError(f"{name} must be a number of seconds, got {type(value).__name__}")
    if not value > 0:
        raise InvalidInputError(f"{name} must be > 0 seconds, got {value}")
    return float(value)


def _xllamacpp_server(params: Any) -> ServerHandle:
    import xllamacpp

    return xllamacpp.Server(params)  # type: ignore[no-any-return]


class LocalLLMServer:
    """Serve one GGUF model with llama.cpp, in-process, over OpenAI-compatible HTTP.

    Args:
        model_path: The ``.gguf`` file.
        host: The address to bind; keep the loopback default, the server has no API key.
        port: The port; ``None`` picks a free one now, so :attr:`base_url` is known
            before :meth:`start`.
        n_ctx: Context size in tokens, shared by the ``parallel`` slots.
        threads: Threads for generation; ``None`` is :func:`default_threads`.
        threads_batch: Threads for prompt processing; ``None`` is ``threads``.
        parallel: Requests served at once; each gets ``n_ctx // parallel`` tokens.
        max_tokens: Tokens generated for a request that sets no ``max_tokens`` (a request's
            own value wins); -1 generates until the slot's context is full.
        startup_timeout: Seconds from the start of loading until the server must answer;
            loading itself (inside ``xllamacpp.Server``) cannot be interrupted.
        request_timeout: Default HTTP timeout of :meth:`chat_model` clients, in seconds.
        warmup: Run one empty decode at start, so the first request is not slower.
        verbosity: llama.cpp log level (0 silent, 1 errors, 3 info), written to stderr.
        server_factory: Builds the running server; tests pass a fake.

    Raises:
        LocalModelError: ``model_path`` is not a GGUF file.
        InvalidInputError: A number is out of range or the host is malformed.
        InvalidTypeError: A number is not an ``int``.
    """

    def __init__(
        self,
        model_path: Path | str,
        *,
        host: str = DEFAULT_HOST,
        port: int | None = None,
        n_ctx: int = DEFAULT_CONTEXT,
        threads: int | None = None,
        threads_batch: int | None = None,
        parallel: int = 1,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        startup_timeout: float = 120.0,
        request_timeout: float = 600.0,
        warmup: bool = True,
        verbosity: int = 1,
        server_factory: ServerFactory | None = None,
    ) -> None:
        self.model_path = check_gguf(Path(model_path))
        if not isinstance(host, str) or not host or any(c in host for c in "/: \t"):
            raise InvalidInputError(
                f"host must be a hostname or IPv4 address such as '127.0.0.1', got {host!r}"
            )
        self.host = host
        self.parallel = int_arg("parallel", parallel, 1)
        self.n_ctx = int_arg("n_ctx", n_ctx, 128)
        if self.n_ctx // self.parallel < 128:
            raise InvalidInputError(
                f"n_ctx={self.n_ctx} is shared by parallel={self.parallel} slots, leaving "
                f"{self.n_ctx // self.parallel} tokens each; raise n_ctx or lower parallel"
            )
        self.threads = default_threads() if threads is None else int_arg("threads", threads, 1)
        self.threads_batch = (
            self.threads if threads_batch is None else int_arg("threads_batch", threads_batch, 1)
        )
        self.max_tokens = int_arg("max_tokens", max_tokens, -1)
        if self.max_tokens == 0:
            raise InvalidInputError("max_tokens must be -1 (no bound) or >= 1, got 0")
        self.verbosity = int_arg("verbosity", verbosity, 0)
        self.startup_timeout = seconds_arg("startup_timeout", startup_timeout)
        self.request_timeout = seconds_arg("request_timeout", request_timeout)
        self.port = _free_port(host) if port is None else int_arg("port", port, 1)
        if self.port > 65535:
            raise InvalidInputError(f"port must be in [1, 65535] or None, got {self.port}")
        self.model_alias = self.model_path.stem
        """The model name the server reports: the file's stem."""
        self.warmup = bool(warmup)
        self.startup_seconds: float | None = None
        """How long the last :meth:`start` took, loading included."""
        self._factory = server_factory or _xllamacpp_server
        self._server: ServerHandle | None = None
        self._lock = threading.Lock()

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible API root, such as ``http://127.0.0.1:8080/v1``."""
        return f"{self._root_url}/v1"

    @property
    def running(self) -> bool:
        """Whether the server is started and not stopped."""
        return self._server is not None

    @property
    def _root_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def params(self) -> Any:
        """Return the ``xllamacpp.CommonParams`` that :meth:`start` serves with."""
        import xllamacpp

        params = xllamacpp.CommonParams()
        params.model.path = str(self.model_path)
        params.model_alias = {self.model_alias}
        params.hostnames = [self.host]
        params.port = self.port
        params.n_ctx = self.n_ctx
        params.n_parallel = self.parallel
        params.n_predict = self.max_tokens
        params.cpuparams.n_threads = self.threads
        params.cpuparams_batch.n_threads = self.threads_batch
        params.warmup = self.warmup
        params.cache_ram_mib = PROMPT_CACHE_MIB
        params.verbosity = self.verbosity
        params.ui = False
        params.endpoint_slots = True  # the readiness probe
        return params

    def start(self) -> LocalLLMServer:
        """Load the model and serve it; return at once if already running.

        Returns only when the server answers over HTTP: stopping a server whose main loop
        has not started yet would hang in xllamacpp's destructor.

        Raises:
            LocalModelError: The model did not load, the port was taken, or the server
                did not answer within ``startup_timeout``.
        """
        with self._lock:
            if self._server is not None:
                return self
            started = time.monotonic()
            try:
                server = self._factory(self.params())
            except RuntimeError as e:
                raise LocalModelError(
                    f"llama.cpp could not serve {self.model_path} on {self._root_url} ({e}); "
                    "check that the file is a complete GGUF model, that the port is free, "
                    "and that n_ctx fits in memory (verbosity=3 logs the details)"
                ) from e
            self._wait_ready(started + self.startup_timeout)
            self._server = server
            self.startup_seconds = time.monotonic() - started
        return self

    def stop(self) -> None:
        """Stop serving and free the port; does nothing if not running."""
        with self._lock:
            server, self._server = self._server, None
        del server  # xllamacpp's destructor stops the HTTP server and joins its threads

    def __enter__(self) -> LocalLLMServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"LocalLLMServer({self.model_path.name!r}, {self.base_url}, {state})"

    def chat_model(self, **kwargs: Any) -> LocalChatOpenAI:
        """Return a ``ChatOpenAI`` bound to this server that counts with its tokenizer.

        The server need not be running yet; requests fail until :meth:`start`.

        Args:
            **kwargs: ``ChatOpenAI`` options; they override the defaults (temperature 0,
                ``request_timeout``, one retry, this server's model name and URL).
        """
        from .chat import LocalChatOpenAI  # langchain-openai is heavy; only clients need it

        options: dict[str, Any] = {
            "gguf_path": self.model_path,
            "model": self.model_alias,
            "base_url": self.base_url,
            "api_key": SecretStr("not-needed"),
            "temperature": 0.0,
            "timeout": self.request_timeout,
            "max_retries": 1,
        }
        options.update(kwargs)
        return LocalChatOpenAI(**options)

    def _wait_ready(self, deadline: float) -> None:
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        url = self._root_url + _PROBE_PATH
        while True:
            remaining = deadline - time.monotonic()
            try:
                with opener.open(url, timeout=max(0.5, min(5.0, remaining))) as response:
                    if response.status == 200:
                        return
            except OSError:  # refused, timed out, or an HTTP error status
                pass
            if time.monotonic() >= deadline:
                raise LocalModelError(
                    f"the llama.cpp server for {self.model_path.name} did not answer at {url} "
                    f"within startup_timeout={self.startup_timeout:g}s; raise startup_timeout "
                    "on a slow or busy machine"
                )
            time.sleep(0.05)


def _free_port(host: str) -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])
