"""The construction's kept replies: a LangChain cache in a committed JSONL file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain_core.load import dumps
from langchain_core.messages import AIMessage, HumanMessage

from lamina.testing import FakeChatModel
from lamina_bench.evaluation.kept_replies import seal, unseal
from lamina_bench.evaluation.reply_cache import ReplyFile, replaying, request_key, request_secret


def _settings(**kwargs: object) -> str:
    head = {"id": ["x"], "kwargs": {"model_name": "qwen", "temperature": 0.0, **kwargs}, "lc": 1}
    return json.dumps(head) + "---[('stop', None)]"


def test_the_key_ignores_where_the_model_is_served_but_not_how_it_answers() -> None:
    here = request_key("p", _settings(openai_api_base="http://127.0.0.1:8090/v1"))
    there = request_key("p", _settings(openai_api_base="http://127.0.0.1:40111/v1"))
    assert here == there
    assert request_key("p", _settings(temperature=0.7)) != here
    assert request_key("q", _settings(openai_api_base="http://127.0.0.1:8090/v1")) != here
    assert request_key("p", "not json---x") != request_key("p", "not json---y")


def test_a_kept_reply_answers_a_later_process_without_calling_the_model(tmp_path: Path) -> None:
    path = tmp_path / "replies.jsonl"
    usage = {"input_tokens": 12, "output_tokens": 3, "total_tokens": 15}
    first = FakeChatModel().enqueue(AIMessage("F|t1|Ana|Ana moved.", usage_metadata=usage))
    built = replaying(first, ReplyFile(path))
    assert built.invoke([HumanMessage("turns")]).content == "F|t1|Ana|Ana moved."
    assert len(first.calls) == 1
    assert first.cache is None  # the original (the answering model) keeps no cache

    later = FakeChatModel(when_empty="the model was asked")
    kept = ReplyFile(path)
    again = replaying(later, kept).invoke([HumanMessage("turns")])
    assert again.content == "F|t1|Ana|Ana moved."
    assert isinstance(again, AIMessage) and again.usage_metadata is not None
    assert again.usage_metadata["output_tokens"] == 3  # the first build's usage
    assert later.calls == [] and (kept.hits, kept.misses) == (1, 0)
    assert "turns" not in path.read_text()  # no prompt text is kept
    assert "Ana" not in path.read_text()  # and the reply is sealed

    other = FakeChatModel().enqueue("S|other")
    assert replaying(other, kept).invoke([HumanMessage("new turns")]).content == "S|other"
    assert len(other.calls) == 1 and kept.misses == 1 and len(ReplyFile(path)) == 2


def test_a_line_cut_short_is_skipped_and_asked_again(tmp_path: Path) -> None:
    path = tmp_path / "replies.jsonl"
    replaying(FakeChatModel().enqueue("one"), ReplyFile(path)).invoke("a")
    replaying(FakeChatModel().enqueue("two"), ReplyFile(path)).invoke("b")
    lines = path.read_text().splitlines()
    path.write_text(lines[0] + "\n" + lines[1][:40])  # the process died mid-write
    kept = ReplyFile(path)
    assert (len(kept), kept.unreadable) == (1, 1)
    model = FakeChatModel().enqueue("two again")
    assert replaying(model, kept).invoke("b").content == "two again"
    assert replaying(model, kept).invoke("a").content == "one"
    reread = ReplyFile(path)  # the new line did not join the cut one
    assert (len(reread), reread.unreadable) == (2, 1)
    kept.clear()
    assert len(kept) == 0 and not path.exists()


def test_a_sealed_reply_opens_only_with_its_requests_secret() -> None:
    sealed = seal({"text": "Ana moved to Porto"}, b"secret")
    assert "Porto" not in sealed and unseal(sealed, b"secret") == {"text": "Ana moved to Porto"}
    assert seal({"text": "x"}, b"secret") != seal({"text": "x"}, b"secret")  # a fresh nonce
    with pytest.raises(ValueError):
        unseal(sealed, b"another secret")


def _secret_of(question: str) -> bytes:
    """The secret of the request ``FakeChatModel().invoke(question)`` makes."""
    prompt = dumps([HumanMessage(question)])
    return request_secret(prompt, FakeChatModel()._get_llm_string(stop=None))


def test_plain_lines_of_an_older_file_are_sealed_as_they_are_used(tmp_path: Path) -> None:
    path = tmp_path / "replies.jsonl"
    replaying(FakeChatModel().enqueue("used"), ReplyFile(path)).invoke("a")
    replaying(FakeChatModel().enqueue("unused"), ReplyFile(path)).invoke("b")
    plain = [json.loads(line) for line in path.read_text().splitlines()]
    for entry, question in zip(plain, ("a", "b"), strict=True):  # as older code wrote it
        entry["generations"] = unseal(entry.pop("sealed"), _secret_of(question))
    path.write_text("".join(json.dumps(e) + "\n" for e in plain))
    kept = ReplyFile(path)
    assert (len(kept), kept.kept.plain) == (2, 2)
    model = FakeChatModel(when_empty="the model was asked")
    assert replaying(model, kept).invoke("a").content == "used"
    assert kept.kept.plain == 1 and kept.kept.drop_plain() == 1
    again = ReplyFile(path)
    assert (len(again), again.kept.plain) == (1, 0) and "used" not in path.read_text()
    assert replaying(model, again).invoke("a").content == "used"
