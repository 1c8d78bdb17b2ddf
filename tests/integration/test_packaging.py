"""The built wheel holds exactly the package `lamina`, its data files and py.typed."""

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import lamina

pytestmark = pytest.mark.integration
ROOT = Path(lamina.__file__).parent


def test_public_api_is_importable() -> None:
    for name in lamina.__all__:
        assert getattr(lamina, name) is not None, name


def test_wheel_contains_only_the_lamina_package(tmp_path: Path) -> None:
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
    (wheel,) = tmp_path.glob("lamina-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    package_files = [n for n in names if ".dist-info/" not in n]
    assert package_files and all(n.startswith("lamina/") for n in package_files)
    for required in [
        "lamina/py.typed",
        "lamina/__init__.py",
        "lamina/__init__.pyi",
        "lamina/stores/__init__.pyi",
        "lamina/embedders/resources/vocab.txt",
        "lamina/embedders/resources/NOTICE",
        "lamina/samples/sample_conversation.json",
        "lamina/agents/__init__.py",
        "lamina/graphs/__init__.py",
        "lamina/prompts/__init__.py",
    ]:
        assert required in names, required
    assert not [n for n in names if n.startswith("lamina/tests/") or "/.venv/" in n]
    lab = ("lamina/evaluation/", "lamina/datasets/", "lamina/benchmarks/", "lamina/bench/")
    assert not [n for n in names if n.startswith(lab)]  # the lab is lamina-bench, in bench/
