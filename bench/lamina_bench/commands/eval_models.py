"""The models of ``lamina-bench eval``: the answer and judge models its options describe.

A local model is built as a client only: :class:`DeferredServer` holds its llama.cpp
server unstarted, and the harness starts it (through :meth:`EvalModels.ready`) before the
first step that asks the model anything. Like :mod:`lamina_bench.commands.eval`, this module
imports the harness, the stores and the config only inside its functions, so building
the CLI parser stays cheap.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from contextlib import ExitStack
from typing import TYPE_CHECKING, Any

from lamina.errors import InvalidInputError

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from lamina import MemoryConfig
    from lamina.memory.models import LocalServer, LocalServerFactory

    from ..evaluation.harness import EvalModels
    from ..evaluation.transcripts import TokenCounter


def given_options(args: argparse.Namespace, names: Sequence[tuple[str, str]]) -> dict[str, Any]:
    """``{config field: value}`` for each ``(option, config field)`` the user gave."""
    given = ((name, getattr(args, option, None)) for option, name in names)
    return {name: value for name, value in given if value is not None}


DEFAULT_WINDOW = 32768
"""Qwen2.5's context window; a local model served here uses its n_ctx instead."""


def _config(args: argparse.Namespace, *, judge: bool = False) -> MemoryConfig:
    from lamina import MemoryConfig

    overrides = given_options(
        args,
        (
            ("base_url", "openai_base_url"),
            ("api_key", "openai_api_key"),
            ("model", "model"),
            ("local_model", "local_model"),
        ),  # --structured-method reaches the graphs through the eval settings, not the config
    )
    if judge:
        overrides |= given_options(
            args,
            (
                ("judge_base_url", "openai_base_url"),
                ("judge_api_key", "openai_api_key"),
                ("judge_model", "model"),
            ),
        )
    return MemoryConfig.from_env(**overrides)


def local_ctx(args: argparse.Namespace) -> int:
    """The local model's context window: ``--local-ctx``, else lamina's own."""
    from lamina.memory.models import LOCAL_CONTEXT

    return int(getattr(args, "local_ctx", None) or LOCAL_CONTEXT)


def _name(config: MemoryConfig, source: str, n_ctx: int) -> str:
    if source == "local":
        return f"local {config.local_model} (llama.cpp, n_ctx {n_ctx})"
    where = config.openai_base_url or "api.openai.com"
    return f"{config.model or 'default model'} at {where}"


class DeferredServer:
    """A local model server whose ``start`` loads nothing; :meth:`serve` starts it.

    The eval hands this to :class:`~lamina.memory.models.ChatModelProvider` as its
    local server: the provider's ``get`` then builds the chat model (a client bound to
    the server's port, which counts tokens with the GGUF file's tokenizer) without
    loading the model, and the harness calls :meth:`serve` (through
    :meth:`EvalModels.ready`) before the first step that asks the model anything. A run
    with nothing left to do never loads it.
    """

    def __init__(self, server: LocalServer) -> None:
        self.server = server

    def start(self) -> DeferredServer:
        """What the provider calls on ``get``: nothing is loaded yet."""
        return self

    def serve(self) -> None:
        """Load the model and serve it; returns at once if it is served already."""
        self.server.start()

    def stop(self) -> None:
        """Stop the server if it was started."""
        self.server.stop()

    def chat_model(self, **kwargs: Any) -> BaseChatModel:
        """A chat model bound to the server (requests fail until :meth:`serve`)."""
        return self.server.chat_model(**kwargs)


def build_models(
    args: argparse.Namespace,
    stack: ExitStack,
    *,
    local_server_factory: LocalServerFactory | None = None,
) -> tuple[EvalModels, int]:
    """The answer and judge models the options describe, and the full-context window.

    A local model is not loaded here: the models' :meth:`~EvalModels.ready` starts it,
    and the harness calls that only when a step needs the model.

    Args:
        args: The parsed options.
        stack: Closes the models (stops a local server) when the run ends.
        local_server_factory: Builds the local server, not started (default: llama.cpp
            for the configured GGUF model); tests pass a fake.
    """
    from lamina.embedders import MiniLMEmbeddings
    from lamina.memory.models import ChatModelProvider, default_local_server

    from ..evaluation.harness import EvalModels

    n_ctx = local_ctx(args)
    threads = getattr(args, "threads", None)

    def llama(c: MemoryConfig) -> LocalServer:
        return default_local_server(c, n_ctx=n_ctx, threads=threads)

    factory = local_server_factory or llama
    config = _config(args)
    provider = ChatModelProvider(config, local_server_factory=lambda c: DeferredServer(factory(c)))
    stack.callback(provider.close)
    window = args.context_window or (n_ctx if provider.source == "local" else DEFAULT_WINDOW)
    chat_model = provider.get()  # a local model: its client only, nothing loaded yet
    server = provider.server
    models = EvalModels(
        chat_model=chat_model,
        embeddings=MiniLMEmbeddings(),
        model_name=_name(config, provider.source, n_ctx),
        counter=serving_counter(chat_model),
        start=server.serve if isinstance(server, DeferredServer) else None,
    )
    if args.judge_base_url or args.judge_model:
        judge_config = _config(args, judge=True)
        if not judge_config.uses_endpoint:
            raise InvalidInputError("--judge-model needs an endpoint: give --judge-base-url too")
        judge = ChatModelProvider(judge_config)
        stack.callback(judge.close)
        models.judge_model = judge.get()
        models.judge_name = _name(judge_config, judge.source, n_ctx)
    return models, window


def serving_counter(chat_model: object) -> TokenCounter:
    """The answer model's own tokenizer (a local GGUF), else the labelled estimate."""
    from lamina.llm.tokens import token_counter_for

    from ..evaluation.transcripts import WordPieceCounter

    counter = token_counter_for(chat_model)
    return WordPieceCounter() if counter.estimated else counter  # type: ignore[return-value]


__all__ = ["DEFAULT_WINDOW", "DeferredServer", "build_models", "serving_counter"]
