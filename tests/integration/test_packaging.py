"""The built wheel holds exactly the package `memstrata`, its data files and py.typed."""

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import memstrata

pytestmark = pytest.mark.integration
ROOT = Path(memstrata.__file__).parent


def test_public_api_is_importable() -> None:
    for name in memstrata.__all__:
        assert getattr(memstrata, name) is not None, name


def test_wheel_contains_only_the_memstrata_package(tmp_path: Path) -> None:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--quiet",
            "-w",
            str(tmp_path),
            str(ROOT),
        ],
        check=True,
    )
    (wheel,) = tmp_path.glob("memstrata-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    package_files = [n for n in names if ".dist-info/" not in n]
    assert package_files and all(n.startswith("memstrata/") for n in package_files)
    for required in [
        "memstrata/py.typed",
        "memstrata/__init__.py",
        "memstrata/stores/resources/vocab.txt",
        "memstrata/stores/resources/NOTICE",
        "memstrata/samples/sample_conversation.json",
        "memstrata/agents/__init__.py",
        "memstrata/graphs/__init__.py",
        "memstrata/prompts/__init__.py",
    ]:
        assert required in names, required
    assert not [n for n in names if n.startswith("memstrata/tests/") or "/.venv/" in n]
