"""Peers in ``lamina-bench eval``: own stages, kept replies, a failed search, a missing package."""

from __future__ import annotations

import importlib.util
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from lamina.errors import InvalidInputError
from lamina.testing import FakeEmbeddings
from lamina_bench.cli import build_parser
from lamina_bench.commands import eval as eval_command
from lamina_bench.evaluation import peers as peers_package
from lamina_bench.evaluation.assembly import needed_stages
from lamina_bench.evaluation.harness import EvalModels, run_evaluation
from lamina_bench.evaluation.peers import PeerSystem, peer_stage, require_peers
from lamina_bench.evaluation.peers.costs import CallLog
from lamina_bench.evaluation.prompts import NOT_MENTIONED
from lamina_bench.evaluation.records import Journal, ingests_of
from lamina_bench.evaluation.subset import Subset
from tests.evaluation.peer_doubles import (
    FakeEmbeddingsCounter,
    OpenAIStub,
    langmem_model,
    needs_langmem,
    needs_mem0,
    oracle_answerer,
    settings,
    stub_models,
)


def test_a_peer_search_that_raises_still_answers_and_says_so(subset: Subset) -> None:
    class Broken:
        log = CallLog("broken", "test")

        def add(self, conversation: str, turns: Any) -> int:
            return 0

        def search(self, conversation: str, query: str, k: int) -> list[Any]:
            raise ValueError("index gone")

    answerer, _ = oracle_answerer()
    system = PeerSystem("broken", "peer-broken", Broken(), answerer, FakeEmbeddingsCounter(), 5)
    (question,) = subset.questions["conv-p"]
    answer = system.answer(subset.conversations[0], question)
    assert answer.answer == NOT_MENTIONED and answer.used == [] and answer.context_tokens == 0
    assert answer.failures == 1 and answer.notes == ["broken search failed: ValueError"]


@needs_mem0
@pytest.mark.usefixtures("mem0_env")
def test_lamina_eval_runs_mem0_as_its_own_resumable_stage(
    data: Path, tmp_path: Path, stub: OpenAIStub
) -> None:
    models = stub_models(stub)
    run = run_evaluation(settings(data, tmp_path / "run", ["mem0"]), models, progress=False)

    (result,) = run.results
    assert result.system == "mem0" and result.answer == "Biscuit" and result.turn_recall == 1.0
    assert [(i.stage, i.batch) for i in run.ingests] == [("peer-mem0", 0), ("peer-mem0", 1)]
    (folder,) = (p for p in (tmp_path / "construction").iterdir() if p.is_dir())
    assert folder.name.startswith("peer-mem0-") and (folder / "mem0" / "chroma").is_dir()
    assert not (folder / "chroma").exists()  # lamina's own store is never opened there
    summary = json.loads((run.out / "results.json").read_text())
    assert summary["summary"]["construction"]["peer-mem0"]["llm_calls"] == 2
    assert summary["meta"]["peers"]["mem0"]["package"].startswith("mem0ai 2.")
    report = (run.out / "report.md").read_text()
    assert "- **peer packages**: mem0ai 2." in report
    assert "`mem0` (mem0ai 2." in report and "top-20 memories" in report
    assert "tokens / turn" in report

    calls = len(stub.extractions())
    again = run_evaluation(settings(data, tmp_path / "run2", ["mem0"]), models, progress=False)
    assert len(stub.extractions()) == calls  # the built memory is reused batch by batch
    assert [r.answer for r in again.results] == ["Biscuit"]
    assert len(ingests_of(Journal(run.out / "journal.jsonl").read())) == 2


def _committed(root: Path, there: Path, names: tuple[str, ...]) -> None:
    """Copy the named files of a construction folder, and LangMem's snapshot, to ``there``."""
    for path in root.rglob("*"):
        relative = path.relative_to(root)
        if path.is_file() and (relative.name in names or "langmem" in relative.parts[1:2]):
            (there / relative).parent.mkdir(parents=True, exist_ok=True)
            (there / relative).write_bytes(path.read_bytes())


