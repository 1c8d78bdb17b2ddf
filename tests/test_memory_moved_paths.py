"""The facade moved into the ``lamina.memory`` package; the old module paths still work.

Each old path hands out the very object the new module holds and warns, naming the new
module, with the warning attributed to the caller's line.
"""

from __future__ import annotations

import importlib
import warnings

import pytest

import lamina
from lamina.memory import Memory, checkpointing, hits, inputs, models

MOVED = [
    ("lamina.memory_inputs", "to_turns", inputs),
    ("lamina.memory_inputs", "require_namespace", inputs),
    ("lamina.memory_results", "merge_hits", hits),
    ("lamina.memory_results", "ALL_GRANULARITIES", hits),
    ("lamina.memory_models", "ChatModelProvider", models),
    ("lamina.memory_models", "default_local_server", models),
    ("lamina.memory_models", "configured_checkpointer", checkpointing),
    ("lamina.memory_models", "add_thread", checkpointing),
]


@pytest.mark.parametrize(("old", "name", "home"), MOVED, ids=lambda v: getattr(v, "__name__", v))
def test_an_old_path_gives_the_same_object_and_warns(old: str, name: str, home: object) -> None:
    module = importlib.import_module(old)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = getattr(module, name)
    assert value is getattr(home, name)
    assert [w.category for w in caught] == [DeprecationWarning]
    message = str(caught[0].message)
    assert f"{old}.{name} moved to {home.__name__}.{name}" in message  # type: ignore[attr-defined]
    assert "removed in 0.2" in message
    assert caught[0].filename == __file__


def test_from_import_of_an_old_path_warns() -> None:
    with pytest.warns(DeprecationWarning, match=r"lamina\.memory\.inputs"):
        from lamina.memory_inputs import to_turns
    assert to_turns is inputs.to_turns


def test_an_unknown_or_private_name_is_an_attribute_error_without_a_warning() -> None:
    module = importlib.import_module("lamina.memory_models")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(AttributeError, match="has no attribute 'no_such_thing'"):
            module.no_such_thing  # noqa: B018
        with pytest.raises(AttributeError):
            module.__wrapped__  # noqa: B018


def test_the_public_names_keep_working() -> None:
    assert lamina.Memory is Memory
    for name in lamina.__all__:
        assert getattr(lamina, name) is not None, name
    from lamina.memory import open_store

    assert callable(open_store)


def test_every_split_module_of_the_table_is_tested() -> None:
    from lamina.core import moved

    assert {old for old, _, _ in MOVED} == set(moved.SPLIT_MODULES)
