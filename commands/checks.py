"""What the command line checks before it opens a memory or loads a model.

A command validates its arguments first, so a bad one is refused in a fraction of a
second, before Chroma opens or the local model loads: an empty question or text, a
question longer than the local model's window, a file that is missing or a folder, a
data folder that is a file, cannot be created or is not writable. Each message names the
option (or the environment variable) the path came from and says what to do.
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.former_name import OLD_NAME
from ..errors import InvalidInputError

if TYPE_CHECKING:
    from ..config import MemoryConfig

PROMPT_RESERVE = 1024
"""Tokens kept for the recall prompts' instructions, output schema and chat template.

The longest recall prompt's fixed text is 291 tokens with the Qwen tokenizer (the Judge's,
``prompts/recall.py``); the rest is headroom.
"""


def require_words(what: str, value: str, example: str) -> str:
    """``value`` if it holds some text, else an error that shows an ``example`` command."""
    if not value.strip():
        raise InvalidInputError(f"the {what} is empty; give some text, e.g. {example}")
    return value


def check_namespace(args: argparse.Namespace) -> None:
    """Refuse a malformed ``--namespace`` before anything is opened."""
    namespace = getattr(args, "namespace", None)
    if namespace is None:
        return
    from ..records.model import validate_namespace

    validate_namespace(namespace)


def json_object(line: str, where: str, *, hint: str, shape: str) -> dict[str, Any]:
    """``line`` as a JSON object; an error names ``where`` and the ``shape`` expected."""
    try:
        item = json.loads(line)
    except json.JSONDecodeError as e:
        raise InvalidInputError(f"{where}: not valid JSON ({e.msg}); {hint}") from e
    if not isinstance(item, dict):
        raise InvalidInputError(f"{where}: expected {shape}, got {type(item).__name__}")
    return item


# ------------------------------------------------------------------ input files
def input_file(path: Path, what: str) -> Path:
    """``path`` if it is a readable file; otherwise say whether it is missing or a folder.

    Args:
        path: The path given.
        what: What the command reads, named in the message (e.g. ``"the file to ingest"``).
    """
    if path.is_dir():
        raise InvalidInputError(f"{path} is a folder, not a file: give {what}")
    if not path.exists():
        parent = path.absolute().parent
        hint = "" if parent.is_dir() else f" (there is no folder {parent} either)"
        raise InvalidInputError(f"{path}: no such file{hint}; give {what}")
    if not os.access(path, os.R_OK):
        raise InvalidInputError(f"{path}: permission denied, cannot read {what}")
    return path


# ---------------------------------------------------------------- output folders
def writable_folder(path: Path, label: str, what: str) -> Path:
    """``path`` as a folder this process can write to, created if missing.

    Args:
        path: The folder.
        label: Where it came from, e.g. ``"--data-dir /x"`` or ``"LAMINA_DATA_DIR=/x"``.
        what: What it holds, e.g. ``"the data folder"``.

    Raises:
        InvalidInputError: It is a file, cannot be created, or is not writable; the
            message names ``label`` and ``what``.
    """
    if path.exists() and not path.is_dir():
        raise InvalidInputError(
            f"{what} {label} is a file, not a folder; give a folder (it is created if missing)"
        )
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        reason = e.strerror or str(e)
        if e.errno == errno.ENOENT:  # name the nearest folder that exists
            here = path.absolute()
            while not here.exists() and here != here.parent:
                here = here.parent
            reason += f"; {here} does not let lamina create folders in it"
        raise InvalidInputError(f"{what} {label} cannot be created ({reason})") from e
    try:  # os.access is True for root even on a read-only file system: try a write
        fd, probe = tempfile.mkstemp(dir=path, prefix=".lamina-write-check-")
    except OSError as e:
        raise InvalidInputError(
            f"{what} {label} is not writable ({e.strerror or e}); give a folder you can write to"
        ) from e
    os.close(fd)
    os.unlink(probe)
    return path


def check_data_folder(args: argparse.Namespace, config: MemoryConfig) -> None:
    """Refuse an unusable data folder (persistent Chroma only), naming where it came from.

    With the default folder, a data folder under the old name and no ``lamina`` one
    stop the command: see :func:`lamina.config.old_data_folder`.
    """
    if config.store_kind != "persistent":
        return
    from ..config import data_dir_source, old_data_folder

    path, given = config.data_dir, getattr(args, "data_dir", None)
    source = data_dir_source() if given is None else None
    if given is not None:
        label = f"--data-dir {given}"
    elif source is None:
        old = old_data_folder()
        if old is not None and not path.exists():
            raise InvalidInputError(
                f"found a data folder under lamina's old name, {OLD_NAME}: {old}. lamina keeps "
                f"its data in {path} and does not read the old folder; nothing was moved or "
                f"created. To keep those memories, move it: mv {old} {path}. To use it where "
                f"it is, pass --data-dir {old} (or set LAMINA_DATA_DIR). To start with an "
                f"empty memory and leave it alone: mkdir -p {path}"
            )
        label = f"(default) {path}"
    elif source.startswith("LAMINA_"):
        label = f"{source}={path}"
    else:
        label = f"{path} ({source})"
    writable_folder(path, label, "the data folder")


def note_old_model_files() -> None:
    """Say (on stderr) where a model under lamina's old name is, if there is one.

    Nothing is moved: the note gives the command that moves it, which saves assembling
    or downloading the 1.1 GB model again.
    """
    from ..llm.gguf import default_model_dir, old_model_files

    found = old_model_files()
    if found:
        new = default_model_dir()
        files = " ".join(str(f) for f in found)
        print(
            f"lamina: note: found the offline model under lamina's old name, {OLD_NAME}: "
            f"{files}. lamina looks for it in {new} and does not read the old folder; "
            f"nothing was moved. Move it instead of installing it again: "
            f"mkdir -p {new} && mv {files} {new}/",
            file=sys.stderr,
        )


# ---------------------------------------------------------------- question size
@dataclass(frozen=True)
class QuestionBudget:
    """How many tokens a question may take with the local model."""

    window: int
    """The local model's context window (:data:`lamina.memory.models.LOCAL_CONTEXT`)."""
    limit: int
    """The most a question may take: the window less the recalled memories' budget, the
    longest answer cap and :data:`PROMPT_RESERVE`."""


