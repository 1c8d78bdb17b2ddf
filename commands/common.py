"""What the memory commands share: common options and building the :class:`Memory`.

The command line is an edge: it reads the environment (through
:meth:`MemoryConfig.from_env`, the only place that does) and lets explicit options win.
Tests replace the factory that turns the resolved config into a ``Memory``.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .choices import TRIGGER_POLICIES

if TYPE_CHECKING:
    from ..config import MemoryConfig
    from ..memory import Memory

# The parsers import this module: the facade, its stores and the config's pydantic models
# are imported by the functions that use them, once a command runs.
MemoryFactory = Callable[["MemoryConfig"], "Memory"]
"""Turns the resolved configuration into the ``Memory`` a command uses."""

DEFAULT_NAMESPACE = "default"


def default_memory_factory(config: MemoryConfig) -> Memory:
    """The ``Memory`` of a real run: everything from ``config``."""
    from ..memory import Memory

    return Memory(config=config)


def add_memory_options(parser: argparse.ArgumentParser, *, namespace_help: str = "") -> None:
    """Add the options every memory command accepts."""
    group = parser.add_argument_group("memory options (default: LAMINA_* variables)")
    group.add_argument(
        "--data-dir",
        type=Path,
        help="folder of the persistent memory (default $XDG_DATA_HOME/lamina, else "
        "~/.local/share/lamina)",
    )
    group.add_argument(
        "--namespace",
        "-n",
        help=namespace_help or f"whose memory: a user/agent scope (default {DEFAULT_NAMESPACE!r})",
    )
    group.add_argument("--base-url", help="an OpenAI-compatible endpoint for the chat model")
    group.add_argument("--api-key", help="API key of the endpoint")
    group.add_argument("--model", help="chat model name at the endpoint")
    group.add_argument(
        "--local-model",
        help="offline model when no endpoint is set: qwen (default), smollm2, or a .gguf path",
    )
    group.add_argument("--trigger-policy", choices=TRIGGER_POLICIES, help="when consolidation runs")


OPTION_FIELDS = {
    "data_dir": "data_dir",
    "base_url": "openai_base_url",
    "api_key": "openai_api_key",
    "model": "model",
    "local_model": "local_model",
}
"""The memory options that set a :class:`~lamina.config.MemoryConfig` field of their own."""


def config_from_args(args: argparse.Namespace) -> MemoryConfig:
    """The environment's configuration with the explicit options on top."""
    from ..config import MemoryConfig

    given = {field: getattr(args, option, None) for option, field in OPTION_FIELDS.items()}
    overrides: dict[str, Any] = {k: v for k, v in given.items() if v is not None}
    if getattr(args, "trigger_policy", None):
        overrides["context"] = {"trigger_policy": args.trigger_policy}
    return MemoryConfig.from_env(**overrides)


def checked_config(args: argparse.Namespace) -> MemoryConfig:
    """The command's configuration, once the namespace and the data folder passed their checks.

    Nothing is opened and no model loads: a bad ``--namespace`` or an unusable data folder
    (see :func:`lamina.commands.checks.check_data_folder`) is refused here.
    """
    from .checks import check_data_folder, check_namespace

    check_namespace(args)
    config = config_from_args(args)
    check_data_folder(args, config)
    return config


def open_memory(
    args: argparse.Namespace, config: MemoryConfig | None = None, *, local_model: bool = False
) -> Memory:
    """Build the command's ``Memory`` with the factory ``main`` was given.

    Args:
        args: The parsed options.
        config: From :func:`checked_config` (checked here when not given).
        local_model: The command may call the chat model: a model file under lamina's
            old name is pointed out (:func:`lamina.commands.checks.note_old_model_files`).
    """
    from .checks import note_old_model_files

    config = config if config is not None else checked_config(args)
    if local_model and not config.uses_endpoint:
        note_old_model_files()
    factory: MemoryFactory = getattr(args, "memory_factory", None) or default_memory_factory
    return factory(config)


def namespace_of(args: argparse.Namespace) -> str:
    """The ``--namespace`` option, or the default namespace."""
    return str(args.namespace or DEFAULT_NAMESPACE)


def print_json(value: Any) -> None:
    """Print pydantic models, lists and dicts of them as indented JSON."""
    from pydantic_core import to_jsonable_python

    print(json.dumps(to_jsonable_python(value), indent=2, ensure_ascii=False))


def one_line(text: str, width: int = 100) -> str:
    """``text`` on one line, cut to ``width`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def warn(message: str) -> None:
    """Print a note to stderr."""
    print(f"lamina: {message}", file=sys.stderr)


def report_failures(failures: Sequence[Any]) -> None:
    """Tell the user (on stderr) that some LLM steps failed and the result is degraded."""
    if failures:
        steps = ", ".join(sorted({f"{f.node}/{f.step}" for f in failures}))
        warn(f"note: {len(failures)} LLM step(s) failed ({steps}); the result may be partial")


def run_command(prog: str, args: argparse.Namespace) -> int:
    """Run the parsed command ``args.func``; return its exit status.

    lamina's log shows only errors unless ``args.verbose`` (the commands print their own
    notes, which the log would repeat). An error raised on purpose prints one line to
    stderr, prefixed with ``prog``: a chat model that cannot be reached exits with 1,
    any other lamina error or a file system error with 2, an interrupt with 130.
    """
    from ..errors import LaminaError, ModelUnreachableError

    logger = logging.getLogger("lamina")
    level = logger.level
    logger.setLevel(logging.WARNING if args.verbose else logging.ERROR)
    try:
        return int(args.func(args))
    except LaminaError as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return 1 if isinstance(e, ModelUnreachableError) else 2
    except OSError as e:  # e.g. a data dir that cannot be created
        where = f" ({e.filename})" if e.filename else ""
        print(f"{prog}: error: {e.strerror or e}{where}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
    finally:
        logger.setLevel(level)
