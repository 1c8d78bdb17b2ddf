"""``lamina demo``: the quick and full tours, driven by a scripted model.

The scripted model plays the offline model's part; every other component is real (a
persistent Chroma on disk, the ingest and recall graphs, update and forget), and the
tests reopen the demo's store afterwards to check what the tour printed really happened.
"""

from __future__ import annotations

import json
import re
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import BaseMessage

from lamina import Memory, MemoryConfig
from lamina.cli import main
from lamina.commands.demo_progress import Progress
from lamina.core.context import SMALL_MODEL_PROFILE
from lamina.errors import InvalidInputError, LocalModelError
from lamina.records.model import FactRecord
from lamina.samples import QUICK_SAMPLE, load_sample, sample_tour
from lamina.testing import FakeEmbeddings, SchemaChatModel

NS = "demo:maya"
SESSION_1 = (
    "T|Theo's loan and Maya's move\n"
    "S|The bank approved Theo's bakery loan on 15 March 2024. Maya is moving to Lisbon.\n"
    "F|t1|Theo|The bank approved Theo's bakery loan on 15 March 2024.\n"
    "F|t4|Maya|Maya is moving to Lisbon in September for a new job."
)
SESSION_2 = (
    "T|Maya's move to Porto\n"
    "S|Maya's job moved to Porto; she gave Theo her door code 4711.\n"
    "F|t1|Maya|Maya is moving to Porto, not Lisbon.\n"
    "F|t3|Maya|Maya's front door code is 4711."
)


def _text(messages: list[BaseMessage]) -> str:
    return "\n".join(str(m.content) for m in messages)


def flag_the_move(messages: list[BaseMessage]) -> str:
    """An update check that, like a good model, confirms the Lisbon -> Porto pair only."""
    found = re.finditer(r"\[(p\d+)\][^\n]*\n  OLD[^\n]*\n  NEW[^\n]*", _text(messages))
    verdicts = [
        {"pair": m[1], "outdated": "Lisbon" in m[0] and "Porto" in m[0].split("NEW")[1]}
        for m in found
    ]
    return json.dumps({"verdicts": verdicts})


def cite_the_loan_turn(messages: list[BaseMessage]) -> str:
    """Answer with the label of the memory that mentions the loan."""
    label = re.search(r"\[(m\d+)\][^\n]*approved my bakery loan", _text(messages))
    cited = [label[1]] if label else []
    return json.dumps({"sufficient": True, "answer": "15 March 2024", "cited": cited})


def quick_model(*, flag: bool = True) -> SchemaChatModel:
    model = SchemaChatModel()
    model.script("ConstructionLines", SESSION_1, SESSION_2)
    if flag:
        model.script("SupersessionCheck", flag_the_move)
    model.script("DraftFirst", cite_the_loan_turn)
    return model


def run(argv: list[str], model: SchemaChatModel) -> int:
    def factory(config: MemoryConfig) -> Memory:
        # the scripted model stands in for the offline one, so it gets its profile
        local = {**SMALL_MODEL_PROFILE, **config.context}
        config = config.model_copy(update={"context": local})
        return Memory(config=config, embeddings=FakeEmbeddings(), chat_model=model)

    return main(argv, memory_factory=factory)


def reopen(data_dir: Path) -> Memory:
    """The demo's memory, opened again after the demo closed it."""
    config = MemoryConfig(data_dir=data_dir)
    return Memory(config=config, embeddings=FakeEmbeddings(), chat_model=SchemaChatModel())


def section(out: str, number: int) -> str:
    """The output of step ``number`` of the tour."""
    start = out.index(f" {number}/5 ")
    end = out.find(f" {number + 1}/5 ", start)
    return out[start : end if end >= 0 else len(out)]


