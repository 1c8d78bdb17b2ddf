"""``lamina add``: one turn, or JSON lines on stdin, stored through ``Memory.add``.

The Memory's models are injected through ``main(memory_factory=...)``; the store is a
persistent Chroma in a temporary data folder, read back with ``lamina search`` and
``lamina inspect``.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from lamina import Memory, MemoryConfig
from lamina.cli import main
from lamina.testing import FakeEmbeddings, SchemaChatModel

Run = Callable[..., tuple[int, str, str]]
NS = "user:alice"


@pytest.fixture
def model() -> SchemaChatModel:
    return SchemaChatModel()


@pytest.fixture
def built() -> list[MemoryConfig]:
    return []


@pytest.fixture
def run(
    tmp_path: Path,
    model: SchemaChatModel,
    built: list[MemoryConfig],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> Run:
    def factory(config: MemoryConfig) -> Memory:
        built.append(config)
        return Memory(config=config, embeddings=FakeEmbeddings(), chat_model=model)

    def invoke(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
        if stdin is not None:
            monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
        argv = [*args, "--data-dir", str(tmp_path / "data")]
        status = main(argv, memory_factory=factory)
        out, err = capsys.readouterr()
        return status, out, err

    return invoke


def raw_records(run: Run) -> list[dict[str, object]]:
    status, out, _ = run("inspect", "-n", NS, "-g", "raw", "-l", "50", "--json")
    assert status == 0
    records: list[dict[str, object]] = json.loads(out)["granularities"]["raw"]["latest"]
    return records


def test_add_stores_one_turn_with_its_speaker_time_and_session(
    run: Run, model: SchemaChatModel
) -> None:
    status, out, err = run(
        "add",
        "I adopted a greyhound called Biscuit",
        "--speaker",
        "Alice",
        "--at",
        "2024-05-08T18:20:00+02:00",
        "--session",
        "s1",
        "-n",
        NS,
        "--no-infer",
    )
    assert status == 0, err
    assert out.startswith(f"stored 1 new turn(s) in namespace {NS!r}: ")
    assert "verbatim (--no-infer)" in out and model.calls == []
    [record] = raw_records(run)
    assert record["speaker"] == "Alice" and record["session_id"] == "s1"
    assert record["text"] == "I adopted a greyhound called Biscuit"
    assert str(record["occurred_at"]).startswith("2024-05-08T16:20:00")
    status, out, _ = run("search", "greyhound", "-n", NS, "--json")
    assert json.loads(out)[0]["id"] == record["id"]

    status, out, _ = run(
        "add", "I adopted a greyhound called Biscuit", "--speaker", "Alice",
        "--at", "2024-05-08T18:20:00+02:00", "--session", "s1", "-n", NS, "--no-infer",
    )  # fmt: skip
    assert status == 0 and "stored 0 new turn(s)" in out and "1 already stored, skipped" in out
    assert len(raw_records(run)) == 1


def test_add_without_no_infer_runs_the_ingest_graph(run: Run, model: SchemaChatModel) -> None:
    status, out, err = run(
        "add", "I moved to Lisbon last week", "--speaker", "Alice", "-n", NS,
        "--trigger-policy", "session", "--close-session", "--json",
    )  # fmt: skip
    assert status == 0, err
    result = json.loads(out)
    assert len(result["new_raw_ids"]) == 1 and result["namespace"] == NS
    assert model.calls, "a closed session is consolidated by the model"


def test_add_reads_json_lines_from_stdin(run: Run) -> None:
    lines = [
        {"speaker": "Bob", "text": "Congratulations on the dog!", "at": "2024-05-08T18:21:00Z"},
        {"text": "Thanks, he is lovely", "at": "2024-05-08T18:22:00Z"},
        {"role": "assistant", "content": "Noted.", "session_id": "s2"},
    ]
    stdin = "\n".join(json.dumps(line) for line in lines) + "\n\n"
    status, out, err = run(
        "add", "-", "--speaker", "Alice", "--session", "s1", "-n", NS, "--no-infer", "--json",
        stdin=stdin,
    )  # fmt: skip
    assert status == 0, err
    assert len(json.loads(out)["new_raw_ids"]) == 3
    by_text = {r["text"]: r for r in raw_records(run)}
    assert by_text["Congratulations on the dog!"]["speaker"] == "Bob"
    assert by_text["Thanks, he is lovely"]["speaker"] == "Alice"  # from --speaker
    assert by_text["Thanks, he is lovely"]["session_id"] == "s1"  # from --session
    assert by_text["Noted."]["speaker"] == "assistant"
    assert by_text["Noted."]["session_id"] == "s2"


def test_a_bad_stdin_line_stores_nothing(run: Run, built: list[MemoryConfig]) -> None:
    stdin = json.dumps({"speaker": "Bob", "text": "fine"}) + "\n" + "not json\n"
    status, out, err = run("add", "-", "-n", NS, "--no-infer", stdin=stdin)
    assert status == 2 and out == ""
    assert err.startswith("lamina: error: stdin line 2: not valid JSON")
    assert built == []  # refused before the memory was built
    assert raw_records(run) == []


@pytest.mark.parametrize(
    ("argv", "stdin", "message"),
    [
        (("add", "hello"), None, "add needs --speaker NAME"),
        (("add", "hello", "--speaker", "A", "--at", "2024-05-08"), None, "has no UTC offset"),
        (("add", "hello", "--speaker", "A", "--at", "May 8th"), None, "is not an ISO 8601 time"),
        (("add", "hello", "--speaker", "A", "-n", "bad ns!"), None, "invalid namespace"),
        (("add", "hello", "--speaker", " "), None, "the --speaker is empty"),
        (("add", "-"), "\n\n", "no turns on stdin"),
        (("add", "-"), '{"text": "hi"}\n', "stdin line 1: no speaker"),
        (("add", "-"), '{"speaker": "A", "text": " "}\n', "stdin line 1: has no text"),
        (("add", "-"), '{"speaker": "A", "text": "x", "mood": 1}\n', "unknown turn field"),
        (("add", "-"), '["A", "x"]\n', "stdin line 1: expected a JSON object"),
        (("add", "-"), '{"speaker": "A", "text": "x", "at": "2024-05-08"}\n', "no UTC offset"),
    ],
)
def test_add_refuses_bad_input_before_any_memory_or_model(
    run: Run,
    built: list[MemoryConfig],
    model: SchemaChatModel,
    argv: tuple[str, ...],
    stdin: str | None,
    message: str,
) -> None:
    status, out, err = run(*argv, stdin=stdin)
    assert status == 2 and out == ""
    assert err.startswith("lamina: error: ") and message in err and err.count("\n") == 1
    assert built == [] and model.calls == []