@needs_mem0
@pytest.mark.usefixtures("mem0_env")
def test_mem0_memory_is_rebuilt_elsewhere_from_its_kept_replies(
    data: Path, tmp_path: Path, stub: OpenAIStub, monkeypatch: pytest.MonkeyPatch
) -> None:
    models = stub_models(stub)
    first = settings(data, tmp_path / "run", ["mem0"])
    run_evaluation(first, models, progress=False)
    calls = len(stub.extractions())
    assert calls == 2 and (tmp_path / "construction" / "openai-replies.jsonl").is_file()
    # another machine: only the journal and the kept replies came over, not mem0's store
    there = tmp_path / "elsewhere"
    _committed(tmp_path / "construction", there, ("ingest.jsonl", "openai-replies.jsonl"))
    again = replace(settings(data, tmp_path / "run2", ["mem0"]), construction_dir=there)
    rebuilt = run_evaluation(again, models, progress=False)
    assert len(stub.extractions()) == calls  # mem0 was answered from the kept replies
    # under a new key (a new adapter version, say) the same requests are answered from the
    # file again, and its batches say their seconds are not the model's
    monkeypatch.setattr(peers_package, "ADAPTER_VERSION", "next")
    newer = run_evaluation(replace(again, out=tmp_path / "run3"), models, progress=False)
    assert len(stub.extractions()) == calls
    assert [i.kept_replies for i in newer.ingests] == [1, 1]
    assert [r.answer for r in rebuilt.results] == ["Biscuit"]  # from the rebuilt store
    assert (next(there.glob("peer-mem0-*")) / "mem0" / "chroma").is_dir()


def test_a_kept_openai_reply_is_found_on_another_day_but_not_for_another_request() -> None:
    from lamina_bench.evaluation.peers.kept_openai import completion_key

    def asked(on: str, said: str = "moved on 2023-05-08") -> dict[str, Any]:
        return {"model": "qwen", "messages": [{"content": f"Today is {on}. {said}"}]}

    monday = completion_key(asked("2026-11-23"), "q", days=lambda: {"2026-11-23"})
    tuesday = completion_key(asked("2026-11-24"), "q", days=lambda: {"2026-11-24"})
    assert monday == tuesday  # mem0 writes the build day into its prompt
    other = asked("2026-11-24", said="moved on 2023-05-09")
    assert completion_key(other, "q", days=lambda: {"2026-11-24"}) != tuesday
    assert completion_key(asked("2026-11-24"), "other model", days=lambda: {"2026-11-24"}) != (
        tuesday
    )


@needs_langmem
def test_a_langmem_snapshot_copied_with_its_built_list_is_not_built_again(
    data: Path, tmp_path: Path
) -> None:
    models = EvalModels(chat_model=langmem_model(), embeddings=FakeEmbeddings(), model_name="f")
    run_evaluation(settings(data, tmp_path / "run", ["langmem"]), models, progress=False)
    there = tmp_path / "elsewhere"
    _committed(tmp_path / "construction", there, ("ingest.jsonl", "built.jsonl"))
    model = langmem_model()
    again = replace(settings(data, tmp_path / "run2", ["langmem"]), construction_dir=there)
    moved = EvalModels(chat_model=model, embeddings=FakeEmbeddings(), model_name="f")
    (result,) = run_evaluation(again, moved, progress=False).results
    assert len(model.calls) == 1 and result.answer == "Biscuit"  # the answer; nothing built


@needs_langmem
def test_lamina_eval_runs_langmem_as_its_own_stage(data: Path, tmp_path: Path) -> None:
    model = langmem_model()
    models = EvalModels(chat_model=model, embeddings=FakeEmbeddings(), model_name="fake")
    run = run_evaluation(settings(data, tmp_path / "run", ["langmem"]), models, progress=False)
    (result,) = run.results
    assert result.system == "langmem" and result.answer == "Biscuit"
    assert result.turn_recall == 1.0 and result.answering["eval_answer"].calls == 1
    assert {i.stage for i in run.ingests} == {"peer-langmem"}
    report = (run.out / "report.md").read_text()
    assert "- **peer packages**: langmem 0." in report and "top-10 memories" in report


def test_peers_have_their_own_stages() -> None:
    base = settings(Path("x.json"), Path("out"), ["mem0", "langmem", "flat", "graphiti", "mem0"])
    assert needed_stages(base) == ["peer-mem0", "peer-langmem", "raw", "peer-graphiti"]
    assert peer_stage("mem0") == "peer-mem0"


def test_a_missing_peer_package_is_refused_before_any_model(
    data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = importlib.util.find_spec

    def find_spec(name: str, *args: Any) -> Any:
        return None if name in ("mem0", "langmem") else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)

    def no_models(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("models were built before the peers were checked")

    monkeypatch.setattr(eval_command, "build_models", no_models)
    argv = ["eval", "--data", str(data), "--systems", "flat", "mem0", "--out", str(tmp_path)]
    args = build_parser().parse_args(argv)
    with pytest.raises(
        InvalidInputError, match=r"mem0 needs mem0ai.*pip install '\./bench\[peers\]'"
    ):
        eval_command.run_eval(args)
    with pytest.raises(InvalidInputError, match="langmem needs langmem"):
        require_peers(["langmem"])
    with pytest.raises(InvalidInputError, match="pip install './bench"):
        settings(data, tmp_path / "out", ["mem0"]).validate()
    require_peers(["flat", "lamina"])  # no peer: nothing to check
