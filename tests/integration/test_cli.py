"""The main job a new user runs: the demo over the bundled sample (search-only mode here;
the answering mode is tested with a scripted model in tests/commands/test_demo.py)."""

import pytest

from lamina.cli import main
from lamina.samples import load_sample, sample_turns

pytestmark = pytest.mark.integration


def test_demo_ingests_the_sample_and_finds_answers(capsys: pytest.CaptureFixture[str]) -> None:
    question = "What is the name of Maya's dog?"
    assert main(["demo", "--full", "--search-only", "-k", "1", "--question", question]) == 0
    out = capsys.readouterr().out
    assert "stored 20 raw turns" in out
    top = out.strip().splitlines()[-1]
    assert "Biscuit" in top and "Maya:" in top


def test_demo_keeps_a_persistent_store_when_asked(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    db = str(tmp_path / "db")
    args = ["demo", "--full", "--search-only", "--data-dir", db, "--question", "Lisbon"]
    assert main(args) == 0
    assert main(args) == 0  # re-ingesting the same turns is idempotent
    out = capsys.readouterr().out
    assert out.count("stored 20 raw turns") == 2
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
    assert "lamina: error:" in capsys.readouterr().err


def test_ingest_search_forget_with_the_default_memory(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    """The real wiring: MemoryConfig from options, persistent Chroma, offline MiniLM."""
    import json

    turns = [
        {
            "speaker": "Maya",
            "text": text,
            "occurred_at": f"2024-05-0{n + 1}T10:00:00+02:00",
            "session_id": "s1",
        }
        for n, text in enumerate(
            ["My dog Biscuit loves the beach.", "I start a new job at the bakery on Monday."]
        )
    ]
    path = tmp_path / "turns.jsonl"
    path.write_text("\n".join(json.dumps(t) for t in turns))
    common = ["-n", "user:maya", "--data-dir", str(tmp_path / "data")]
    assert main(["ingest", str(path), "--raw-only", *common]) == 0
    assert "user:maya: 2 turns stored" in capsys.readouterr().out
    assert main(["search", "where does the dog like to go", "--json", "-k", "1", *common]) == 0
    [hit] = json.loads(capsys.readouterr().out)
    assert "Biscuit" in hit["text"]
    assert main(["forget", "--subject", "biscuit", *common]) == 0
    assert "forgot 1 record(s)" in capsys.readouterr().out
    assert main(["search", "dog beach Biscuit", "--json", *common]) == 0
    hits = json.loads(capsys.readouterr().out)
    assert hits and not any("Biscuit" in h["text"] for h in hits)
