"""The ``lamina`` command line, run in-process against a persistent store in a temp dir.

The Memory's chat model and embeddings are injected through ``main(memory_factory=...)``;
everything else (data dir, namespace, options) goes through the real argument handling.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import BaseMessage

from lamina import Memory, MemoryConfig
from lamina.cli import build_parser, main
from lamina.commands.common import config_from_args
from lamina.prompts.construction import CONSTRUCTION_FORMAT
from lamina.testing import FakeEmbeddings, SchemaChatModel

Run = Callable[..., tuple[int, str, str]]

TURNS = [
    {
        "speaker": "Alice",
        "text": "I adopted a greyhound called Biscuit yesterday!",
        "occurred_at": "2024-05-08T18:20:00+00:00",
        "session_id": "s1",
    },
    {
        "speaker": "Bob",
        "text": "Congratulations, greyhounds are lovely dogs.",
        "occurred_at": "2024-05-08T18:21:00+00:00",
        "session_id": "s1",
    },
    {
        "speaker": "Alice",
        "text": "I am flying to Lisbon next week for a conference.",
        "occurred_at": "2024-05-20T09:00:00+02:00",
        "session_id": "s2",
        "turn_index": 0,
    },
]


def locomo_sample(sample_id: str, name: str, pet: str) -> dict[str, Any]:
    """A tiny LoCoMo-format sample: two sessions, one question."""
    return {
        "sample_id": sample_id,
        "conversation": {
            "speaker_a": name,
            "speaker_b": "Sam",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": name, "dia_id": "D1:1", "text": f"My cat {pet} knocked over a vase."},
                {"speaker": "Sam", "dia_id": "D1:2", "text": "Oh no, is the vase broken?"},
            ],
            "session_2_date_time": "10:00 am on 12 May, 2023",
            "session_2": [
                {
                    "speaker": name,
                    "dia_id": "D2:1",
                    "text": "Here is a photo of the garden.",
                    "blip_caption": "a photo of roses",
                },
            ],
        },
        "qa": [
            {
                "question": "What is the cat called?",
                "answer": pet,
                "evidence": ["D1:1"],
                "category": 4,
            }
        ],
    }


def answer_with(word: str) -> Callable[[list[BaseMessage]], str]:
    """A DraftFirst responder: cites the memory line that mentions ``word``, else misses it."""

    def respond(messages: list[BaseMessage]) -> str:
        text = "\n".join(str(m.content) for m in messages)
        match = re.search(rf"\[(m\d+)\][^\n]*{word}", text)
        if match is None:
            return json.dumps({"sufficient": False, "missing": word})
        return json.dumps({"sufficient": True, "answer": word, "cited": [match[1]]})

    return respond


def qa_model(word: str, query: str) -> SchemaChatModel:
    """A model whose rewrites search for ``query`` and whose answers cite ``word`` if shown it."""
    model = SchemaChatModel()
    model.script("QueryRewrite", *[json.dumps({"queries": [query]})] * 20)
    model.script("DraftFirst", *[answer_with(word)] * 20)
    return model


@pytest.fixture
def model() -> SchemaChatModel:
    return SchemaChatModel()


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def run(
    data_dir: Path,
    model: SchemaChatModel,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> Run:
    """Run ``lamina ARGS --data-dir DIR``; return (status, stdout, stderr)."""
    built: list[MemoryConfig] = []

    def factory(config: MemoryConfig) -> Memory:
        built.append(config)
        return Memory(config=config, embeddings=FakeEmbeddings(), chat_model=model)

    def invoke(
        *args: str, stdin: str | None = None, chat_model: SchemaChatModel | None = None
    ) -> tuple[int, str, str]:
        if chat_model is not None:
            nonlocal model
            model = chat_model
        if stdin is not None:
            monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
        status = main([*args, "--data-dir", str(data_dir)], memory_factory=factory)
        out, err = capsys.readouterr()
        return status, out, err

    invoke.built = built  # type: ignore[attr-defined]
    return invoke


def write_jsonl(path: Path, rows: list[Any]) -> Path:
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")
    return path


def counts(run: Run, namespace: str) -> dict[str, int]:
    status, out, _ = run("inspect", "-n", namespace, "--json")
    assert status == 0
    return {g: part["count"] for g, part in json.loads(out)["granularities"].items()}


# -------------------------------------------------------------------- ingest
def test_ingest_jsonl_raw_only_stores_turns_and_skips_duplicates(
    run: Run, tmp_path: Path, model: SchemaChatModel
) -> None:
    path = write_jsonl(tmp_path / "turns.jsonl", TURNS)
    status, out, err = run("ingest", str(path), "-n", "user:alice", "--raw-only")
    assert status == 0, err
    assert "jsonl, 3 turns" in out
    assert "user:alice: 3 turns stored, 0 duplicates skipped" in out
    assert re.search(r"done in \d+\.\ds", out)
    assert model.calls == []  # raw only: no LLM

    status, out, _ = run("ingest", str(path), "-n", "user:alice", "--raw-only")
    assert status == 0
    assert "user:alice: 0 turns stored, 3 duplicates skipped" in out
    assert counts(run, "user:alice")["raw"] == 3


def test_ingest_jsonl_keeps_fields_and_finds_them(run: Run, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "turns.jsonl", TURNS)
    assert run("ingest", str(path), "-n", "user:alice", "--raw-only")[0] == 0
    status, out, _ = run("search", "Lisbon conference", "-n", "user:alice", "--json", "-k", "1")
    assert status == 0
    [hit] = json.loads(out)
    assert hit["granularity"] == "raw" and hit["speaker"] == "Alice"
    assert "Lisbon" in hit["text"] and hit["occurred_at"].startswith("2024-05-20T07:00")


def test_ingest_with_consolidation_runs_the_ingest_graph(
    run: Run, tmp_path: Path, model: SchemaChatModel
) -> None:
    path = write_jsonl(tmp_path / "turns.jsonl", TURNS)
    status, out, err = run(
        "ingest", str(path), "-n", "user:alice", "--trigger-policy", "session", "--no-progress"
    )
    assert status == 0, err
    assert "with consolidation" in out and "3 turns stored" in out
    assert "derived records written" in out
    assert model.calls, "the session policy consolidates closed sessions with the model"
    assert counts(run, "user:alice")["raw"] == 3


def test_a_benchmark_file_converts_with_lamina_bench_then_ingests(run: Run, tmp_path: Path) -> None:
    """lamina reads JSONL only; lamina-bench writes a LoCoMo-format file as JSONL turns."""
    from lamina_bench.commands.turns import write_turns

    path = tmp_path / "locomo.json"
    path.write_text(
        json.dumps([locomo_sample("conv-1", "Ana", "Miso"), locomo_sample("conv-2", "Ben", "Tofu")])
    )
    status, _, err = run("ingest", str(path), "--raw-only")
    assert status == 2 and "a JSON list is not a file of turns" in err
    assert "lamina-bench turns" in err
    files = write_turns(path, tmp_path / "turns")
    assert sorted(files) == ["conv-1", "conv-2"]
    for sample_id, file in files.items():
        status, out, err = run("ingest", str(file), "--raw-only", "-n", sample_id)
        assert status == 0, err
        assert f"{sample_id}: 3 turns stored" in out
    status, out, _ = run("search", "cat vase", "-n", "conv-2", "--json")
    texts = [h["text"] for h in json.loads(out)]
    assert any("Tofu" in t for t in texts) and not any("Miso" in t for t in texts)
    status, out, _ = run("inspect", "-n", "conv-1", "--json", "-g", "raw", "-l", "10")
    records = json.loads(out)["granularities"]["raw"]["latest"]
    photo = next(r for r in records if r["session_id"] == "session_2")
    assert photo["media_caption"] == "a photo of roses"
    assert photo["metadata"] == {"dia_id": "D2:1"}
    assert photo["occurred_at"].startswith("2023-05-12T10:00")


def test_lamina_bench_turns_picks_conversations_and_checks_the_file(tmp_path: Path) -> None:
    from lamina.errors import InvalidInputError
    from lamina_bench.commands.turns import write_turns

    path = tmp_path / "locomo.json"
    samples = [locomo_sample(f"conv-{n}", "Ana", "Miso") for n in (1, 2, 3)]
    path.write_text(json.dumps(samples))
    files = write_turns(path, tmp_path / "out", ["conv-1", "conv-3"])
    assert sorted(files) == ["conv-1", "conv-3"]
    assert len(files["conv-3"].read_text().splitlines()) == 3
    with pytest.raises(InvalidInputError, match="no conversation conv-7"):
        write_turns(path, tmp_path / "none", ["conv-7"])
    broken = locomo_sample("conv-9", "Ana", "Miso")
    del broken["conversation"]["session_2_date_time"]
    path.write_text(json.dumps([samples[0], broken]))
    with pytest.raises(InvalidInputError, match="session_2_date_time"):
        write_turns(path, tmp_path / "bad")
    assert not (tmp_path / "bad").exists()  # checked before anything is written


BAD_FILES: list[tuple[str, str, str]] = [
    ("prose.txt", "hello, this is not JSON\n", "prose.txt:1: not valid JSON"),
    ("empty.jsonl", "\n\n", "the file is empty"),
    (
        "missing.jsonl",
        json.dumps(TURNS[0])
        + "\n"
        + json.dumps(
            {"speaker": "Bob", "occurred_at": "2024-05-08T18:21:00+00:00", "session_id": "s1"}
        )
        + "\n",
        "missing.jsonl:2: missing field 'text'",
    ),
    (
        "naive.jsonl",
        json.dumps(TURNS[0])
        + "\n"
        + json.dumps({**TURNS[1], "occurred_at": "2024-05-08T18:21:00"})
        + "\n",
        "naive.jsonl:2: field 'occurred_at': Input should have timezone info",
    ),
    (
        "extra.jsonl",
        json.dumps({**TURNS[0], "mood": "happy"}) + "\n",
        "extra.jsonl:1: field 'mood': unknown field",
    ),
    (
        "list.jsonl",
        json.dumps(TURNS[0]) + "\n[1, 2]\n",
        "list.jsonl:2: expected a turn object",
    ),
    (
        "bad_index.jsonl",
        json.dumps({**TURNS[0], "turn_index": -1}) + "\n",
        "field 'turn_index'",
    ),
    (
        "list.json",
        json.dumps([{"speaker": "A"}]),
        "a JSON list is not a file of turns",
    ),
]


@pytest.mark.parametrize(("name", "content", "message"), BAD_FILES, ids=[b[0] for b in BAD_FILES])
def test_ingest_rejects_bad_files_with_one_line_and_stores_nothing(
    run: Run, tmp_path: Path, name: str, content: str, message: str
) -> None:
    path = tmp_path / name
    path.write_text(content)
    status, out, err = run("ingest", str(path), "-n", "user:alice", "--raw-only")
    assert status == 2
    assert err.startswith("lamina: error: ") and message in err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert counts(run, "user:alice")["raw"] == 0


def test_ingest_rejects_a_missing_file(run: Run, tmp_path: Path) -> None:
    status, _, err = run("ingest", str(tmp_path / "nope.jsonl"))
    assert status == 2 and "nope.jsonl: no such file" in err


def test_bad_namespace_and_options_are_clear_errors(run: Run, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "turns.jsonl", TURNS)
    status, _, err = run("ingest", str(path), "-n", "bad namespace!", "--raw-only")
    assert status == 2 and "invalid namespace 'bad namespace!'" in err
    status, _, err = run("search", "x", "-n", "a b")
    assert status == 2 and "invalid namespace" in err
    status, _, err = run("search", "x", "--local-model", "gpt-5")
    assert status == 2 and "local_model must be one of" in err
    with pytest.raises(SystemExit) as excinfo:
        run("search", "x", "-k", "0")
    assert excinfo.value.code == 2


# ------------------------------------------------------------- search / ask
def test_search_prints_a_table_with_ids(run: Run, tmp_path: Path) -> None:
    run("ingest", str(write_jsonl(tmp_path / "t.jsonl", TURNS)), "-n", "user:alice", "--raw-only")
    status, out, _ = run("search", "greyhound Biscuit", "-n", "user:alice", "-k", "2", "-g", "raw")
    assert status == 0
    lines = out.strip().splitlines()
    assert len(lines) == 2
    assert re.match(
        r"\s*1\. \[raw \S+\] 2024-05-08 Alice: I adopted a greyhound called Biscuit", lines[0]
    )
    status, out, _ = run("search", "greyhound", "-n", "user:bob")
    assert "no memories match in namespace 'user:bob'" in out


def test_ask_answers_with_citations(run: Run, tmp_path: Path) -> None:
    run("ingest", str(write_jsonl(tmp_path / "t.jsonl", TURNS)), "-n", "user:alice", "--raw-only")
    hits = json.loads(run("search", "Biscuit", "-n", "user:alice", "--json")[1])
    ids = [h["id"] for h in hits if "Biscuit" in h["text"]]
    model = qa_model("Biscuit", "greyhound called Biscuit")
    status, out, err = run("ask", "What is my dog called?", "-n", "user:alice", chat_model=model)
    assert status == 0, err
    lines = out.strip().splitlines()
    assert lines[0] == "Biscuit"
    assert lines[1] == "citations:" and ids[0] in lines[2] and "greyhound" in lines[2]

    status, out, _ = run("ask", "What is my dog called?", "-n", "user:alice", "--json")
    result = json.loads(out)
    assert result["answer"] == "Biscuit" and result["citations"] == ids and not result["refused"]


def test_ask_reports_malformed_replies_without_crashing(run: Run) -> None:
    model = SchemaChatModel()
    for title in ("DraftFirst", "QueryRewrite", "AnswerDraft"):
        model.script(title, *["this is not json"] * 9)
    status, out, err = run("ask", "What is my dog called?", "-n", "user:alice", chat_model=model)
    assert status == 0 and out.strip()
    assert "LLM step(s) failed" in err


def _closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # nothing listens once the socket is closed


def test_ask_with_an_unreachable_model_exits_1_naming_the_url(run: Run, tmp_path: Path) -> None:
    from langchain_openai import ChatOpenAI

    run("ingest", str(write_jsonl(tmp_path / "t.jsonl", TURNS)), "-n", "user:alice", "--raw-only")
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    model = ChatOpenAI(base_url=url, api_key="not-needed", model="qwen2.5", max_retries=0)
    status, out, err = run("ask", "What is my dog called?", "-n", "user:alice", chat_model=model)  # type: ignore[arg-type]
    assert status == 1 and out == ""
    assert err.startswith("lamina: error: could not reach the chat model 'qwen2.5' at " + url)
    assert "lamina serve-llm" in err and "--base-url" in err
    assert "Traceback" not in err


def test_ask_explain_shows_the_evidence_and_the_verdict_of_a_refusal(
    run: Run, tmp_path: Path
) -> None:
    run("ingest", str(write_jsonl(tmp_path / "t.jsonl", TURNS)), "-n", "user:alice", "--raw-only")
    model = SchemaChatModel()
    verdict = {"sufficient": False, "missing": "a cat's name"}
    model.script("DraftFirst", *[json.dumps(verdict)] * 5)
    model.script("QueryRewrite", json.dumps({"queries": ["cat name"]}))
    argv = ("ask", "What is my cat called?", "-n", "user:alice", "--explain")
    status, out, err = run(*argv, chat_model=model)
    assert status == 0, err
    assert out.startswith("I don't know")
    assert "refused: I don't know" in out
    assert re.search(r"^judge:\n  round 1: \S+", out, re.M)  # the verdict of each round
    assert "a cat's name" in out  # what the Judge found missing
    evidence = [line for line in out.splitlines() if re.match(r"\s+m\d+ \[raw ", line)]
    assert evidence and any("greyhound called Biscuit" in line for line in evidence)
    assert all("score" in line for line in evidence)


# ---------------------------------------------------------------------- chat
def test_chat_remembers_across_runs(run: Run, data_dir: Path) -> None:
    model = qa_model("Biscuit", "my dog is called Biscuit")
    status, out, err = run(
        "chat",
        "-n",
        "user:alice",
        "--user",
        "Alice",
        stdin="My dog is called Biscuit.\n/quit\nThis line comes after quit.\n",
        chat_model=model,
    )
    assert status == 0, err
    assert "memory> " in out
    assert counts(run, "user:alice")["raw"] == 1  # the refused reply is not stored

    status, out, err = run(
        "chat", "-n", "user:alice", stdin="What is my dog called?\n", chat_model=model
    )
    assert status == 0, err
    replies = [line for line in out.splitlines() if line.startswith("memory> ")]
    assert replies == ["memory> Biscuit"]
    assert "(cites " in out
    status, out, _ = run("search", "quit", "-n", "user:alice", "--json")
    assert not any("after quit" in h["text"] for h in json.loads(out))
    assert counts(run, "user:alice")["raw"] == 3  # question and answer of the second run


def test_chat_slash_commands(run: Run, tmp_path: Path) -> None:
    run("ingest", str(write_jsonl(tmp_path / "t.jsonl", TURNS)), "-n", "user:alice", "--raw-only")
    script = "/help\n/inspect\n/search Lisbon\n/forget lisbon\n/search Lisbon\n/nope\n/forget\n"
    status, out, err = run("chat", "-n", "user:alice", stdin=script)
    assert status == 0, err
    assert "/forget TEXT" in out  # help
    assert "raw: 3, fact: 0, episode: 0, scene: 0" in out
    assert "Lisbon next week" in out.split("/forget")[0] or out.count("Lisbon next week") == 1
    assert out.count("Lisbon next week") == 1  # gone after the forget
    assert "forgot 1 record(s) in 'user:alice'" in out
    assert "unknown command /nope" in out
    assert "usage: /forget TEXT" in out


def test_chat_keeps_going_after_a_bad_line(run: Run) -> None:
    status, out, err = run("chat", "-n", "user:alice", stdin="/forget --id\n/search \n/quit\n")
    assert status == 0
    assert "usage: /forget --id ID..." in out and "usage: /search QUERY" in out


# ------------------------------------------------------------ inspect / forget
def test_inspect_shows_counts_latest_audit_and_profile(run: Run, tmp_path: Path) -> None:
    run("ingest", str(write_jsonl(tmp_path / "t.jsonl", TURNS)), "-n", "user:alice", "--raw-only")
    status, out, _ = run("inspect", "-n", "user:alice", "-l", "1", "--audit", "--profile")
    assert status == 0
    assert "raw: 3" in out and "fact: 0" in out and "scene: 0" in out
    raw_section = out.split("raw: 3")[1].split("fact: 0")[0]
    assert raw_section.count("\n  [") == 1  # --limit 1
    assert "audit log: 0 entries" in out and "profile: none yet" in out

    run("forget", "-n", "user:alice", "--subject", "Lisbon")
    status, out, _ = run("inspect", "-n", "user:alice", "--audit", "--json")
    data = json.loads(out)
    assert data["granularities"]["raw"]["count"] == 2
    assert [e["action"] for e in data["audit"]] == ["forget"]
    assert "Lisbon" not in out  # the tombstone keeps no content


def test_forget_subject_then_search_finds_nothing(run: Run, tmp_path: Path) -> None:
    run("ingest", str(write_jsonl(tmp_path / "t.jsonl", TURNS)), "-n", "user:alice", "--raw-only")
    run("ingest", str(write_jsonl(tmp_path / "t.jsonl", TURNS)), "-n", "user:bob", "--raw-only")
    status, out, _ = run("forget", "-n", "user:alice", "--subject", "greyhound")
    assert status == 0 and "forgot 2 record(s) in 'user:alice': 2 raw" in out
    for query in ("greyhound", "Biscuit adopted", "lovely dogs"):
        hits = json.loads(run("search", query, "-n", "user:alice", "--json")[1])
        assert not any("greyhound" in h["text"].lower() for h in hits)
    hits = json.loads(run("search", "greyhound", "-n", "user:bob", "--json")[1])
    assert any("greyhound" in h["text"] for h in hits)  # another namespace is untouched


def test_forget_by_id_and_everything(run: Run, tmp_path: Path) -> None:
    run("ingest", str(write_jsonl(tmp_path / "t.jsonl", TURNS)), "-n", "user:alice", "--raw-only")
    [hit] = json.loads(run("search", "Lisbon", "-n", "user:alice", "--json", "-k", "1")[1])
    status, out, _ = run("forget", "-n", "user:alice", "--id", hit["id"], "--json")
    assert status == 0 and json.loads(out)["deleted"]["raw"] == [hit["id"]]
    assert counts(run, "user:alice")["raw"] == 2

    status, _, err = run("forget", "-n", "user:alice", "--all")
    assert status == 2 and "add --yes to confirm" in err
    assert counts(run, "user:alice")["raw"] == 2
    status, out, _ = run("forget", "-n", "user:alice", "--all", "--yes")
    assert status == 0 and "forgot 2 record(s)" in out
    assert counts(run, "user:alice")["raw"] == 0


def test_forget_needs_exactly_one_selector(run: Run) -> None:
    with pytest.raises(SystemExit):
        run("forget", "-n", "user:alice")
    with pytest.raises(SystemExit):
        run("forget", "-n", "user:alice", "--subject", "x", "--all")


# ------------------------------------------------------------- configuration
def test_options_beat_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("LAMINA_MODEL", "from-env")
    monkeypatch.setenv("LAMINA_LOCAL_MODEL", "smollm2")
    args = build_parser().parse_args(
        [
            "search",
            "x",
            "--data-dir",
            str(tmp_path),
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--api-key",
            "k",
            "--model",
            "m",
            "--trigger-policy",
            "eager",
        ]
    )
    config = config_from_args(args)
    assert config.data_dir == tmp_path and config.model == "m"
    assert config.openai_base_url == "http://127.0.0.1:9/v1"
    assert config.openai_api_key is not None and config.openai_api_key.get_secret_value() == "k"
    assert config.local_model == "smollm2"  # not given on the command line: env applies
    assert config.context == {"trigger_policy": "eager"}


def test_the_data_dir_option_reaches_the_memory(run: Run, data_dir: Path, tmp_path: Path) -> None:
    run("ingest", str(write_jsonl(tmp_path / "t.jsonl", TURNS)), "-n", "user:alice", "--raw-only")
    assert (data_dir / "chroma").is_dir()
    assert run.built[-1].data_dir == data_dir  # type: ignore[attr-defined]


def test_an_unusable_data_dir_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    status = main(["search", "x", "--data-dir", str(blocker / "data")])
    err = capsys.readouterr().err
    assert status == 2
    assert err.startswith("lamina: error: the data folder --data-dir ")
    assert err.rstrip().endswith("cannot be created (Not a directory)") and "Traceback" not in err


class FailingEmbeddings(FakeEmbeddings):
    """Embeds ``budget`` document batches, then fails like a broken model."""

    def __init__(self, budget: int) -> None:
        super().__init__()
        self.budget = budget

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if self.budget == 0:
            from lamina.errors import EmbeddingError

            raise EmbeddingError("the embedding model crashed")
        self.budget -= 1
        return super().embed_documents(texts)


def test_ingest_that_fails_midway_says_what_was_stored(
    tmp_path: Path, data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_jsonl(tmp_path / "t.jsonl", TURNS)
    args = ["ingest", str(path), "-n", "user:alice", "--raw-only", "--batch-size", "1"]

    def ingest(budget: int) -> tuple[int, str, str]:
        def factory(config: MemoryConfig) -> Memory:
            return Memory(config=config, embeddings=FailingEmbeddings(budget))

        status = main([*args, "--data-dir", str(data_dir)], memory_factory=factory)
        return status, *capsys.readouterr()

    status, _, err = ingest(budget=1)
    assert status == 2
    assert "stopped after storing 1 new turn(s); running again skips them" in err
    assert "the embedding model crashed" in err
    status, out, err = ingest(budget=100)  # the model works again: the stored turn is skipped
    assert status == 0, err
    assert "2 turns stored, 1 duplicates skipped" in out


def test_ingest_interrupted_inside_consolidation_counts_what_the_store_holds(
    tmp_path: Path, data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The raw turns of a batch are stored before its model call: a stop there still
    counts them, and the rerun (which resumes that add) reports them as already stored."""
    rows = [{**TURNS[0], "text": f"turn {n} about Lisbon", "turn_index": n} for n in range(5)]
    path = write_jsonl(tmp_path / "t.jsonl", rows)
    args = ["ingest", str(path), "-n", "user:alice", "--trigger-policy", "eager"]

    def interrupt(messages: list[Any]) -> str:
        raise KeyboardInterrupt

    def ingest(model: SchemaChatModel) -> tuple[int, str, str]:
        def factory(config: MemoryConfig) -> Memory:
            return Memory(config=config, embeddings=FakeEmbeddings(), chat_model=model)

        status = main([*args, "--data-dir", str(data_dir)], memory_factory=factory)
        return status, *capsys.readouterr()

    stopping = SchemaChatModel()
    stopping.script(CONSTRUCTION_FORMAT, *[interrupt] * 10)
    status, _, err = ingest(stopping)
    assert status == 130  # Ctrl-C
    assert "stopped after storing 5 new turn(s)" in err
    status, out, err = ingest(SchemaChatModel())
    assert status == 0, err
    assert "user:alice: 0 turns stored, 5 duplicates skipped" in out


def test_ingest_off_a_terminal_prints_progress_lines(run: Run, tmp_path: Path) -> None:
    rows = [
        {**TURNS[0], "text": f"turn {n}", "turn_index": n, "session_id": f"s{n // 60}"}
        for n in range(250)
    ]
    path = write_jsonl(tmp_path / "t.jsonl", rows)
    status, _, err = run("ingest", str(path), "-n", "user:alice", "--raw-only")
    assert status == 0, err
    lines = [line for line in err.splitlines() if line.startswith("ingest: ")]
    assert lines[0].startswith("ingest: 1") and lines[-1] == "ingest: 250/250 turns (user:alice)"
    assert 3 <= len(lines) <= 4
    status, _, err = run("ingest", str(path), "-n", "user:alice", "--raw-only", "--no-progress")
    assert "ingest: " not in err
