"""Which version of lamina's code answered: a hash of the source that answering runs.

A long evaluation spans sessions and machines, and the code may change between them. Each
journal answer records this hash, so a report can show when one system's answers came
from more than one version (``--redo SYSTEM`` starts a system over after a change).
The hash covers the package's own modules at the root and the folders the read and write
paths use; the CLI, the integrations, the harness itself, tests and benchmarks are left
out, because changing them does not change an answer.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

ANSWERING_FOLDERS = ("agents", "core", "graphs", "llm", "memory", "prompts", "stores")
"""Package folders whose code can change an answer (searched recursively)."""

_PACKAGE = Path(__file__).resolve().parent.parent


def code_version(package: Path = _PACKAGE) -> str:
    """A 12-hex-digit sha256 of the answering code's ``.py`` files under ``package``.

    Files are hashed in sorted order of their relative path, each with its path, so a
    rename changes the hash too. Missing folders are skipped (older layouts hash fine).
    """
    files = sorted(p for p in package.glob("*.py") if p.is_file())
    for folder in ANSWERING_FOLDERS:
        root = package / folder
        if root.is_dir():
            files += sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)
    digest = hashlib.sha256()
    for path in sorted(files, key=lambda p: p.relative_to(package).as_posix()):
        digest.update(path.relative_to(package).as_posix().encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()[:12]
