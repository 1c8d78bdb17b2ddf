"""The main job a new user runs: ingest the bundled sample and search it."""

import pytest

from memstrata.cli import main
from memstrata.samples import load_sample, sample_turns

pytestmark = pytest.mark.integration


def test_demo_ingests_the_sample_and_finds_answers(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "-k", "1", "--query", "What is the name of Maya's dog?"]) == 0
    out = capsys.readouterr().out
    assert "Ingested 20 turns" in out
    top = out.strip().splitlines()[-1]
    assert "Biscuit" in top and "Maya:" in top


def test_demo_keeps_a_persistent_store_when_asked(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    args = ["demo", "--data-dir", str(tmp_path / "db"), "--query", "Lisbon"]
    assert main(args) == 0
    assert main(args) == 0  # re-ingesting the same turns is idempotent
    out = capsys.readouterr().out
    assert out.count("Ingested 20 turns") == 2
    assert (tmp_path / "db").is_dir()


def test_sample_turns_are_well_formed() -> None:
    data = load_sample()
    turns = sample_turns("demo:x", data)
    assert len(turns) == sum(len(s["turns"]) for s in data["sessions"])
    assert turns[1].context is not None and turns[1].context.startswith("Maya:")
    assert len({t.id for t in turns}) == len(turns)


def test_bad_arguments_exit_with_usage(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as excinfo:
        main(["demo", "-k", "many"])
    assert excinfo.value.code == 2
    assert "invalid int value" in capsys.readouterr().err


def test_serve_llm_rejects_a_missing_model_file(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["serve-llm", "--model", str(tmp_path / "missing.gguf")]) == 2
    assert "memstrata: error:" in capsys.readouterr().err
