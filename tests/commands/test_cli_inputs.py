"""The command line refuses bad arguments before it opens a memory or loads a model.

Each message names the option (or variable) a bad path came from and the command that
helps, never a Python method. A ``Memory`` factory that records its calls shows that a
refused command built nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lamina import Memory, MemoryConfig
from lamina.cli import main
from lamina.commands.checks import PROMPT_RESERVE, check_question, question_budget
from lamina.errors import InvalidInputError
from lamina.testing import FakeEmbeddings, SchemaChatModel

Run = Callable[..., tuple[int, str, str]]


@pytest.fixture
def built() -> list[MemoryConfig]:
    return []


@pytest.fixture
def run(built: list[MemoryConfig], capsys: pytest.CaptureFixture[str], tmp_path: Path) -> Run:
    """``lamina ARGS`` in-process (``--data-dir`` under tmp unless given); (status, out, err)."""

    def factory(config: MemoryConfig) -> Memory:
        built.append(config)
        return Memory(config=config, embeddings=FakeEmbeddings(), chat_model=SchemaChatModel())

    def invoke(*args: str) -> tuple[int, str, str]:
        argv = list(args)
        if "--data-dir" not in argv:
            argv += ["--data-dir", str(tmp_path / "data")]
        status = main(argv, memory_factory=factory)
        out, err = capsys.readouterr()
        return status, out, err

    return invoke


def one_error(err: str) -> str:
    """The single ``lamina: error:`` line of ``err``."""
    assert err.startswith("lamina: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    return err.removeprefix("lamina: error: ").strip()


# ------------------------------------------------------------- empty question
HEAVY = ("chromadb", "langgraph", "langchain_core", "xllamacpp", "lamina.memory.facade")


def test_an_empty_question_is_refused_at_once_in_a_fresh_process(tmp_path: Path) -> None:
    """``lamina ask ""`` is refused before Chroma, LangGraph or a model is even imported.

    The cause is checked: the modules the process never loaded and the data folder it
    never created. The times are only guards, far above what it takes (0.06 s for the
    command, imports of lamina.cli included, on 2 busy cores).
    """
    data = tmp_path / "data"
    probe = (
        "import json, sys, time\n"
        "started = time.monotonic()\n"
        "from lamina.cli import main\n"
        f"status = main(['ask', '   ', '--data-dir', {str(data)!r}])\n"
        "elapsed = time.monotonic() - started\n"
        f"heavy = sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r} "
        f"or m in {HEAVY!r})\n"
        "print(json.dumps({'status': status, 'elapsed': elapsed, 'heavy': heavy}))\n"
    )
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=False
    )
    wall = time.monotonic() - started
    report = json.loads(done.stdout.splitlines()[-1])
    assert report["status"] == 2
    assert one_error(done.stderr).startswith("the question is empty")
    assert 'lamina ask "What is my dog called?"' in done.stderr
    assert report["heavy"] == []
    assert not data.exists()
    assert report["elapsed"] < 5, report  # the command, imports of lamina.cli included
    assert wall < 60, wall  # the interpreter's start included


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("ask", ""), "the question is empty"),
        (("search", " \t"), "the query is empty"),
        (("forget", "--subject", " "), "the subject is empty"),
        (("add", "", "--speaker", "Alice"), "the text is empty"),
    ],
)
def test_empty_text_is_refused_before_the_memory_is_built(
    run: Run, built: list[MemoryConfig], argv: tuple[str, ...], message: str
) -> None:
    status, out, err = run(*argv)
    assert status == 2 and out == ""
    assert one_error(err).startswith(message)
    assert built == []


# --------------------------------------------------------------- long question
def test_a_question_longer_than_the_local_window_is_refused_naming_the_limit(
    run: Run, built: list[MemoryConfig]
) -> None:
    question = "How many dogs did Maya adopt in the spring? " * 1200  # 52 KB
    status, out, err = run("ask", question)
    assert status == 2 and out == ""
    message = one_error(err)
    assert message.startswith("the question is ")
    limit = 8192 - 1500 - 256 - PROMPT_RESERVE
    assert "its window is 8,192 tokens and a question may take" in message
    assert f"at most {limit:,} of them" in message
    assert "I don't know" not in err and built == []  # refused, not answered "I don't know"


def test_chat_refuses_a_line_longer_than_the_window_and_goes_on(
    run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    line = "Tell me everything about the garden. " * 1500
    monkeypatch.setattr("sys.stdin", io.StringIO(f"{line}\n/inspect\n/quit\n"))
    status, out, err = run("chat")
    assert status == 0
    assert err.startswith("lamina: error: the question is ") and "window is 8,192" in err
    assert "raw: 0" in out  # nothing was stored, and the session went on


def test_the_question_limit_follows_the_window_and_the_endpoint_has_none() -> None:
    question = "word " * 6000
    with pytest.raises(InvalidInputError, match="window is 8,192 tokens"):
        check_question(question, MemoryConfig(store="memory"))
    short = MemoryConfig(store="memory", context={"context_tokens": 700})
    budget = question_budget(short)
    assert budget is not None and budget.limit == 8192 - 700 - 256 - PROMPT_RESERVE
    endpoint = MemoryConfig(store="memory", openai_base_url="http://127.0.0.1:9/v1")
    assert question_budget(endpoint) is None  # an endpoint's window is its own
    check_question(question * 10, endpoint)


def test_a_question_with_bytes_that_are_not_utf8_is_refused(run: Run, built: list[Any]) -> None:
    """An argument the terminal could not decode reaches Python with lone surrogates
    (surrogateescape); ``lamina ask`` crashed with a UnicodeEncodeError traceback."""
    status, _, err = run("ask", "Where is \udcff?")
    assert status == 2 and "not UTF-8 text" in one_error(err)
    assert built == []


def test_a_short_question_is_never_tokenized(monkeypatch: pytest.MonkeyPatch) -> None:
    """A question of at most ``limit`` bytes fits whatever the tokenizer (no file read)."""

    def no_count(*args: Any) -> Any:
        raise AssertionError("a short question was counted")

    monkeypatch.setattr("lamina.commands.checks._gguf_in_place", no_count)
    check_question("What is my dog called?" * 100, MemoryConfig(store="memory"))


# ------------------------------------------------------------------ input files
def test_ingest_of_a_folder_says_it_is_a_folder(run: Run, tmp_path: Path) -> None:
    status, _, err = run("ingest", str(tmp_path))
    message = one_error(err)
    assert status == 2 and message.startswith(f"{tmp_path} is a folder, not a file")
    assert "no such file" not in message


def test_ingest_of_a_missing_file_says_so(run: Run, tmp_path: Path) -> None:
    status, _, err = run("ingest", str(tmp_path / "nope.jsonl"))
    assert status == 2 and one_error(err).startswith(f"{tmp_path / 'nope.jsonl'}: no such file")
    status, _, err = run("ingest", str(tmp_path / "gone" / "nope.jsonl"))
    assert f"there is no folder {tmp_path / 'gone'} either" in one_error(err)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_ingest_of_an_unreadable_file_says_so(run: Run, tmp_path: Path) -> None:
    path = tmp_path / "turns.jsonl"
    path.write_text("{}\n")
    path.chmod(0)
    status, _, err = run("ingest", str(path))
    assert status == 2 and "permission denied, cannot read the file to ingest" in one_error(err)


# -------------------------------------------------------------- data folder
def test_a_data_folder_that_cannot_be_created_is_named_as_the_data_folder(run: Run) -> None:
    status, _, err = run("search", "x", "--data-dir", "/proc/nope")
    message = one_error(err)
    assert status == 2
    assert message.startswith("the data folder --data-dir /proc/nope cannot be created (")


def test_a_data_folder_that_is_a_file_says_so(run: Run, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    status, _, err = run("inspect", "--data-dir", str(blocker))
    assert status == 2
    assert one_error(err).startswith(f"the data folder --data-dir {blocker} is a file")


def _unwritable_folder(tmp_path: Path) -> Path:
    if os.geteuid() != 0:
        folder = tmp_path / "read-only"
        folder.mkdir()
        folder.chmod(0o555)
        return folder
    if not Path("/sys").is_dir() or os.access("/sys", os.W_OK) and _writable("/sys"):
        pytest.skip("no folder this root process cannot write to")
    return Path("/sys")  # read-only even for root in a container


def _writable(folder: str) -> bool:
    try:
        Path(folder, ".probe").touch()
    except OSError:
        return False
    Path(folder, ".probe").unlink()
    return True


def test_an_unwritable_data_folder_says_so(run: Run, tmp_path: Path) -> None:
    folder = _unwritable_folder(tmp_path)
    status, _, err = run("search", "x", "--data-dir", str(folder))
    assert status == 2
    assert one_error(err).startswith(f"the data folder --data-dir {folder} is not writable (")


def test_the_data_folder_from_the_environment_names_the_variable(
    run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("LAMINA_DATA_DIR", "/proc/nope")
    status = main(["search", "x"])
    message = one_error(capsys.readouterr().err)
    assert status == 2
    assert message.startswith("the data folder LAMINA_DATA_DIR=/proc/nope cannot be created")


# ------------------------------------------------------ other options with paths
def test_install_model_dest_that_is_a_file_names_the_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    assert main(["install-model", "qwen", "--dest", str(blocker)]) == 2
    assert one_error(capsys.readouterr().err).startswith(
        f"the model folder --dest {blocker} is a file"
    )


def test_eval_paths_name_their_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from lamina_bench.cli import main as bench

    def error() -> str:
        return one_error(capsys.readouterr().err.replace("lamina-bench: ", "lamina: ", 1))

    assert bench(["eval", "--data", str(tmp_path), "--out", str(tmp_path / "out")]) == 2
    assert error().startswith(f"{tmp_path} is a folder")
    notes = tmp_path / "notes.md"
    assert bench(["eval", "--notes", str(notes), "--out", str(tmp_path / "out")]) == 2
    message = error()
    assert message.startswith(f"{notes}: no such file") and "--notes" in message
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    assert bench(["eval", "--out", str(blocker)]) == 2
    assert error().startswith(f"the output folder --out {blocker}")


# ------------------------------------------------- messages name CLI commands
def test_forget_of_an_unknown_id_names_cli_commands(run: Run) -> None:
    status, _, err = run("forget", "--id", "deadbeef")
    message = one_error(err)
    assert status == 2
    assert message.startswith("no memory 'deadbeef' in namespace 'default'")
    assert "`lamina search QUERY`" in message and "`lamina inspect`" in message
    assert "()" not in message and "AddResult" not in message
    status, _, err = run("forget", "--id", "deadbeef", "-n", "user:alice")
    assert "`lamina inspect -n user:alice`" in one_error(err)


def test_chat_forget_of_an_unknown_id_names_the_chat_command(
    run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO("/forget --id deadbeef\n/quit\n"))
    status, out, err = run("chat")
    assert status == 0 and err == ""
    assert "no memory 'deadbeef' in namespace 'default'; /search TEXT shows the ids" in out
    assert "()" not in out


# ---------------------------------------------------------------------- mcp
def test_mcp_with_allowed_namespaces_and_no_namespace_uses_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from lamina.integrations import mcp_server

    served: list[Any] = []

    async def fake_stdio(server: Any) -> None:
        served.append(server)

    monkeypatch.setattr(mcp_server, "run_stdio", fake_stdio)
    policies: list[Any] = []
    build = mcp_server.build_server

    def spy(memory: Memory, policy: Any, **kwargs: Any) -> Any:
        policies.append(policy)
        return build(memory, policy, **kwargs)

    monkeypatch.setattr(mcp_server, "build_server", spy)

    def factory(config: MemoryConfig) -> Memory:
        return Memory(config=config, embeddings=FakeEmbeddings(), chat_model=SchemaChatModel())

    argv = ["mcp", "--allow-namespace", "user:*", "--data-dir", str(tmp_path / "d")]
    assert main(argv, memory_factory=factory) == 0
    err = capsys.readouterr().err
    assert "None" not in err
    assert "calls may name user:*; default 'default'" in err
    (policy,) = policies
    assert policy.default == "default" and policy.resolve(None) == "default"
    assert policy.resolve("user:bob") == "user:bob"