def question_budget(config: MemoryConfig) -> QuestionBudget | None:
    """The question budget of the local model ``config`` runs, or None with an endpoint.

    An endpoint's window is the endpoint's own, which lamina cannot know, so a question
    sent there is not limited here.
    """
    if config.uses_endpoint:
        return None
    from ..agents.recall.answer import ANSWER_MAX_TOKENS
    from ..agents.recall.judge import JUDGE_MAX_TOKENS
    from ..agents.recall.refresher import REFRESH_MAX_TOKENS
    from ..agents.recall.rewriter import REWRITE_MAX_TOKENS
    from ..memory.models import LOCAL_CONTEXT

    ctx = config.memory_context("default")
    output = max(JUDGE_MAX_TOKENS, ANSWER_MAX_TOKENS, REWRITE_MAX_TOKENS, REFRESH_MAX_TOKENS)
    limit = LOCAL_CONTEXT - ctx.context_tokens - output - PROMPT_RESERVE
    return QuestionBudget(window=LOCAL_CONTEXT, limit=max(limit, 1))


def check_question(question: str, config: MemoryConfig) -> None:
    """Refuse a question the local model's window cannot hold, naming the limit.

    A question of at most ``limit`` UTF-8 bytes always fits (a token is at least one
    byte), so only a longer one is counted: with the model's own tokenizer (read from its
    GGUF file, which is not loaded as a model) when the file is in place, else estimated.
    """
    try:
        size = len(question.encode("utf-8"))
    except UnicodeEncodeError as e:  # bytes the terminal could not decode (surrogateescape)
        raise InvalidInputError(
            f"the question holds {question[e.start : e.end]!r}, bytes that are not UTF-8 "
            "text; give the question as UTF-8"
        ) from None
    budget = question_budget(config)
    if budget is None or size <= budget.limit:
        return
    from ..llm.tokens import EstimatedTokens, gguf_counter

    path = _gguf_in_place(config.local_model)
    counter = EstimatedTokens() if path is None else gguf_counter(path)
    tokens = counter(question)
    if counter.estimated:  # words x 1.3 undercounts text without spaces: floor 4 bytes a token
        tokens = max(tokens, size // 4)
    if tokens <= budget.limit:
        return
    about = "about " if counter.estimated else ""
    raise InvalidInputError(
        f"the question is {about}{tokens:,} tokens, longer than the local model can read: "
        f"its window is {budget.window:,} tokens and a "
        f"question may take at most {budget.limit:,} of them; the rest holds the recalled "
        "memories, the instructions and the answer. Shorten the question"
    )


def _gguf_in_place(local_model: str) -> Path | None:
    """The local model's GGUF file if it is already in place (nothing is assembled)."""
    from ..errors import LocalModelError
    from ..llm.gguf import installed_qwen_gguf, smollm2_gguf_path

    if local_model == "qwen":
        return installed_qwen_gguf()
    if local_model == "smollm2":
        try:
            return smollm2_gguf_path()
        except LocalModelError:
            return None
    path = Path(local_model).expanduser()
    return path if path.is_file() else None
