"""Old import paths of the moves (issues 18 and 34) keep working for one release, and warn.

Each old module (built by the finder of :mod:`lamina.core.moved`, there is no file)
re-exports its new module's ``__all__`` (the same objects) and emits a DeprecationWarning
naming the new path, attributed to the importing module, so pytest's
``error::DeprecationWarning:lamina.*`` filter fails any lamina module that still
imports one (tests/test_layers.py checks the same statically, lazy imports included).
"""

from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path

import pytest

from lamina.core.moved import MOVED_MODULES as MOVED


@pytest.mark.parametrize(("old", "new"), sorted(MOVED.items()))
def test_an_old_path_warns_and_gives_the_same_objects(
    old: str, new: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delitem(sys.modules, old, raising=False)  # import it afresh
    with pytest.warns(DeprecationWarning, match=rf"^{re.escape(old)} moved to {re.escape(new)};"):
        module = importlib.import_module(old)
    target = importlib.import_module(new)
    assert target.__all__ and list(module.__all__) == list(target.__all__)
    for name in target.__all__:
        assert getattr(module, name) is getattr(target, name), name


def test_the_warning_points_at_the_module_that_imports_the_old_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    importer = tmp_path / "uses_old_state_path.py"
    importer.write_text("from lamina.graphs.state import TurnInput\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "lamina.graphs.state", raising=False)
    monkeypatch.delitem(sys.modules, "uses_old_state_path", raising=False)
    with pytest.warns(DeprecationWarning) as caught:
        importlib.import_module("uses_old_state_path")
    (warning,) = [w for w in caught if "lamina.graphs.state" in str(w.message)]
    assert Path(warning.filename) == importer and warning.lineno == 1


def test_import_of_an_old_path_binds_it_on_its_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "lamina.faults", raising=False)
    with pytest.warns(DeprecationWarning, match=r"^lamina\.faults moved"):
        import lamina.faults
    assert (
        lamina.faults.FaultSchedule is importlib.import_module(MOVED["lamina.faults"]).FaultSchedule
    )
    with pytest.raises(AttributeError, match="'lamina.faults' has no attribute 'nothing'"):
        lamina.faults.nothing  # noqa: B018