def test_quick_tour_builds_answers_supersedes_and_forgets(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = quick_model()
    assert run(["demo", "--data-dir", str(tmp_path)], model) == 0
    out = capsys.readouterr().out
    # every progress line carries the elapsed time
    stamped = [x for x in out.splitlines() if x.startswith("[")]
    assert stamped and all(re.match(r"\[\s*\d+\.\ds\] ", x) for x in stamped)
    build = section(out, 2)
    # raw turns are shown as stored, with "yesterday" resolved to a date
    assert "raw      Theo: The bank approved my bakery loan yesterday (15 March 2024)!" in build
    assert "next Friday (22 March 2024)" in build
    assert "session_1 consolidated: +1 episode(s), +2 fact(s) (1 LLM call" in build
    assert "memory: 4 raw turns → 2 facts → 1 episode" in build
    assert "memory: 7 raw turns → 3 facts → 2 episodes" in build  # Lisbon is superseded
    assert "fact     [Theo] The bank approved Theo's bakery loan on 15 March 2024." in build
    answer = section(out, 3)
    assert "? When did the bank approve Theo's loan?" in answer
    assert "answer: 15 March 2024" in answer
    assert "cites    raw of 16 March 2024, Theo: The bank approved my bakery loan yesterday " in (
        answer
    )
    update = section(out, 4)
    assert "old      Maya is moving to Lisbon in September for a new job." in update
    assert "new      Maya is moving to Porto, not Lisbon." in update
    assert "the Judge (conflict check) and the Refresher" in update
    now, before = update.split("among current facts:")[1].split("before the change:")
    # current facts: the new version ranks, the superseded one is gone
    assert re.search(r"\d new  Maya is moving to Porto, not Lisbon\.", now)
    assert "the old fact is not found" in now and " old  " not in now
    # as_of before the change: the old version, not the new one
    assert re.search(r"\d old  Maya is moving to Lisbon in September", before)
    assert "the new fact is not found" in before
    forget = section(out, 5)
    assert "memory.forget(subject='4711') deleted" in forget
    assert "nothing mentions '4711'" in forget
    assert model.count("ConstructionLines") == 2  # one call per closed session
    # what the tour printed is what the store holds
    with reopen(tmp_path) as memory:
        records = memory.get_all(namespace=NS)
        assert records and not [r for r in records if "4711" in r.text]
        facts = memory.get_all(namespace=NS, granularities=["fact"])
        assert not [f for f in facts if "Lisbon in September" in f.text]
        history = memory.store.get("fact", NS, where={"superseded": True})
        assert [f.text for f in history] == ["Maya is moving to Lisbon in September for a new job."]


def test_a_change_said_outright_is_found_by_memory_even_when_the_model_flags_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the model confirms no pair; "Maya is moving to Porto, not Lisbon" is an update cue
    assert run(["demo", "--data-dir", str(tmp_path)], quick_model(flag=False)) == 0
    update = section(capsys.readouterr().out, 4)
    assert "the Judge (conflict check) and the Refresher" in update
    assert "called by the application" not in update
    with reopen(tmp_path) as memory:
        old = memory.store.get("fact", NS, where={"superseded": True})
        assert len(old) == 1 and isinstance(old[0], FactRecord) and "Lisbon" in old[0].text
        (new,) = memory.store.get("fact", NS, [old[0].superseded_by or ""])
        assert isinstance(new, FactRecord) and "Porto" in new.text
        assert old[0].valid_to == new.event_time()


def test_a_model_that_writes_no_fact_skips_the_update_and_still_finishes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # minimal replies: a title and a summary, no facts; the Judge finds nothing sufficient
    assert run(["demo", "--data-dir", str(tmp_path)], SchemaChatModel()) == 0
    out = capsys.readouterr().out
    assert "answer: (no answer in memory)" in section(out, 3)
    assert "the model wrote no fact to update, so this step is skipped" in section(out, 4)
    assert "memory.forget(subject='4711') deleted 1 raw" in section(out, 5)
    assert "done in" in out


def test_full_tour_builds_every_session_and_asks_three_questions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = SchemaChatModel()
    model.script(
        "ConstructionLines",
        "T|Biscuit\nS|Maya adopted Biscuit.\nF|t1|Maya|Maya adopted a greyhound named Biscuit.",
        "T|Pottery\nS|Maya took up pottery.\nF|t4|Maya|Maya takes a pottery class on Thursdays.",
        "T|Lisbon\nS|Maya is moving.\nF|t3|Maya|Maya is moving to Lisbon in September.",
    )
    assert run(["demo", "--full", "--data-dir", str(tmp_path)], model) == 0
    out = capsys.readouterr().out
    for session in ("session_1", "session_2", "session_3"):
        assert f"{session} consolidated: +1 episode(s), +1 fact(s)" in out
    assert "memory: 20 raw turns → 3 facts → 3 episodes" in out
    assert out.count("? ") == 3 and "? What is the name of Maya's dog?" in out
    assert "memory.forget(subject='pottery') deleted" in out
    assert "demo --full" not in out.split("done in")[1]  # no pointer to itself
    with reopen(tmp_path) as memory:
        assert not [r for r in memory.get_all(namespace=NS) if "pottery" in r.text.lower()]


def test_the_local_model_is_announced_and_its_load_time_shown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    class Server:
        startup_seconds: float | None = None

        def __init__(self, model: SchemaChatModel) -> None:
            self.model, self.starts, self.stops = model, 0, 0

        def start(self) -> Server:
            self.starts += 1
            self.startup_seconds = 42.5
            return self

        def stop(self) -> None:
            self.stops += 1

        def chat_model(self, **kwargs: Any) -> SchemaChatModel:
            return self.model

    servers: list[Server] = []

    def factory(config: MemoryConfig) -> Memory:
        def server_factory(_: MemoryConfig) -> Server:
            servers.append(Server(quick_model()))
            return servers[-1]

        return Memory(
            config=config, embeddings=FakeEmbeddings(), local_server_factory=server_factory
        )

    assert main(["demo", "--data-dir", str(tmp_path)], memory_factory=factory) == 0
    out = capsys.readouterr().out
    assert "chat model: the offline model (qwen), loaded at the first turn" in out
    assert "loading the offline model" in section(out, 2)
    assert "model ready in 42.5 s" in section(out, 2)
    assert [(s.starts, s.stops) for s in servers] == [(1, 1)]  # started once, stopped at the end


def test_a_missing_offline_model_says_how_to_install_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def not_installed(config: MemoryConfig) -> Any:
        raise LocalModelError("22 of the 22 Qwen model parts are missing")

    def factory(config: MemoryConfig) -> Memory:
        return Memory(
            config=config, embeddings=FakeEmbeddings(), local_server_factory=not_installed
        )

    assert main(["demo", "--data-dir", str(tmp_path)], memory_factory=factory) == 2
    err = capsys.readouterr().err
    assert "parts are missing" in err and "make model" in err and "--search-only" in err


def test_the_demo_refuses_a_namespace_that_already_holds_memories(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["demo", "--data-dir", str(tmp_path)], quick_model()) == 0
    capsys.readouterr()
    model = quick_model()
    assert run(["demo", "--data-dir", str(tmp_path)], model) == 2
    assert "already holds memories" in capsys.readouterr().err
    assert model.calls == []  # nothing was added or asked


def test_demo_rejects_a_non_positive_question_count(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = run(["demo", "--data-dir", str(tmp_path), "--questions", "0"], SchemaChatModel())
    assert status == 2
    assert "--questions must be a positive integer" in capsys.readouterr().err


def test_demo_gives_the_local_model_every_core_it_may_use_unless_told(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[int] = []

    def threads_factory(threads: int) -> Any:
        seen.append(threads)
        return lambda config: Memory(
            config=config, embeddings=FakeEmbeddings(), chat_model=SchemaChatModel()
        )

    monkeypatch.setattr("lamina.commands.demo.local_memory_factory", threads_factory)
    monkeypatch.setattr("os.cpu_count", lambda: 8)
    monkeypatch.setattr("os.sched_getaffinity", lambda pid: set(range(6)), raising=False)
    assert main(["demo", "--data-dir", str(tmp_path / "a")]) == 0
    assert main(["demo", "--data-dir", str(tmp_path / "b"), "--local-threads", "1"]) == 0
    assert seen == [6, 1]


def test_the_demos_memory_runs_the_offline_model_on_the_threads_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lamina.commands.demo import local_memory_factory

    built: list[dict[str, Any]] = []

    def server(config: MemoryConfig, **options: Any) -> Any:
        built.append(options)
        from lamina.testing import FakeLocalServer

        return FakeLocalServer(config=config)

    monkeypatch.setattr("lamina.memory.models.default_local_server", server)
    config = MemoryConfig(store="memory", data_dir=tmp_path)
    with local_memory_factory(3)(config) as memory:
        memory._models.get(start=False)
    assert built == [{"threads": 3}]


def test_search_only_needs_no_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = SchemaChatModel()
    assert run(["demo", "--search-only", "--data-dir", str(tmp_path)], model) == 0
    out = capsys.readouterr().out
    assert "stored 7 raw turns" in out and "? When did the bank approve Theo's loan?" in out
    assert model.calls == []


# ---------------------------------------------------------------------- progress
def test_progress_lines_carry_the_elapsed_time() -> None:
    now = [100.0]
    lines: list[str] = []

    class Out:
        def write(self, text: str) -> None:
            lines.append(text)

        def flush(self) -> None:
            pass

    progress = Progress(Out(), clock=lambda: now[0])  # type: ignore[arg-type]
    now[0] = 112.34
    progress.line("hello")
    progress.detail("more")
    assert "".join(lines).splitlines() == ["[  12.3s] hello", " " * 10 + "more"]


def test_waiting_prints_a_heartbeat_until_the_step_ends(
    capsys: pytest.CaptureFixture[str],
) -> None:
    progress = Progress(heartbeat=0.02)
    with progress.waiting("loading"):
        time.sleep(0.2)
    out = capsys.readouterr().out
    assert "loading..." in out
    beats = re.findall(r"\.\.\. loading: \d+ s", out)
    assert len(beats) >= 2
    time.sleep(0.1)  # the heartbeat thread is gone: nothing more is printed
    assert capsys.readouterr().out == ""
    assert not [t for t in threading.enumerate() if t.name == "lamina-demo-heartbeat"]


def test_the_heartbeat_can_use_a_shorter_label(capsys: pytest.CaptureFixture[str]) -> None:
    with Progress(heartbeat=0.02).waiting("a long description of the step", short="busy"):
        time.sleep(0.1)
    out = capsys.readouterr().out
    assert out.count("a long description") == 1 and re.search(r"\.\.\. busy: \d+ s", out)


def test_progress_refuses_a_non_positive_heartbeat() -> None:
    with pytest.raises(ValueError, match="heartbeat"):
        Progress(heartbeat=0)


# ------------------------------------------------------------------------ samples
def test_each_bundled_sample_has_a_tour_that_its_conversation_supports() -> None:
    for name in ("quick_conversation.json", "sample_conversation.json"):
        data = load_sample(name)
        tour = sample_tour(data)
        said = " ".join(text for s in data["sessions"] for _, text in s["turns"])
        assert tour.update.find in said and tour.forget.subject in said


def test_a_sample_without_a_tour_is_refused() -> None:
    data = load_sample(QUICK_SAMPLE)
    with pytest.raises(InvalidInputError, match="no 'tour'"):
        sample_tour({**data, "tour": None})
    with pytest.raises(InvalidInputError, match="lacks"):
        sample_tour({**data, "tour": {"update": {}}})
    broken = {"update": {**data["tour"]["update"], "text": " "}, "forget": data["tour"]["forget"]}
    with pytest.raises(InvalidInputError, match="empty 'text'"):
        sample_tour({**data, "tour": broken})
